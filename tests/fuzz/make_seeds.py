#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/<target>/ and the dictionaries tests/fuzz/<target>.dict from the
repository's own inputs and test data (run from anywhere; needs the gzip and zstd commands). Seeds are small
real examples; regression inputs found by fuzzing are added to the same folders by hand, named crash-*,
timeout-* or oom-*, and are kept when this script runs again."""
import gzip
import json
import pathlib
import re
import shutil
import struct
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "fuzz"
SEP = b"\n=====\n"  # vocab_merges: between the vocabulary and the merges (tests/fuzz/vocab_merges.cpp)


def fnv(data, h=0xCBF29CE484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def mix64(x):  # src/data/permutation.hpp
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def hash_bytes(data):
    return mix64(fnv(data))


def seeds(target, files):
    folder = FUZZ / target
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        if not old.name.startswith(("crash-", "timeout-", "oom-", "leak-", "slow-")):
            old.unlink()
    for name, data in files.items():
        (folder / name).write_bytes(data)


def dictionary(target, words):
    lines = ['"' + "".join(chr(b) if 32 <= b < 127 and b not in b'"\\' else "\\x%02x" % b for b in w) + '"'
             for w in words]
    (FUZZ / f"{target}.dict").write_text(f"# libFuzzer dictionary of {target}: written by make_seeds.py\n"
                                         + "\n".join(lines) + "\n")


def config():
    files = {p.name: p.read_bytes() for p in sorted((ROOT / "inputs").glob("*.toml"))}
    files["simulate.toml"] = (ROOT / "tests/data/simulate.toml").read_bytes()
    seeds("config", files)
    reference = (ROOT / "docs/config.md").read_text()
    sections = sorted(set(re.findall(r"^## `?\[+([a-z_.]+)\]+", reference, re.M)))
    keys = sorted(set(re.findall(r"^\| `([a-z_0-9]+)` \|", reference, re.M)))
    words = [f"[{s}]".encode() for s in sections] + [f"[[{s}]]".encode() for s in ("data.datasets", "data.eval_datasets")]
    words += [k.encode() + b" = " for k in keys]
    words += [b"true", b"false", b"\"\"\"", b"'''", b"inf", b"nan", b"1e308", b"9223372036854775807", b"{", b"}", b"[", b"]"]
    dictionary("config", words)


def tokenizer_json():
    cases = json.loads((ROOT / "tests/tokenizer/data/component_cases.json").read_text())
    seeds("tokenizer_json", {f"{c['name']}.json": json.dumps(c["tokenizer"]).encode() for c in cases})
    words = set()
    for c in cases:
        text = json.dumps(c["tokenizer"])
        words.update(re.findall(r'"type": "([A-Za-z]+)"', text))
        words.update(re.findall(r'"([a-z_]+)": ', text))
    dictionary("tokenizer_json", sorted(f'"{w}"'.encode() for w in words))


def small_gpt2():
    """The 256 byte tokens of GPT-2 and its first merges whose result is in the vocabulary."""
    def unzstd(name):
        return subprocess.run(["zstd", "-dc", str(ROOT / "tests/tokenizer/data" / name)], check=True,
                              capture_output=True).stdout
    encoder = json.loads(unzstd("gpt2_encoder.json.zst"))
    merges = unzstd("gpt2_vocab.bpe.zst").decode().splitlines()
    vocab = {t: i for t, i in encoder.items() if i < 256}
    kept = [merges[0]]  # the "#version" line
    for line in merges[1:400]:
        a, b = line.split(" ")
        if a in vocab and b in vocab and a + b in encoder:
            vocab[a + b] = encoder[a + b]
            kept.append(line)
    vocab["<|endoftext|>"] = encoder["<|endoftext|>"]
    return json.dumps(vocab, ensure_ascii=False).encode(), ("\n".join(kept) + "\n").encode()


def vocab_merges():
    vocab, merges = small_gpt2()
    seeds("vocab_merges", {"vocab_merges": b"v" + vocab + SEP + merges,
                           "encoder_bpe": b"e" + vocab + SEP + merges,
                           "crlf": b"v" + vocab + SEP + merges.replace(b"\n", b"\r\n")})
    dictionary("vocab_merges", [SEP, b"#version: 0.2", b"<|endoftext|>", b"\\u0120", b"\r\n", b"\": "])


def records():
    corpus = ROOT / "tests/data/corpus"
    gpl = (corpus / "gpl-3.jsonl").read_bytes().splitlines(keepends=True)
    lines = b"".join(gpl[:6])
    texts = sorted((corpus / "text").glob("*.txt"))
    unzstd = subprocess.run(["zstd", "-dc", str(corpus / "mpl-2.0.jsonl.zst")], check=True, capture_output=True).stdout
    zst_small = subprocess.run(["zstd", "-19", "-c"], input=b"".join(unzstd.splitlines(True)[:4]), check=True,
                               capture_output=True).stdout
    seeds("records", {
        "jsonl": b"j" + lines,
        "jsonl_crlf_blank": b"j" + b"\n \t\n".join(l.rstrip(b"\n") + b"\r" for l in gpl[6:10]) + b"\n",
        "jsonl_bad_records": b"j" + b'{"text": 1}\n[1,2]\n{"id": 3}\n{"text": "ok\\u00e9"}\n{"text": "\xff"}\nnot json',
        "gz": b"g" + gzip.compress(b"".join(gpl[10:14]), mtime=0),
        "gz_corpus": b"g" + (corpus / "apache-2.0.jsonl.gz").read_bytes(),
        "zst": b"z" + zst_small,
        "txt": b"t" + texts[0].read_bytes()[:2048],
    })
    dictionary("records", [b'{"text": "', b'"}', b"\\u", b"\\ud83d\\ude00", b"\r\n", b"\x1f\x8b\x08", b"\x28\xb5\x2f\xfd"])


def ltok_file(docs, dtype_bytes, vocab=50257, fingerprint=0):
    tokens = b"".join(struct.pack("<%d%s" % (len(d), "H" if dtype_bytes == 2 else "I"), *d) for d in docs)
    offsets = [0]
    for d in docs:
        offsets.append(offsets[-1] + len(d))
    body = tokens + struct.pack("<%dQ" % len(offsets), *offsets)
    head = b"LLMTOKS\0" + struct.pack("<IIQQQQQ", 1, dtype_bytes, vocab, len(docs), offsets[-1], fingerprint, fnv(body))
    return head + struct.pack("<Q", hash_bytes(head)) + body


def ltok():
    docs = [[464, 3139, 2276, 5094, 13789], [15269], [], [50256, 0, 1, 2, 3, 4, 5, 6, 7]]
    seeds("ltok", {"uint16": ltok_file(docs, 2), "uint32": ltok_file(docs, 4, vocab=100000),
                   "no_documents": ltok_file([], 2), "one_empty": ltok_file([[]], 2)})
    dictionary("ltok", [b"LLMTOKS\0", b"\x01\x00\x00\x00", b"\x02\x00\x00\x00", b"\x04\x00\x00\x00"])


def state_blob(datasets, ready, window, queue):
    def section(tag, body):
        return tag + struct.pack("<Q", len(body)) + body

    def span(s):
        return struct.pack("<IIQIII", *s)

    def rows(list_):
        return struct.pack("<Q", len(list_)) + b"".join(struct.pack("<Q", len(r)) + b"".join(map(span, r)) for r in list_)

    out = b"LLMTDATA" + struct.pack("<I", 1)
    out += section(b"HEAD", struct.pack("<9Qqq", 2, 3, 64, 7, 16, 8, 4096, 0x1234ABCD, 5, 50256, 50256))
    for name, weight, cursors in datasets:
        body = struct.pack("<Q", len(name)) + name + struct.pack("<d6Q", weight, 4, 70000, 900, 12, 30, 1)
        body += struct.pack("<Q", len(cursors)) + b"".join(struct.pack("<IIQQQ", *c) for c in cursors)
        out += section(b"DSET", body)
    out += section(b"REDY", rows(ready)) + section(b"ROWS", rows(window))
    out += section(b"QUEU", struct.pack("<Q", len(queue)) + b"".join(map(span, queue)))
    return out + struct.pack("<Q", hash_bytes(out))


def state():
    datasets = [(b"licenses", 0.7, [(2, 0, 3, 1, 0xDEADBEEF), (5, 1, 0, 0, 0xFEEDF00D)]),
                (b"license-texts", 0.3, [(2, 0, 0, 0, 0xC0FFEE)])]
    window = [[(0, 1, 4096, 0, 0, 40), (1, 0, 0, 0, 10, 35)], [(0, 2, 77, 1, 3, 68)]]
    queue = [(1, 2, 0, 0, 35, 400)]
    seeds("state", {"two_datasets": state_blob(datasets, [window[1]], window, queue),
                    "empty": state_blob([], [], [], [])})
    dictionary("state", [b"LLMTDATA", b"HEAD", b"DSET", b"REDY", b"ROWS", b"QUEU", b"\xff\xff\xff\xff\xff\xff\xff\xff"])


def tokenizer_encode():
    gpl = (ROOT / "tests/data/corpus/gpl-3.jsonl").read_text().splitlines()
    texts = [json.loads(line)["text"] for line in gpl[:3]]
    texts += ["caf\u00e9 e\u0301 \U0001F999 <|endoftext|> <s> </s>", "  \t\r\n  x", "I'm 2024's \u4e2d\u6587 \uFB01",
              "\u0130stanbul \u00df \u212B \u1E9B\u0323"]
    files = {f"text{i}": t.encode() for i, t in enumerate(texts)}
    files["invalid_utf8"] = b"ab\xff\xc3(\xe2\x82 \xf0\x9f\x98"
    seeds("tokenizer_encode", files)


if __name__ == "__main__":
    for make in (config, tokenizer_json, vocab_merges, records, ltok, state, tokenizer_encode):
        make()
