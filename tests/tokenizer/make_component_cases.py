#!/usr/bin/env python3
"""Reference cases for each supported tokenizer.json component, from the PyPI `tokenizers` package.

Trains two small BPE models (byte-level, and character-level with "<0xXX>" byte fallback), then swaps in
pre-tokenizers, normalizers, added tokens, post-processors and decoders one variant at a time and records
HF's ids (without and with special tokens) and decoded text for a fixed set of inputs.
Writes tests/tokenizer/data/component_cases.json. Run: python3 tests/tokenizer/make_component_cases.py
"""
import json
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = ["The quick brown fox jumps over the lazy dog 12345 times, doesn't it?",
         "Ünïcödé wörds: naïve café, 日本語 テキスト, Привет мир!", "  indented\tcode() { return 42; }\r\n"] * 50
INPUTS = ["", " ", "Hello world", "  leading and trailing  ", "The fox's 1234567 jumps!!", "tab\tand\r\nCRLF\n\n",
          "naïve café Ünï 日本語", "🦙 llama <s> and [EOS] here", "x<s>y [EOS]z", "a,b,,c", "don't WE'LL ſtop",
          "\u00a0nbsp\u3000ideo\u0085nel", "digits ٣٤٥ and ½ ⅓", "[EOS]", "word[EOS] [EOS]word",
          "e\u0301 \u00e9 A\u030a \u212b \ufb01x ²³ ｆｕｌｌ q\u0307\u0323 \u1e0b\u0323 a\u0328\u0301\u0323",
          "\u1100\u1161\u11a8 \uac01 \u1100\u1161 \uac00\u11a8 \u0344 \u0f73 \u2126 \u00c5\u0301 \u0958"]
O200K = ("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


def byte_level_base():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(TRAIN, trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                       show_progress=False))
    return json.loads(tok.to_str())


def char_level_base():
    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.train_from_iterator(TRAIN, trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"],
                                                       show_progress=False))
    j = json.loads(tok.to_str())
    vocab = j["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    return j


def split(pattern, behavior, invert=False):
    return {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}


BYTE_LEVEL_NOREGEX = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}


def variants():
    bl, cl = byte_level_base(), char_level_base()
    out = []

    def add(name, base, **changes):
        j = json.loads(json.dumps(base))
        j.update(changes)
        out.append((name, j))

    add("byte_level_regex", bl)
    add("byte_level_prefix_space", bl, pre_tokenizer={"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True})
    for behavior in ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]:
        for invert in [False, True]:
            add(f"split_regex_{behavior}_{invert}", bl, pre_tokenizer={"type": "Sequence", "pretokenizers": [
                split({"Regex": "\\s+|\\d"}, behavior, invert), BYTE_LEVEL_NOREGEX]})
    for form in ["NFC", "NFKC", "NFD", "NFKD"]:
        add(f"normalizer_{form}", bl, normalizer={"type": form})
    add("split_string", bl, pre_tokenizer={"type": "Sequence", "pretokenizers": [
        split({"String": ","}, "MergedWithPrevious"), BYTE_LEVEL_NOREGEX]})
    add("split_o200k_pcre2", bl, pre_tokenizer={"type": "Sequence", "pretokenizers": [
        split({"Regex": O200K}, "Isolated"), BYTE_LEVEL_NOREGEX]})
    for individual in [False, True]:
        add(f"digits_{individual}", bl, pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": individual}, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                                                 "use_regex": True}]})
    n = len(bl["model"]["vocab"])  # added tokens take the next ids, as HF assigns them
    added = [{"id": n, "content": "[EOS]", "single_word": False, "lstrip": True, "rstrip": True,
              "normalized": False, "special": True},
             {"id": n + 1, "content": "<s>", "single_word": True, "lstrip": False, "rstrip": False,
              "normalized": True, "special": False}]
    template = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": "[EOS]", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"<s>": {"id": "<s>", "ids": [n + 1], "tokens": ["<s>"]},
                                   "[EOS]": {"id": "[EOS]", "ids": [n], "tokens": ["[EOS]"]}}}
    add("added_tokens_template", bl, added_tokens=added, post_processor=template)
    for scheme in ["always", "first", "never"]:
        for do_split in [True, False]:
            add(f"metaspace_{scheme}_{do_split}", cl,
                pre_tokenizer={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": do_split},
                decoder={"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": do_split})
    sp_decoder = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    add("sentencepiece_normalizers", cl, pre_tokenizer=None, decoder=sp_decoder, normalizer={
        "type": "Sequence", "normalizers": [{"type": "Strip", "strip_left": False, "strip_right": True},
                                            {"type": "Prepend", "prepend": "\u2581"},
                                            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]})
    cl_added = [{"id": 1, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True},
                {"id": len(cl["model"]["vocab"]), "content": "[EOS]", "single_word": False, "lstrip": False,
                 "rstrip": False, "normalized": True, "special": False}]
    add("sentencepiece_added_normalized", cl, pre_tokenizer=None, decoder=sp_decoder, added_tokens=cl_added,
        normalizer={"type": "Replace", "pattern": {"Regex": " +"}, "content": "\u2581"})
    return out


def main():
    cases = []
    for name, j in variants():
        tok = Tokenizer.from_str(json.dumps(j))
        results = []
        for text in INPUTS:
            ids = tok.encode(text, add_special_tokens=False).ids
            special = tok.encode(text, add_special_tokens=True).ids
            results.append({"text": text, "ids": ids, "with_special": special,
                            "decoded": tok.decode(ids, skip_special_tokens=False)})
        cases.append({"name": name, "tokenizer": j, "results": results})
    with open(os.path.join(HERE, "data/component_cases.json"), "w") as f:
        json.dump(cases, f, ensure_ascii=False, separators=(",", ":"))


if __name__ == "__main__":
    main()
