#!/usr/bin/env bash
# `llmtrain --preflight`'s checkpoint.dir check (issue 14): writable, with room for keep_last + 1 checkpoints
# of this model, sized as the writer sizes them. On a 60 MiB tmpfs the micro model's checkpoint (about 23 MiB
# with its alignment gaps) fits twice (keep_last = 1) but not three times (keep_last = 2); the estimate
# covers the file a real run then writes there; a checkpoint.dir under a plain file is diagnosed.
# Usage: preflight_checkpoint_test.sh LLMTRAIN CONFIG WORK   (needs root for the tmpfs mount)
set -u
llmtrain=$1 config=$2 work=$3
rm -rf "$work" && mkdir -p "$work/mnt"
fail() { echo "FAIL: $*"; exit 1; }
mount -t tmpfs -o size=60m tmpfs "$work/mnt" || fail "cannot mount a tmpfs (the test needs root)"
trap 'umount "$work/mnt"' EXIT
ckpt=$work/mnt/ckpt
# preflight KEEP_LAST [--set ...]: output in $work/out, status in $status
preflight() {
  local keep=$1
  shift
  "$llmtrain" --preflight "$config" --set train.run_dir="$work/run" --set checkpoint.dir="$ckpt" \
    --set checkpoint.keep_last="$keep" --set checkpoint.every_steps=1 --set train.steps=3 "$@" >"$work/out" 2>&1
  status=$?
  cat "$work/out"
}
expect() { grep -qE -- "$1" "$work/out" || fail "no line matching '$1'"; }

preflight 1
[ "$status" -eq 0 ] || fail "keep_last = 1 on 60 MiB: status $status"
expect "ok: checkpoint.dir: $ckpt writable, [0-9.]+ MiB free; 2 checkpoints of this model \(checkpoint.keep_last = 1, this run writes 4\) need [0-9.]+ MiB, [0-9.]+ MiB each"
each=$(sed -nE 's/.*need [0-9.]+ MiB, ([0-9.]+) MiB each.*/\1/p' "$work/out")

preflight 2
[ "$status" -eq 1 ] || fail "keep_last = 2 on 60 MiB: status $status, expected 1"
expect "PROBLEM: checkpoint.dir: $ckpt has [0-9.]+ MiB free; 3 checkpoints of this model \(checkpoint.keep_last = 2, this run writes 4\) need [0-9.]+ MiB, [0-9.]+ MiB each \(a checkpoint write that runs out of space stops the job\)"
expect "preflight: 1 problem;"

# keep_last = 0 keeps every checkpoint: as many as the run writes (train.steps / every_steps + the last).
preflight 0 --set train.steps=1
[ "$status" -eq 0 ] || fail "keep_last = 0, one step: status $status"
expect "2 checkpoints of this model \(checkpoint.keep_last = 0, this run writes 2\)"

# The estimate covers the file a run writes, and is not far above it (alignment gaps, metadata).
"$llmtrain" "$config" --set train.run_dir="$work/run" --set checkpoint.dir="$ckpt" --set train.steps=1 >"$work/out" 2>&1 ||
  { cat "$work/out"; fail "the run failed"; }
size=$(stat -c %s "$ckpt/step_00000001.h5")
/usr/bin/env awk -v e="$each" -v s="$size" 'BEGIN { e *= 1048576; print "estimate " e ", file " s; exit !(e >= s && e < 1.3 * s) }' ||
  fail "the estimate $each MiB does not match the file ($size bytes)"

touch "$work/plain-file"
ckpt=$work/plain-file/ckpt
preflight 1
[ "$status" -eq 1 ] || fail "checkpoint.dir under a file: status $status, expected 1"
expect "PROBLEM: checkpoint.dir: cannot create $ckpt: Not a directory"
echo PASS
