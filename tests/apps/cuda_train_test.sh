#!/usr/bin/env bash
# train.device = "cuda" through the whole job, on the tiny preset (30 steps, one rank), against itself and the
# CPU. Exit status 77 (skipped) where this machine has no CUDA device or the build no CUDA.
# Usage: cuda_train_test.sh CASE LLMTRAIN TINY_TOML WORK_DIR
#   fp32_vs_cpu    every step's loss within 1e-4 (relative) of the same run on the CPU
#   bf16_vs_cpu    train.precision = "bf16": within 2e-2 of the CPU's bf16 run (fp32 where the CPU has no bf16)
#   repeat         the same cuda run twice: every step's loss bitwise equal
#   recompute      train.recompute = "blocks" bitwise equal to "none"
#   resume         resumed from the step-10 checkpoint: steps 11..30 bitwise equal to the uninterrupted run
#   resume_on_cpu  a cuda checkpoint (step 10) resumed on the CPU: steps 11..30 within 1e-4 of the cuda run
set -u
case_name=$1 llmtrain=$2 config=$3 work=$4
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then echo "SKIP: no CUDA device (nvidia-smi -L)"; exit 77; fi
if ! "$llmtrain" --version 2>/dev/null | grep -q nccl; then echo "SKIP: a build without CUDA"; exit 77; fi
rm -rf "$work" && mkdir -p "$work"

# run NAME DEVICE [--set ...]: 30 steps of the tiny preset into $work/NAME.
run() {
  local name=$1 device=$2
  shift 2
  "$llmtrain" "$config" --set train.device="$device" --set train.steps=30 --set train.warmup_steps=3 \
    --set train.eval_batches=1 --set log.every_steps=1 --set train.run_dir="$work/$name" "$@" \
    >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; echo "FAIL: run $name"; exit 1; }
  if [ "$device" = cuda ]; then
    grep -q "device: cuda" "$work/$name.log" || { cat "$work/$name.log"; echo "FAIL: $name did not train on cuda"; exit 1; }
  fi
}

# compare A B TOLERANCE [FIRST_STEP]: the train losses of runs A and B, step by step from FIRST_STEP (default 1);
# tolerance 0 asks for equal bits (the JSON holds the shortest decimal that reads back to the same double).
compare() {
  python3 - "$work/$1/metrics.jsonl" "$work/$2/metrics.jsonl" "$3" "${4:-1}" <<'PY' || exit 1
import json, sys
def losses(path):
    out = {}
    for line in open(path):
        m = json.loads(line)
        if m.get("type") == "train":
            out[m["step"]] = m["loss"]
    return out
a, b, tol, first = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
steps = [s for s in range(first, 31)]
missing = [s for s in steps if s not in a or s not in b]
if missing:
    print(f"FAIL: steps {missing} missing from {sys.argv[1]} or {sys.argv[2]}"); sys.exit(1)
worst = 0.0
for s in steps:
    rel = abs(a[s] - b[s]) / abs(b[s])
    worst = max(worst, rel)
    if (tol == 0 and a[s] != b[s]) or rel > tol:
        print(f"FAIL: step {s}: loss {a[s]!r} against {b[s]!r} (relative {rel:.3g}, allowed {tol:g})"); sys.exit(1)
print(f"steps {first}..30: largest relative difference {worst:.3g} (allowed {tol:g})")
PY
}

checkpointed=(--set checkpoint.dir="$work/ckpt" --set checkpoint.every_steps=10 --set checkpoint.keep_last=10)
case "$case_name" in
  fp32_vs_cpu) run cuda cuda && run cpu cpu && compare cuda cpu 1e-4 ;;
  bf16_vs_cpu) run cuda cuda --set train.precision=bf16 && run cpu cpu --set train.precision=bf16 &&
               compare cuda cpu 2e-2 ;;
  repeat) run first cuda && run second cuda && compare first second 0 ;;
  recompute) run none cuda --set train.recompute=none && run blocks cuda --set train.recompute=blocks &&
             compare blocks none 0 ;;
  resume|resume_on_cpu)
    run whole cuda "${checkpointed[@]}"
    [ -f "$work/ckpt/step_00000010.h5" ] || { ls "$work/ckpt"; echo "FAIL: no step-10 checkpoint"; exit 1; }
    device=cuda tol=0
    [ "$case_name" = resume_on_cpu ] && device=cpu tol=1e-4
    run resumed "$device" --set checkpoint.dir="$work/ckpt_resumed" --set checkpoint.resume="$work/ckpt/step_00000010.h5"
    grep -q "resumed from .*step_00000010.h5 at step 10" "$work/resumed.log" ||
      { cat "$work/resumed.log"; echo "FAIL: not resumed at step 10"; exit 1; }
    compare resumed whole "$tol" 11 ;;
  *) echo "FAIL: unknown case $case_name"; exit 1 ;;
esac
echo "PASS"
