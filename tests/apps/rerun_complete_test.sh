#!/usr/bin/env bash
# Running a finished run again (its checkpoint is at train.steps) says that it is complete, naming the
# checkpoint, exits 0, and neither trains, evaluates nor appends to metrics.jsonl.
# Usage: rerun_complete_test.sh MPIRUN LLMTRAIN CONFIG WORK_DIR   (CONFIG: 4 steps, with eval datasets)
set -u
mpirun=$1 llmtrain=$2 config=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
run() {
  "$mpirun" --oversubscribe -np 1 "$llmtrain" "$config" --set train.run_dir="$work/run" \
    --set checkpoint.dir="$work/ckpt" --set checkpoint.every_steps=2 2>&1
}
first=$(run) || { echo "$first"; echo "FAIL: the first run failed"; exit 1; }
grep -q '"type":"eval"' "$work/run/metrics.jsonl" || { echo "$first"; echo "FAIL: no final evaluation in the first run"; exit 1; }
before=$(cat "$work/run/metrics.jsonl")
second=$(run)
status=$?
echo "$second"
[ "$status" -eq 0 ] || { echo "FAIL: exit status $status"; exit 1; }
grep -qE "the run is already complete: .*/ckpt/step_00000004.h5 is at step 4 \(train.steps = 4\)" <<<"$second" \
  || { echo "FAIL: no 'already complete' message naming the checkpoint"; exit 1; }
grep -q "done: " <<<"$second" && { echo "FAIL: the rerun reports 'done'"; exit 1; }
[ "$(cat "$work/run/metrics.jsonl")" = "$before" ] || { echo "FAIL: metrics.jsonl changed"; diff <(echo "$before") "$work/run/metrics.jsonl"; exit 1; }
echo "PASS"
