#!/usr/bin/env python3
"""Builds the differential test corpus and its Hugging Face reference ids.

Writes, under tests/tokenizer/data/:
  corpus.bin.zst      the documents: for each, a line "#doc <n>\n" then n bytes (raw, any content)
  corpus_ref.tsv      per document: index, then for gpt2, llama3, mistral: "<count>:<fnv1a64 of ids>"
                      (ids as little-endian int32), then for the same three "<bytes>:<fnv1a64>" of HF's
                      decode(ids, skip_special_tokens=False); computed with the PyPI `tokenizers` package
  tokenizer files     zstd copies of the GPT-2 and Mistral files the tests load, with their licences

Text comes from Debian packages (fortunes, jargon-text, bible-kjv, python3.11-doc, the gettext catalogs of
/usr/share/locale in ~190 languages, C headers, the Python standard library) plus synthesized stress text
(white space runs, CRLF, digits, emoji sequences, contractions, rare white space, long repeats) and a few
invalid UTF-8 documents (reference: HF on bytes.decode("utf-8", "replace"), our documented behaviour).
Deterministic for a given machine; the committed output is what the C++ test uses, so it needs no Python.

Setup: apt-get install fortunes jargon-text bible-kjv python3.11-doc gettext zstd; pip install tokenizers
Run:   python3 tests/tokenizer/make_corpus.py [--shared ../shared]
"""
import argparse
import glob
import gzip
import os
import random
import shutil
import struct
import subprocess
import sys

from tokenizers import Tokenizer, decoders, pre_tokenizers
from tokenizers.models import BPE

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data")
TARGET_BYTES = 10_600_000


def chunks(text, rng, lo=2000, hi=16000):
    """Cuts text into documents of lo..hi characters, at line boundaries when possible."""
    i = 0
    while i < len(text):
        n = rng.randint(lo, hi)
        j = text.rfind("\n", i + n // 2, i + n)
        j = i + n if j < 0 else j + 1
        yield text[i:j]
        i = j


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def take(texts, budget, rng):
    docs, used = [], 0
    for t in texts:
        for d in chunks(t, rng):
            if used >= budget:
                return docs
            docs.append(d)
            used += len(d.encode())
    return docs


def sources(rng):
    prose = []
    prose += [read(p) for p in sorted(glob.glob("/usr/share/games/fortunes/*.u8"))]
    prose.append(read("/usr/share/doc/jargon-text/jargon.txt.gz"))
    prose.append(subprocess.run(["bible", "gen1:1-rev22:21"], capture_output=True, text=True).stdout)
    docs = take(prose, 4_000_000, rng)
    rst = [read(p) for p in sorted(glob.glob("/usr/share/doc/python3.11/html/_sources/**/*.txt", recursive=True))]
    docs += take(rst, 1_600_000, rng)
    stdlib = os.path.dirname(os.__file__)
    docs += take([read(p) for p in sorted(glob.glob(stdlib + "/*.py"))], 1_000_000, rng)
    docs += take([read(p) for p in sorted(glob.glob("/usr/include/*.h"))], 600_000, rng)
    # gettext catalogs: up to 16 kB of translated messages per language, ~190 languages and many scripts
    langs = []
    for lang in sorted(os.listdir("/usr/share/locale")):
        text = ""
        for mo in sorted(glob.glob(f"/usr/share/locale/{lang}/LC_MESSAGES/*.mo")):
            r = subprocess.run(["msgunfmt", mo], capture_output=True)
            text += r.stdout.decode("utf-8", "replace")
            if len(text) > 16000:
                break
        if text:
            langs.append(text[:16000])
    docs += take(langs, 2_600_000, rng)
    return docs


def synthesized(rng):
    ws = [" ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2003", "\u0085", "\u2028", "\x0b", "\x0c"]
    words = ["Hello", "world", "ſtate", "I'm", "THEY'LL", "We'Ve", "don't", "'s", "x'd", "naïve", "Ünïcödé",
             "日本語のテキスト", "नमस्ते", "مرحبا", "שלום", "Привет", "καλημέρα", "ＦＵＬＬ", "e\u0301", "ﬁ"]
    emoji = ["🦙", "😶‍🌫️", "👩‍👩‍👧‍👦", "🇫🇷", "👍🏽", "✅", "🚀", "❤️", "🏳️‍🌈", "🧑🏿‍🚀"]
    docs = []
    for _ in range(400):
        parts = []
        for _ in range(rng.randint(20, 400)):
            r = rng.random()
            if r < 0.3:
                parts.append(rng.choice(words))
            elif r < 0.5:
                parts.append("".join(rng.choice(ws) for _ in range(rng.randint(1, 40))))
            elif r < 0.65:
                parts.append(str(rng.randint(0, 10 ** rng.randint(1, 25))))
            elif r < 0.8:
                parts.append("".join(rng.choice(emoji) for _ in range(rng.randint(1, 6))))
            else:
                parts.append("".join(chr(rng.choice([rng.randint(0x21, 0x7e), rng.randint(0xa0, 0x2fff),
                                                     rng.randint(0x1f300, 0x1faff)])) for _ in range(rng.randint(1, 12))))
        docs.append("".join(parts))
    docs += ["a" * 20000, " " * 5000 + "x", "\n" * 3000, "1" * 9999, "ab" * 8000, "\r\n" * 2000 + "end"]
    return docs


def invalid_utf8(rng):
    bad = [b"\xff", b"\xc0\xaf", b"\xe0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80\x80"]
    docs = []
    for _ in range(20):
        b = b""
        for _ in range(rng.randint(5, 40)):
            b += rng.choice([b"text ", "ü ".encode(), "🦙".encode(), rng.choice(bad)])
        docs.append(b)
    return docs


def fnv1a(ids):
    return fnv1a_bytes(struct.pack(f"<{len(ids)}i", *ids))


def fnv1a_bytes(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def gpt2_from_pair(d):
    """HF's GPT-2 pipeline around encoder.json + vocab.bpe (what its tokenizer.json says)."""
    tok = Tokenizer(BPE.from_file(os.path.join(d, "encoder.json"), os.path.join(d, "vocab.bpe")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|endoftext|>"])
    return tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(HERE, "../../../shared"))
    args = ap.parse_args()
    tdir = os.path.join(args.shared, "data/tokenizers")
    rng = random.Random(20261121)
    docs = [d.encode() for d in sources(rng) + synthesized(rng)] + invalid_utf8(rng)
    total = sum(map(len, docs))
    print(f"{len(docs)} documents, {total} bytes", file=sys.stderr)
    assert total >= 10_000_000
    os.makedirs(OUT, exist_ok=True)
    blob = b"".join(b"#doc %d\n" % len(d) + d for d in docs)
    subprocess.run(["zstd", "-19", "-q", "-f", "-o", os.path.join(OUT, "corpus.bin.zst")], input=blob, check=True)
    toks = {"gpt2": gpt2_from_pair(os.path.join(tdir, "gpt2")),
            "llama3": Tokenizer.from_file(os.path.join(tdir, "llama3/tokenizer.json")),
            "mistral": Tokenizer.from_file(os.path.join(tdir, "mistral/tokenizer.json"))}
    texts = [d.decode("utf-8", "replace") for d in docs]
    columns = {}
    for name, tok in toks.items():
        encs = tok.encode_batch(texts, add_special_tokens=False)
        columns[name] = [f"{len(e.ids)}:{fnv1a(e.ids):016x}" for e in encs]
        decoded = [tok.decode(e.ids, skip_special_tokens=False) for e in encs]
        columns[name + "_decode"] = [f"{len(d.encode())}:{fnv1a_bytes(d.encode()):016x}" for d in decoded]
        trips = sum(d == t for d, t in zip(decoded, texts))
        print(f"{name}: HF round trip holds for {trips}/{len(texts)} documents", file=sys.stderr)
    with open(os.path.join(OUT, "corpus_ref.tsv"), "w") as f:
        f.write("# doc\tgpt2\tllama3\tmistral\tgpt2_decode\tllama3_decode\tmistral_decode   (ids: count:fnv1a64 of "
                "int32 LE ids; decode: bytes:fnv1a64 of the text; HF tokenizers "
                f"{__import__('tokenizers').__version__}, add_special_tokens=False)\n")
        for i in range(len(docs)):
            f.write(f"{i}\t" + "\t".join(columns[n][i] for n in list(toks) + [t + "_decode" for t in toks]) + "\n")
    # Tokenizer files with licences that allow redistribution (GPT-2: MIT; Mistral: Apache-2.0). Llama-3's
    # file is not copied: its licence requires shipping the licence text, which we do not have; the tests
    # read it from the shared data folder (see docs/tokenizer.md).
    for rel in ["gpt2/encoder.json", "gpt2/vocab.bpe", "mistral/tokenizer.json"]:
        dst = os.path.join(OUT, rel.replace("/", "_") + ".zst")
        subprocess.run(["zstd", "-19", "-q", "-f", os.path.join(tdir, rel), "-o", dst], check=True)
    shutil.copyfile(os.path.join(tdir, "gpt2/LICENSE"), os.path.join(OUT, "gpt2_LICENSE"))
    shutil.copyfile("/usr/share/common-licenses/Apache-2.0", os.path.join(OUT, "mistral_LICENSE"))

if __name__ == "__main__":
    main()
