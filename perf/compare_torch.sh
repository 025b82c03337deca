#!/usr/bin/env bash
# Side by side: llmtrain's training step and PyTorch's (CPU) on the same model, batch, sequence
# length, precision (--precision fp32|bf16: PyTorch then uses autocast) and one thread, both pinned to cpu 1.
# Both print wall-clock and CPU-time figures: on a shared
# machine the CPU-time ones are the comparable ones. Usage: perf/compare_torch.sh [build-dir] [extra args, e.g. --preset tiny --seq 256]
# Needs a Release build of train_step_bench and torch installed (pip install torch).
set -euo pipefail
build=${1:-build}
shift || true
here=$(cd "$(dirname "$0")" && pwd)
# llmtrain picks OpenBLAS's kernel set itself (Cooperlake on AVX512_BF16 CPUs); an inherited
# OPENBLAS_CORETYPE (this machine's environment sets Haswell) would override it and slow down fp32.
unset OPENBLAS_CORETYPE
echo "== llmtrain =="
OMP_NUM_THREADS=1 taskset -c 1 "$build/bin/train_step_bench" "$@"
echo "== PyTorch =="
OMP_NUM_THREADS=1 taskset -c 1 python3 "$here/torch_train_step.py" --threads 1 "$@"
