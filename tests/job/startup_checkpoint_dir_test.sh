#!/usr/bin/env bash
# A run checks its directories before the first step (src/job/storage_check.cpp): a checkpoint.dir that
# cannot be created or written, or that has no room for one checkpoint, stops the run at start-up with the
# key, the path and the reason, before any training; room for one checkpoint but not for keep_last + 1 is a
# warning and the run goes on. Small tmpfs mounts stand in for a full and a read-only file system; the micro
# model's checkpoint is about 23 MiB with its alignment gaps.
# Usage: startup_checkpoint_dir_test.sh LLMTRAIN CONFIG WORK   (mounting needs root: skipped otherwise)
set -u
llmtrain=$1 config=$2 work=$3
fail() { echo "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: mounting the test's small file systems needs root"; exit 77; }
rm -rf "$work" && mkdir -p "$work/small" "$work/ro" "$work/room"
mount -t tmpfs -o size=8m tmpfs "$work/small" || fail "cannot mount a tmpfs"
trap 'umount "$work/small" "$work/ro" "$work/room" 2>/dev/null' EXIT
mount -t tmpfs -o size=8m,ro tmpfs "$work/ro" || fail "cannot mount a read-only tmpfs"
mount -t tmpfs -o size=40m tmpfs "$work/room" || fail "cannot mount a tmpfs"
# run CHECKPOINT_DIR [--set ...]: output in $work/out, status in $status
run() {
  local dir=$1
  shift
  "$llmtrain" "$config" --set train.run_dir="$work/run" --set checkpoint.dir="$dir" --set train.steps=2 "$@" \
    >"$work/out" 2>&1
  status=$?
  cat "$work/out"
}
expect() { grep -qE -- "$1" "$work/out" || fail "no line matching '$1'"; }
untrained() { ! grep -qE "^step |done:" "$work/out" || fail "$1: the run trained before failing"; }

run "$work/small/ckpt"
[ "$status" -eq 1 ] || fail "8 MiB checkpoint.dir: status $status, expected 1"
expect "checkpoint.dir: $work/small/ckpt has [0-9.]+ [KM]iB free; a checkpoint of this model needs [0-9.]+ MiB"
untrained "8 MiB checkpoint.dir"
[ ! -e "$work/run/metrics.jsonl" ] || [ ! -s "$work/run/metrics.jsonl" ] || fail "8 MiB: metrics were written"

run "$work/ro/sub/ckpt"
[ "$status" -eq 1 ] || fail "read-only checkpoint.dir: status $status, expected 1"
expect "checkpoint.dir: cannot create $work/ro/sub/ckpt: Read-only file system"
! grep -q "filesystem error" "$work/out" || fail "a raw filesystem error reached the user"
untrained "read-only checkpoint.dir"

run "$work/ro"
[ "$status" -eq 1 ] || fail "read-only existing checkpoint.dir: status $status, expected 1"
expect "checkpoint.dir: cannot write in $work/ro: Read-only file system"

# Room for one checkpoint (40 MiB) but not for keep_last + 1 = 2: a warning at start-up, then the run trains
# and writes its first checkpoint; the second write finds no room and stops the job (the writer's check).
run "$work/room/ckpt" --set checkpoint.keep_last=1 --set checkpoint.every_steps=1
expect "warning: checkpoint.dir: $work/room/ckpt has [0-9.]+ MiB free; 2 checkpoints of this model \(checkpoint.keep_last = 1, this run writes 3\) need"
[ -e "$work/room/ckpt/step_00000001.h5" ] || fail "40 MiB, keep_last = 1: no first checkpoint"
[ "$status" -eq 1 ] && grep -q "not enough free space for a checkpoint" "$work/out" ||
  fail "40 MiB, keep_last = 1: status $status; expected the second write to stop the job"
echo PASS
