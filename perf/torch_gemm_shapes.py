#!/usr/bin/env python3
"""PyTorch (one thread) on the products of perf/gemm_shapes_bench.cpp: fp32 and bf16 (operands cast to
bfloat16 beforehand, as autocast does), GFLOP per CPU-second, median and best of the calls made in about a
second per shape. Usage: OMP_NUM_THREADS=1 taskset -c 1 python3 perf/torch_gemm_shapes.py
Needs torch (PyPI); nothing in the build or tests does.
"""
import time

import torch

SHAPES = [  # name, op(A) transposed, op(B) transposed, m, n, k (as in gemm_shapes_bench.cpp)
    ("square 2048", False, False, 2048, 2048, 2048),
    ("w1 forward", False, True, 1024, 4096, 768),
    ("w1 dX", False, False, 1024, 768, 4096),
    ("w1 dW", True, False, 4096, 768, 1024),
    ("head forward", False, True, 256, 50257, 768),
    ("head dX", False, False, 256, 768, 50257),
    ("head dW", True, False, 50257, 768, 256),
]


def operand(rows, cols, trans, dtype):
    x = torch.empty(cols, rows).uniform_(-1, 1).t() if trans else torch.empty(rows, cols).uniform_(-1, 1)
    return x.to(dtype) if dtype != torch.float32 else x


def rates(m, n, k, ta, tb, dtype):
    a, b = operand(m, k, ta, dtype), operand(k, n, tb, dtype)
    out, start = [], time.process_time()
    for call in range(40):
        t0 = time.process_time()
        torch.matmul(a, b)
        if call > 0:
            out.append(2.0 * m * n * k / (time.process_time() - t0) / 1e9)
        if call >= 3 and time.process_time() - start > 1.0:
            break
    out.sort()
    return out[len(out) // 2], out[-1]


def main():
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread")
    print(f"{'GFLOP/CPU-s':14s} {'fp32 median (best)':>22s} {'bf16 median (best)':>22s} {'bf16/fp32':>8s}")
    for name, ta, tb, m, n, k in SHAPES:
        f32, b16 = rates(m, n, k, ta, tb, torch.float32), rates(m, n, k, ta, tb, torch.bfloat16)
        print(f"{name:14s} {f32[0]:12.1f} ({f32[1]:6.1f}) {b16[0]:12.1f} ({b16[1]:6.1f}) {b16[0] / f32[0]:7.2f}x")


if __name__ == "__main__":
    main()
