#!/usr/bin/env python3
"""PyTorch's training throughput on the model of an llmtrain configuration: the peer of llmtrain's own run in
the device check (perf/gpu/check.sh). The model is perf/torch_train_step.py's Llama-style decoder (RMSNorm,
rotary in Hugging Face's rotate_half layout, grouped-query attention through scaled_dot_product_attention,
SwiGLU, tied or untied head, cross-entropy), built with the shape llmtrain itself resolved: the input is
llmtrain's `--dry-run` printout, and the parameter count must equal the one llmtrain printed. One step is
what llmtrain's step is: forward + backward + gradient clipping + AdamW (fused on CUDA), fp32 weights, the
products in bf16 under autocast when train.precision = "bf16". Tokens are random (synthetic).

Each mode builds a fresh model and prints one JSON line: median step time over --steps timed steps after
--warmup, tokens/s, MFU = llmtrain's flops per token (the same formula) x tokens/s / peak, and the peak device
memory (torch.cuda.max_memory_allocated). Modes: eager, and compile: torch.compile of each block (PyTorch's
regional compilation: one compile serves every block, which keeps it within the device check's time). The
peak is --peak-tflops when given (check.sh passes llmtrain's), else a bf16 (fp32 on CPU) matrix product
measured here.

Usage: llmtrain --dry-run CONFIG [--set ...] > shape.txt
       python3 perf/gpu/torch_reference.py shape.txt [--device cuda|cpu] [--modes eager,compile]
              [--rows R] [--seq S] [--steps 10] [--warmup 2] [--peak-tflops 989] [--json-out FILE]
--rows and --seq override the configuration's batch_size x grad_accum rows and data.seq_len (small CPU runs).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model_shape import read_dry_run, train_flops_per_token  # noqa: E402  (perf/)
from torch_train_step import Model, init_weights  # noqa: E402

def measure_peak_flops(device):
    """A large matrix product's rate: bf16 8192^3 on CUDA, fp32 1024^3 on CPU; median of 10 after 3."""
    n, dtype = (8192, torch.bfloat16) if device == "cuda" else (1024, torch.float32)
    a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
    times = []
    for i in range(13):
        sync(device)
        t0 = time.perf_counter()
        a @ b
        sync(device)
        if i >= 3:
            times.append(time.perf_counter() - t0)
    return 2 * n ** 3 / statistics.median(times)


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def run_mode(mode, run, args, peak_flops):
    device = args.device
    torch.manual_seed(0)
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    shape, rows, seq = run["shape"], args.rows or run["rows"], args.seq or run["seq"]
    model = Model(shape, seq).to(device)
    init_weights(model)
    parameters = sum(p.numel() for p in model.parameters())
    if parameters != run["parameters"]:
        sys.exit(f"the PyTorch model has {parameters} parameters, llmtrain's {run['parameters']}: not the same model")
    if mode == "compile":  # each block on its own (regional compilation): one compile serves every block
        for block in model.blocks:
            block.compile()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, fused=device == "cuda")
    tokens = torch.randint(0, shape["vocab"], (rows, seq + 1), device=device)
    x, y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    bf16 = run["precision"] == "bf16"
    times, losses = [], []
    for step in range(args.warmup + args.steps):
        sync(device)
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device, dtype=torch.bfloat16, enabled=bf16):
            loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        sync(device)
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    step_s = statistics.median(times)
    tokens_per_s = rows * seq / step_s
    flops_per_token = train_flops_per_token(shape, seq)
    result = dict(impl="torch", mode=mode, device=device, torch=torch.__version__,
                  device_name=torch.cuda.get_device_name() if device == "cuda" else "cpu", parameters=parameters,
                  rows=rows, seq=seq, precision=run["precision"], steps=len(times), step_s=step_s,
                  tokens_per_s=tokens_per_s, flops_per_token=flops_per_token, peak_tflops=peak_flops / 1e12,
                  mfu=flops_per_token * tokens_per_s / peak_flops, loss_first=losses[0], loss_last=losses[-1],
                  peak_memory_bytes=torch.cuda.max_memory_allocated() if device == "cuda" else None)
    if not all(math.isfinite(v) for v in losses):
        result["error"] = "non-finite loss"
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dry_run", help="llmtrain --dry-run's output for the configuration")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--modes", default="eager,compile", help="comma-separated: eager, compile")
    ap.add_argument("--rows", type=int, default=0)
    ap.add_argument("--seq", type=int, default=0)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--peak-tflops", type=float, default=0.0)
    ap.add_argument("--json-out", help="append each mode's JSON line to this file too")
    args = ap.parse_args()
    try:
        run = read_dry_run(args.dry_run)
    except ValueError as error:
        sys.exit(str(error))
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    peak_flops = args.peak_tflops * 1e12 if args.peak_tflops > 0 else measure_peak_flops(args.device)
    for mode in args.modes.split(","):
        if mode not in ("eager", "compile"):
            sys.exit(f"unknown mode {mode!r}: eager or compile")
        t0 = time.perf_counter()
        result = run_mode(mode, run, args, peak_flops)
        result["wall_s"] = time.perf_counter() - t0
        result["peak_source"] = "given" if args.peak_tflops > 0 else "measured"
        line = json.dumps(result)
        print(line, flush=True)
        if args.json_out:
            with open(args.json_out, "a") as f:
                f.write(line + "\n")


if __name__ == "__main__":
    main()
