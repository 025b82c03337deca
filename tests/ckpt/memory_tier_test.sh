#!/usr/bin/env bash
# The memory tier of checkpoints (checkpoint.memory_every_steps, docs/checkpoints.md), end to end with llmtrain
# under mpirun. Each case keeps its memory_dir under the test's work directory, not /dev/shm.
# Usage: memory_tier_test.sh CASE MPIRUN LLMTRAIN CKPT_TOOL PROBE CONFIG WORK
#   bitwise  2 ranks, a memory snapshot every step, rank 0 SIGKILLed once step 5's snapshot is in memory
#            (LLMTRAIN_FAULT=memory.kill:5), no disk checkpoint: the next run resumes from memory at step 5 and
#            its final checkpoint and losses equal an uninterrupted run's, bit for bit; the complete run
#            removes the snapshots, the failed one kept them (two generations)
#   rescale  killed on 2 ranks at step 4, resumed from memory on 3 ranks, killed at step 9, resumed on 1 rank to
#            the end of epoch 0: the provenance audit finds every token of epoch 0 exactly once
#   buddy    4 ranks as two nodes (LLMTRAIN_NODE_ID=0/1, a memory_dir each); node 1's directory deleted after
#            the kill: the resume takes ranks 2 and 3's parts from node 0's buddy copies
#   bad      a corrupted part of the newest generation is skipped with a warning naming it, and the previous
#            generation (step 4) wins over the disk checkpoint of the same step; parts of another
#            configuration (another model.seed, the same checkpoint.dir and memory_dir) are ignored (a fresh
#            start) and left in place
#   fsdp     saved under FSDP on 2 ranks (a disk checkpoint and a memory snapshot of step 4), resumed on 3 ranks
#            from memory and, in a copy, from the disk checkpoint: the final checkpoints are equal, dataset for
#            dataset (the memory tier's re-slicing onto new shard ranges matches the disk reader's)
#   room     a memory_dir on a 1 MiB tmpfs: refused at start-up, naming the key, the directory and the need
set -u
case_name=$1 mpirun=$2 llmtrain=$3 tool=$4 probe=$5 config=$6 work=$7/$1
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
# train NP STEPS [mpirun arguments...]: output in $work/out, status in $status. timeout: no hang.
train() {
  local np=$1 steps=$2
  shift 2
  timeout 240 "$mpirun" --oversubscribe -np "$np" "$@" "$llmtrain" "$config" --set train.run_dir="${run_dir:-$work/run}" \
    --set checkpoint.dir="${ckpt_dir:-$work/ckpt}" --set train.steps="$steps" --set checkpoint.keep_last=0 \
    --set checkpoint.memory_dir="${mem_dir:-$work/mem}" --set log.every_steps=1000 ${sets[@]+"${sets[@]}"} >"$work/out" 2>&1
  status=$?
  cat "$work/out"
  [ "$status" -ne 124 ] || fail "the job hung"
}
expect() { grep -qE "$1" "$work/out" || fail "no line matching '$1'"; }
# The losses of steps FROM.. in a metrics.jsonl, one per line, as printed (every digit).
losses() { grep '"type":"train"' "$1" | sed -E 's/.*"loss":([^,]*),.*"step":([0-9]+),.*/\2 \1/' | awk -v from="$2" '$1 >= from'; }
sets=(--set checkpoint.memory_every_steps=1)

case "$case_name" in
bitwise)
  run_dir=$work/straight ckpt_dir=$work/straight_ckpt sets=()
  train 2 8 && [ "$status" -eq 0 ] || fail "uninterrupted run: status $status"
  unset run_dir ckpt_dir
  sets=(--set checkpoint.memory_every_steps=1)
  train 2 8 -x LLMTRAIN_FAULT=memory.kill:5
  [ "$status" -ne 0 ] || fail "the killed run exited 0"
  for step in 4 5; do
    for rank in 0 1; do
      file=$(printf '%s/mem/step_%08d/part_%05d.bin' "$work" "$step" "$rank")
      [ -f "$file" ] || fail "no $file after the failure"
    done
  done
  [ "$(ls "$work/mem" | wc -l)" -eq 2 ] || fail "more than two generations kept: $(ls "$work/mem")"
  [ ! -e "$work/ckpt/step_00000005.h5" ] || fail "a disk checkpoint exists: the test needs the memory tier alone"
  "$tool" list "$work/ckpt" --memory "$work/mem" >"$work/list" || fail "llmtrain-ckpt list failed"
  cat "$work/list"
  grep -qE "^5	memory	2 parts, 0 buddy parts" "$work/list" || fail "llmtrain-ckpt list does not show the memory snapshot of step 5"
  train 2 8
  [ "$status" -eq 0 ] || fail "resume: status $status"
  expect "resumed from memory snapshot at step 5 \(2 local, 0 buddy parts"
  expect "warning: checkpoint.memory_every_steps: all ranks are on one node"
  "$tool" inspect "$work/straight_ckpt/step_00000008.h5" | grep '^  /' >"$work/straight.txt"
  "$tool" inspect "$work/ckpt/step_00000008.h5" | grep '^  /' >"$work/resumed.txt"
  [ -s "$work/straight.txt" ] && diff "$work/straight.txt" "$work/resumed.txt" ||
    fail "the final checkpoints differ (parameters, moments or loader state)"
  losses "$work/straight/metrics.jsonl" 1 >"$work/straight_losses"
  losses "$work/run/metrics.jsonl" 1 >"$work/resumed_losses"
  [ "$(wc -l <"$work/straight_losses")" -eq 8 ] && diff "$work/straight_losses" "$work/resumed_losses" ||
    fail "the losses differ from the uninterrupted run's"
  [ ! -e "$work/mem" ] || fail "the complete run left its memory snapshots: $(ls -R "$work/mem")" ;;
rescale)
  sets+=(--set log.provenance=true)
  train 2 70 -x LLMTRAIN_FAULT=memory.kill:4
  [ "$status" -ne 0 ] || fail "the first killed run exited 0"
  train 3 70 -x LLMTRAIN_FAULT=memory.kill:9
  [ "$status" -ne 0 ] || fail "the second killed run exited 0"
  expect "resumed from memory snapshot at step 4 \(2 local, 0 buddy parts; saved by 2 ranks"
  train 1 70
  [ "$status" -eq 0 ] || fail "the last run: status $status"
  expect "resumed from memory snapshot at step 9 \(3 local, 0 buddy parts; saved by 3 ranks"
  expect "done: 70 steps"
  "$probe" audit "$work/run" "$config" | tee "$work/audit"
  grep -q PASS "$work/audit" || fail "the provenance audit failed" ;;
buddy)
  # Two simulated nodes: ranks 0-1 and 2-3, each node with its own memory directory.
  # nodes STEPS [FAULT]: an environment variable is given to each application context (-x is per context).
  nodes() {
    local steps=$1 fault=${2:-none}
    timeout 120 "$mpirun" --oversubscribe \
      -np 2 -x LLMTRAIN_NODE_ID=0 -x LLMTRAIN_FAULT="$fault" "$llmtrain" "$config" --set train.run_dir="$work/run" --set checkpoint.dir="$work/ckpt" \
        --set train.steps="$steps" --set checkpoint.memory_every_steps=1 --set checkpoint.memory_dir="$work/node0" \
        --set log.every_steps=1000 : \
      -np 2 -x LLMTRAIN_NODE_ID=1 -x LLMTRAIN_FAULT="$fault" "$llmtrain" "$config" --set train.run_dir="$work/run" --set checkpoint.dir="$work/ckpt" \
        --set train.steps="$steps" --set checkpoint.memory_every_steps=1 --set checkpoint.memory_dir="$work/node1" \
        --set log.every_steps=1000 >"$work/out" 2>&1
    status=$?
    cat "$work/out"
    [ "$status" -ne 124 ] || fail "the job hung"
  }
  nodes 6 memory.kill:3
  [ "$status" -ne 0 ] || fail "the killed run exited 0"
  expect "memory snapshots every 1 step in .* on 2 nodes"
  for f in part_00000 part_00001 buddy_part_00002 buddy_part_00003; do
    [ -f "$work/node0/step_00000003/$f.bin" ] || fail "node 0 has no $f.bin"
  done
  for f in part_00002 part_00003 buddy_part_00000 buddy_part_00001; do
    [ -f "$work/node1/step_00000003/$f.bin" ] || fail "node 1 has no $f.bin"
  done
  rm -rf "$work/node1"  # the node is lost, with its memory
  nodes 6
  [ "$status" -eq 0 ] || fail "resume: status $status"
  expect "resumed from memory snapshot at step 3 \(2 local, 2 buddy parts"
  expect "done: 6 steps" ;;
bad)
  sets+=(--set checkpoint.every_steps=4 --set checkpoint.async=false)  # step 4 on disk before the kill
  train 2 8 -x LLMTRAIN_FAULT=memory.kill:5
  [ "$status" -ne 0 ] || fail "the killed run exited 0"
  [ -f "$work/ckpt/step_00000004.h5" ] || fail "no disk checkpoint of step 4"
  part=$work/mem/step_00000005/part_00001.bin
  # One flipped byte in the middle of the data.
  /usr/bin/python3 -c "
import sys
path = sys.argv[1]
data = bytearray(open(path, 'rb').read())
data[len(data) // 2] ^= 0x10
open(path, 'wb').write(data)" "$part" || fail "could not corrupt $part"
  train 2 8
  [ "$status" -eq 0 ] || fail "resume: status $status"
  expect "warning: memory snapshot part skipped: .*step_00000005/part_00001\.bin: checksum mismatch"
  expect "resumed from memory snapshot at step 4 \(2 local, 0 buddy parts"
  grep -q "resumed from .*step_00000004\.h5" "$work/out" && fail "the disk checkpoint won over the memory tier at equal steps"
  # Parts of another configuration (another model.seed) in the same memory_dir: ignored, and left there.
  rm -rf "$work/ckpt" "$work/run" "$work/mem"
  train 2 8 -x LLMTRAIN_FAULT=memory.kill:3
  [ "$status" -ne 0 ] || fail "the killed run exited 0"
  # It writes only step 4's generation, so none of the first run's files has its name.
  sets=(--set model.seed=7 --set checkpoint.memory_every_steps=4)
  run_dir=$work/other train 2 4
  [ "$status" -eq 0 ] || fail "the run of another configuration: status $status"
  expect "ignoring 4 memory snapshot parts of another run or configuration"
  grep -q "resumed from" "$work/out" && fail "a run of another configuration resumed from its memory snapshots"
  for step in 2 3; do
    [ -f "$work/mem/step_0000000$step/part_00000.bin" ] || fail "the other run's parts of step $step were removed"
  done ;;
fsdp)
  sets+=(--set parallel.strategy=fsdp --set checkpoint.every_steps=4 --set checkpoint.async=false)
  train 2 8 -x LLMTRAIN_FAULT=memory.kill:4
  [ "$status" -ne 0 ] || fail "the killed run exited 0"
  [ -f "$work/ckpt/step_00000004.h5" ] || fail "no disk checkpoint of step 4"
  mkdir -p "$work/disk" && cp "$work/ckpt/step_00000004.h5" "$work/disk/"
  train 3 8
  [ "$status" -eq 0 ] || fail "resume from memory: status $status"
  expect "resumed from memory snapshot at step 4 \(2 local, 0 buddy parts; saved by 2 ranks"
  sets=(--set parallel.strategy=fsdp --set checkpoint.every_steps=4)
  run_dir=$work/run_disk ckpt_dir=$work/disk train 3 8
  [ "$status" -eq 0 ] || fail "resume from disk: status $status"
  expect "resumed from .*disk/step_00000004\.h5 at step 4"
  "$tool" inspect "$work/ckpt/step_00000008.h5" | grep '^  /' >"$work/memory.txt"
  "$tool" inspect "$work/disk/step_00000008.h5" | grep '^  /' >"$work/disk.txt"
  [ -s "$work/disk.txt" ] && diff "$work/memory.txt" "$work/disk.txt" ||
    fail "resumed from memory and from disk on 3 ranks, the final checkpoints differ" ;;
room)
  mkdir -p "$work/mnt"
  mount -t tmpfs -o size=1m tmpfs "$work/mnt" || fail "cannot mount a tmpfs (the test needs root)"
  trap 'umount "$work/mnt"' EXIT
  mem_dir=$work/mnt/mem train 2 2
  [ "$status" -ne 0 ] || fail "a memory_dir without room was accepted"
  expect "checkpoint.memory_dir: .*/mnt/mem has [0-9.]+ [KM]iB free; 2 generations of the parts of 2 ranks need [0-9.]+ MiB"
  expect "checked before the first step"
  grep -q "step 1/" "$work/out" && fail "the run took a step" ;;
*) fail "unknown case $case_name" ;;
esac
echo PASS
