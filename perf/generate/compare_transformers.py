#!/usr/bin/env python3
"""Generation and scoring speed of llmtrain-generate beside Hugging Face transformers, on one core.

The checkpoint is exported (llmtrain-ckpt export, fp32) and loaded by transformers; both then
  - generate: greedy, batch 1, the same prompt, exactly --new-tokens tokens (transformers with
    min_new_tokens; ours must not meet EOS first, which the script checks), key/value cache on both sides;
  - score: the documents of --score (field "text") framed as the run frames them (GPT-2's tokenizer: EOS
    after each), in windows of seq_len side by side (ours: --stride seq_len), summed losses.
Runs are interleaved (ours, transformers, ours, ...) --runs times, and the medians reported. Both sides are
pinned to the same core (--cpu) with one thread. Ours is timed inside the process (its stderr line: decode
or scoring only, not loading the checkpoint), transformers around generate() / the forward passes after
one warm-up call. CPU seconds beside wall seconds: on a shared machine the CPU figures are the comparable
ones. The greedy text and the mean loss of both sides are compared as a check that both run the same model.

Needs torch and transformers (PyPI; never a dependency of the build).
Usage: compare_transformers.py --bin build/bin --ckpt CKPT --work DIR [--prompt TEXT] [--new-tokens N]
                               [--score FILE.jsonl] [--docs N] [--runs 3] [--cpu 1]
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time


def run_ours(args, extra):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("OPENBLAS_CORETYPE", None)  # llmtrain picks OpenBLAS's kernel set itself (see perf/compare_torch.sh)
    cmd = ["taskset", "-c", str(args.cpu), os.path.join(args.bin, "llmtrain-generate"), args.ckpt] + extra
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return p.stdout, p.stderr


def ours_generate(args):
    out, err = run_ours(args, ["--prompt", args.prompt, "--max-new-tokens", str(args.new_tokens)])
    m = re.search(r"(\d+) tokens? generated from 1 prompt of (\d+) tokens? in ([0-9.]+) s \(([0-9.]+) CPU s\)", err)
    if not m or int(m.group(1)) != args.new_tokens:
        sys.exit(f"llmtrain-generate did not generate {args.new_tokens} tokens: {err}")
    return out.rstrip("\n"), float(m.group(3)), float(m.group(4))


def ours_score(args, docs_file):
    out, err = run_ours(args, ["--score", docs_file])
    total = re.search(r"^total: loss ([0-9.]+) perplexity [0-9.]+ over (\d+) tokens", out, re.M)
    timing = re.search(r"scored (\d+) tokens in ([0-9.]+) s \(([0-9.]+) CPU s\)", err)
    return float(total.group(1)), int(total.group(2)), float(timing.group(2)), float(timing.group(3))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--prompt", default="In the beginning God created")
    ap.add_argument("--new-tokens", type=int, default=100)
    ap.add_argument("--score", default=os.path.join(os.path.dirname(__file__), "../../inputs/data/kjv/eval.jsonl"))
    ap.add_argument("--docs", type=int, default=8, help="documents of --score to use")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1)
    args = ap.parse_args()

    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    os.sched_setaffinity(0, {args.cpu})
    torch.set_num_threads(1)
    os.makedirs(args.work, exist_ok=True)
    hf_dir = os.path.join(args.work, "hf")
    subprocess.run([os.path.join(args.bin, "llmtrain-ckpt"), "export", args.ckpt, "--format", "safetensors",
                    "--output", hf_dir], check=True, capture_output=True)
    tok = AutoTokenizer.from_pretrained(hf_dir)
    model = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32).eval()
    seq_len = model.config.max_position_embeddings
    docs_file = os.path.join(args.work, "docs.jsonl")
    with open(args.score) as src, open(docs_file, "w") as dst:
        for _, line in zip(range(args.docs), src):
            dst.write(line)
    texts = [json.loads(line)["text"] for line in open(docs_file)]

    prompt_ids = torch.tensor([tok(args.prompt)["input_ids"]])

    def hf_generate():
        with torch.no_grad():
            return model.generate(prompt_ids, attention_mask=torch.ones_like(prompt_ids), do_sample=False,
                                  max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
                                  pad_token_id=tok.eos_token_id)

    def hf_score():
        total, count = 0.0, 0
        with torch.no_grad():
            for text in texts:
                ids = tok(text)["input_ids"] + [tok.eos_token_id]
                for begin in range(0, len(ids) - 1, seq_len):
                    window = torch.tensor([ids[begin:begin + seq_len + 1]])
                    logits = model(window[:, :-1]).logits[0]
                    total += torch.nn.functional.cross_entropy(logits, window[0, 1:], reduction="sum").item()
                    count += window.shape[1] - 1
        return total / count, count

    def timed(fn):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        return result, time.perf_counter() - wall, time.process_time() - cpu

    hf_generate(), hf_score()  # warm-up
    rows = {k: [] for k in ("ours_gen", "hf_gen", "ours_score", "hf_score")}
    for _ in range(args.runs):
        text, wall, cpu = ours_generate(args)
        rows["ours_gen"].append((wall, cpu))
        out, wall, cpu = timed(hf_generate)
        rows["hf_gen"].append((wall, cpu))
        hf_text = tok.decode(out[0], skip_special_tokens=False)
        loss, count, wall, cpu = ours_score(args, docs_file)
        rows["ours_score"].append((wall, cpu))
        (hf_loss, hf_count), wall, cpu = timed(hf_score)
        rows["hf_score"].append((wall, cpu))

    print(f"machine: {os.uname().nodename}, cpu {args.cpu} of {os.cpu_count()}; torch {torch.__version__}, "
          f"transformers {transformers.__version__}")
    print(f"model: {args.ckpt} ({sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters, "
          f"seq_len {seq_len})")
    print(f"greedy text identical: {text == hf_text}" + ("" if text == hf_text else f"\n  ours: {text!r}\n  hf:   {hf_text!r}"))
    print(f"score: ours loss {loss:.6f} over {count} tokens, transformers {hf_loss:.6f} over {hf_count}")
    print(f"medians of {args.runs} interleaved runs (min-max):")
    for name, what, n in (("gen", f"generate {args.new_tokens} tokens", args.new_tokens), ("score", f"score {count} tokens", count)):
        for side in ("ours", "hf"):
            walls = [w for w, _ in rows[f"{side}_{name}"]]
            cpus = [c for _, c in rows[f"{side}_{name}"]]
            label = "llmtrain" if side == "ours" else "transformers"
            print(f"  {what:<22} {label:<13} {n / statistics.median(walls):9.1f} tokens/s wall "
                  f"({n / max(walls):.1f}-{n / min(walls):.1f}), {n / statistics.median(cpus):9.1f} tokens/CPU-s "
                  f"({n / max(cpus):.1f}-{n / min(cpus):.1f})")
    if abs(loss - hf_loss) > 1e-3 * max(1.0, abs(hf_loss)) or count != hf_count:
        print("WARNING: the two sides scored different tokens or losses")


if __name__ == "__main__":
    main()
