#!/usr/bin/env python3
"""Side-by-side single-core encoding throughput: llmtrain vs Hugging Face `tokenizers` vs `tiktoken`.

Same text for all (the differential test corpus: prose = its first 3.9 MB, code = bytes 5.65-7.15 MB, as
perf/tokenizer_bench.cpp slices it), same core (the process and our benchmark are pinned to one CPU, and
HF runs with RAYON_NUM_THREADS=1). The peers are measurement tools from PyPI, not dependencies:
    pip install tokenizers tiktoken
    python3 perf/tokenizer_peers.py [--build build] [--shared ../shared] [--cpu 0]
Each figure is the best of --repeat runs over the whole text, in CPU time of the process (like Google
Benchmark's default), so other load on a shared machine does not distort the ratio. HF and tiktoken keep
their state between runs (HF's word cache warms up like ours), so compare with our "warm" column.

--multilingual DIR (the per-script files of perf/multilingual_corpus.py) prints instead one row per script
and tokenizer: each tokenizer freshly made, its first pass over the script's text ("cold") and its second
("warm"), in CPU time; ours from a fresh process (`llmtrain-tokenize --bench --passes 2`, CPU time of the
encoding thread), --repeat times, best and worst. --scripts a,b limits it to some scripts (so that a shared
benchmark lock can be taken per script); --baseline BIN adds the cold figures of another llmtrain-tokenize
(e.g. a build of the previous commit), measured the same way in the same run.
"""
import argparse
import json
import os
import subprocess
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import tiktoken  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402
from tokenizers import decoders, pre_tokenizers  # noqa: E402
from tokenizers.models import BPE  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def corpus_slices():
    blob = subprocess.run(["zstd", "-dc", os.path.join(ROOT, "tests/tokenizer/data/corpus.bin.zst")],
                          capture_output=True, check=True).stdout
    docs, pos = [], 0
    while pos < len(blob):
        eol = blob.index(b"\n", pos)
        n = int(blob[pos + 5:eol])
        docs.append(blob[eol + 1:eol + 1 + n])
        pos = eol + 1 + n
    prose, code, offset = [], [], 0
    for d in docs:
        if offset < 3_900_000:
            prose.append(d)
        elif 5_650_000 <= offset < 7_150_000:
            code.append(d)
        offset += len(d)
    # Python strings for the peers (the slices are valid UTF-8)
    return {"prose": [d.decode() for d in prose], "code": [d.decode() for d in code]}


def byte_alphabet():
    """GPT-2's byte-level alphabet: printable character -> the byte it stands for."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def byte_level_ranks(vocab):
    """tiktoken ranks (token bytes -> id) from a byte-level vocabulary, via GPT-2's byte alphabet."""
    char_to_byte = byte_alphabet()
    return {bytes(char_to_byte[ch] for ch in tok): i for tok, i in vocab.items() if all(ch in char_to_byte for ch in tok)}


def hf_gpt2(tdir):
    gpt2 = Tokenizer(BPE.from_file(os.path.join(tdir, "gpt2/encoder.json"), os.path.join(tdir, "gpt2/vocab.bpe")))
    gpt2.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    gpt2.decoder = decoders.ByteLevel()
    return gpt2


def peers(shared):
    tdir = os.path.join(shared, "data/tokenizers")
    gpt2 = hf_gpt2(tdir)
    with open(os.path.join(tdir, "gpt2/encoder.json")) as f:
        gpt2_vocab = json.load(f)
    out = {"gpt2": (gpt2, tiktoken.Encoding("gpt2", pat_str=GPT2_PATTERN, mergeable_ranks=byte_level_ranks(gpt2_vocab),
                                            special_tokens={}))}
    llama3_path = os.path.join(tdir, "llama3/tokenizer.json")
    if os.path.exists(llama3_path):
        llama3 = Tokenizer.from_file(llama3_path)
        with open(llama3_path) as f:
            vocab = json.load(f)["model"]["vocab"]
        out["llama3"] = (llama3, tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN,
                                                   mergeable_ranks=byte_level_ranks(vocab), special_tokens={}))
    return out


def best_rate(fn, docs, repeat):
    nbytes = sum(len(d.encode()) for d in docs)
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn(docs)
        best = min(best, time.process_time() - start)
    return nbytes / best / 1e6


def ours(build, cpu, shared):
    env = dict(os.environ, LLMTRAIN_SHARED_DIR=shared)
    r = subprocess.run(["taskset", "-c", str(cpu), os.path.join(build, "bin/tokenizer_bench"),
                        "--benchmark_filter=BM_Encode/tokenizer:[01]/", "--benchmark_format=json",
                        "--benchmark_min_time=2"], capture_output=True, text=True, check=True, env=env)
    rates = {}
    for b in json.loads(r.stdout)["benchmarks"]:
        if "error_occurred" in b:
            continue
        args = dict(part.split(":") for part in b["name"].split("/")[1:4])
        key = ("gpt2" if args["tokenizer"] == "0" else "llama3", "prose" if args["text"] == "0" else "code",
               "warm" if args["warm"] == "1" else "cold")
        rates[key] = b["bytes_per_second"] / 1e6
    return rates


def two_passes(make, docs):
    """CPU-time rates (MB/s) of a fresh encoder's first and second pass over docs."""
    nbytes = sum(len(d.encode()) for d in docs)
    encode = make()
    rates = []
    for _ in range(2):
        start = time.process_time()
        encode(docs)
        rates.append(nbytes / max(time.process_time() - start, 1e-9) / 1e6)
    return rates


def ours_two_passes(exe, cpu, tokenizer, path):
    r = subprocess.run(["taskset", "-c", str(cpu), exe, "--tokenizer",
                        tokenizer, "--bench", "--passes", "2", path], capture_output=True, text=True, check=True)
    return [float(line.split("MB/cpu-s ")[1].split()[0]) for line in r.stdout.splitlines() if line.startswith("pass")]


def multilingual(args):
    tdir = os.path.join(args.shared, "data/tokenizers")
    paths = {"gpt2": os.path.join(tdir, "gpt2"), "llama3": os.path.join(tdir, "llama3/tokenizer.json")}
    names = sorted(f[:-6] for f in os.listdir(args.multilingual) if f.endswith(".jsonl"))
    if args.scripts:
        names = [n for n in names if n in args.scripts.split(",")]
    ours_exe = os.path.join(args.build, "bin/llmtrain-tokenize")
    print(f"single core (cpu {args.cpu}), MB/s = 1e6 bytes per CPU second; cold = first pass of a fresh "
          f"tokenizer, warm = its second; ours: min-max of {args.repeat} fresh processes; ratio = ours cold (min) / "
          f"tiktoken cold")
    print(f"| tokenizer | script | MB |{' before cold |' if args.baseline else ''} ours cold | ours warm | "
          f"tiktoken cold | tiktoken warm | HF cold | HF warm | ours/tiktoken cold | ours/HF cold |")
    print("|---|---|--:|" + ("--:|" if args.baseline else "") + "--:|--:|--:|--:|--:|--:|--:|--:|")
    all_peers = peers(args.shared)
    for tok in ("gpt2", "llama3"):
        hf_path = paths[tok]
        for name in names:
            path = os.path.join(args.multilingual, name + ".jsonl")
            with open(path, encoding="utf-8") as f:
                docs = [json.loads(line)["text"] for line in f]
            mb = sum(len(d.encode()) for d in docs) / 1e6
            runs = [ours_two_passes(ours_exe, args.cpu, hf_path, path) for _ in range(args.repeat)]
            cold = [r[0] for r in runs]
            warm = [r[1] for r in runs]
            before = ""
            if args.baseline:
                base = [ours_two_passes(args.baseline, args.cpu, hf_path, path)[0] for _ in range(args.repeat)]
                before = f" {min(base):.1f}-{max(base):.1f} |"
            tt = all_peers[tok][1]
            tt_rates = two_passes(lambda: (lambda ds: [tt.encode_ordinary(d) for d in ds]), docs)
            make_hf = (lambda: hf_gpt2(tdir)) if tok == "gpt2" else (lambda: Tokenizer.from_file(hf_path))
            hf_rates = two_passes(lambda: (lambda ds, hf=make_hf(): hf.encode_batch(ds, add_special_tokens=False)),
                                  docs)
            print(f"| {tok} | {name} | {mb:.2f} |{before} {min(cold):.1f}-{max(cold):.1f} | {min(warm):.1f}-{max(warm):.1f} | "
                  f"{tt_rates[0]:.1f} | {tt_rates[1]:.1f} | {hf_rates[0]:.1f} | {hf_rates[1]:.1f} | "
                  f"{min(cold) / tt_rates[0]:.1f}x | {min(cold) / hf_rates[0]:.1f}x |", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--shared", default=os.path.join(ROOT, "../shared"))
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--multilingual", help="directory of per-script JSON Lines (perf/multilingual_corpus.py)")
    ap.add_argument("--scripts", help="with --multilingual: comma-separated script names (default: all)")
    ap.add_argument("--baseline", help="with --multilingual: another llmtrain-tokenize to measure cold beside ours")
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    if args.multilingual:
        multilingual(args)
        return
    texts = corpus_slices()
    ours_rates = ours(args.build, args.cpu, os.path.abspath(args.shared))
    print(f"single core (cpu {args.cpu}), MB/s = 1e6 bytes/s; ratio = ours (warm) / peer")
    print(f"{'tokenizer':9} {'text':5} {'ours cold':>9} {'ours warm':>9} {'HF':>8} {'tiktoken':>8} "
          f"{'vs HF':>7} {'vs tiktoken':>11}")
    for name, (hf, tt) in peers(args.shared).items():
        for kind, docs in texts.items():
            hf_rate = best_rate(lambda ds: hf.encode_batch(ds, add_special_tokens=False), docs, args.repeat)
            tt_rate = best_rate(lambda ds: [tt.encode_ordinary(d) for d in ds], docs, args.repeat)
            cold, warm = ours_rates.get((name, kind, "cold"), 0), ours_rates.get((name, kind, "warm"), 0)
            print(f"{name:9} {kind:5} {cold:9.1f} {warm:9.1f} {hf_rate:8.1f} {tt_rate:8.1f} "
                  f"{warm / hf_rate:6.1f}x {warm / tt_rate:10.1f}x")


if __name__ == "__main__":
    main()
