#!/usr/bin/env bash
# Checkpoint faults and pre-emption, end to end with llmtrain under mpirun (docs/checkpoints.md).
# Usage: faults_test.sh CASE MPIRUN LLMTRAIN CKPT_TOOL PROBE CONFIG WORK
#   kill        a rank SIGKILLed while the .tmp file is written; resume = auto takes the previous checkpoint
#   corrupt     a flipped bit in a dataset: verify fails naming it, resume falls back to the previous one
#   full        a small tmpfs with room for two checkpoints: the run starts (room for one; a warning) and
#               its second write finds "not enough free space" on every rank, no hang, the previous
#               checkpoint intact (a directory without room for one is refused at start-up:
#               tests/job/startup_checkpoint_dir_test.sh)
#   write_error a file size limit (ulimit -f) makes HDF5's write fail mid-file: every rank ends through
#               MPI_Abort with the error, no hang, the previous checkpoint intact
#   stall       a rank stops mid-write (a file system that no longer answers): checkpoint.timeout_s ends the
#               job with its error, non-zero, no hang, the previous checkpoint intact
#   mismatch    another tokenizer, another corpus, a setting that may not change: refused with what differs
#   preempt     SIGUSR1 mid-run: a checkpoint after that step, exit 0; the next run resumes from it
#   async       checkpoint.async with a writer held back 2 s (LLMTRAIN_FAULT=ckpt.slow) while training runs
#               ahead: every file holds its own step's state, dataset for dataset the same as synchronous
#               writes; the run's end waits for the last write; every metrics line reports ckpt.blocked_s
set -u
case_name=$1 mpirun=$2 llmtrain=$3 tool=$4 probe=$5 config=$6 work=$7/$1
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
# train NP STEPS [extra llmtrain arguments...]: output in $work/out, status in $status. timeout: no hang.
train() {
  local np=$1 steps=$2
  shift 2
  timeout 120 "$mpirun" --oversubscribe -np "$np" "$@" "$llmtrain" "$config" --set train.run_dir="$work/run" \
    --set checkpoint.dir="${ckpt_dir:-$work/ckpt}" --set train.steps="$steps" --set checkpoint.keep_last=0 \
    ${sets[@]+"${sets[@]}"} >"$work/out" 2>&1
  status=$?
  cat "$work/out"
  [ "$status" -ne 124 ] || fail "the job hung"
}
expect() { grep -qE "$1" "$work/out" || fail "no line matching '$1'"; }
sets=()

case "$case_name" in
kill)
  train 2 2 && [ "$status" -eq 0 ] || fail "first run: status $status"
  train 2 4 -x LLMTRAIN_FAULT=ckpt.write:1
  [ "$status" -ne 0 ] || fail "the killed run exited 0"
  [ -f "$work/ckpt/step_00000004.h5.tmp" ] || fail "no partial step_00000004.h5.tmp"
  [ ! -f "$work/ckpt/step_00000004.h5" ] || fail "an interrupted write left a complete-looking file"
  train 2 4
  [ "$status" -eq 0 ] || fail "resume: status $status"
  expect "resumed from .*step_00000002\.h5 at step 2"
  "$tool" verify "$work/ckpt/step_00000004.h5" || fail "the checkpoint written after the resume does not verify"
  [ ! -f "$work/ckpt/step_00000004.h5.tmp" ] || fail "the stale .tmp file was not replaced" ;;
corrupt)
  sets=(--set checkpoint.every_steps=1)
  train 2 2 && [ "$status" -eq 0 ] || fail "first run: status $status"
  "$probe" flip "$work/ckpt/step_00000002.h5" /model/block.0/wq || fail "could not flip a bit"
  "$tool" verify "$work/ckpt/step_00000002.h5" >"$work/verify" 2>&1 && fail "verify accepted a flipped bit"
  cat "$work/verify"
  grep -q "dataset /model/block.0/wq fails verification" "$work/verify" || fail "verify did not name the dataset"
  "$tool" verify "$work/ckpt/step_00000001.h5" || fail "the older checkpoint does not verify"
  train 2 3
  [ "$status" -eq 0 ] || fail "resume: status $status"
  expect "not resuming from .*step_00000002\.h5: .*/model/block\.0/wq fails verification.*; trying the previous one"
  expect "resumed from .*step_00000001\.h5 at step 1" ;;
full)
  mkdir -p "$work/mnt"
  mount -t tmpfs -o size=50m tmpfs "$work/mnt" || fail "cannot mount a tmpfs (the test needs root)"
  trap 'umount "$work/mnt"' EXIT
  ckpt_dir=$work/mnt/ckpt
  train 2 2 && [ "$status" -eq 0 ] || fail "first run: status $status"
  sets=(--set checkpoint.every_steps=1)
  train 2 4
  [ "$status" -ne 0 ] || fail "a full disk went unnoticed"
  expect "warning: checkpoint.dir: .* has [0-9.]+ MiB free; [0-9]+ checkpoints of this model"
  expect "not enough free space for a checkpoint: [0-9]+ bytes free, about [0-9]+ needed"
  "$tool" verify "$ckpt_dir/step_00000003.h5" || fail "the previous checkpoint is damaged"
  [ "$(cat "$ckpt_dir/LATEST")" = step_00000003.h5 ] || fail "LATEST moved" ;;
write_error)
  train 2 2 && [ "$status" -eq 0 ] || fail "first run: status $status"
  # 12 MiB per file (MPI's shared-memory segments need a few): the checkpoint (22 MB) fails mid-write with EFBIG (the writer ignores SIGXFSZ); logs stay small.
  (ulimit -f 12288; train 2 4; echo "$status" >"$work/status")
  status=$(cat "$work/status")
  [ "$status" -ne 0 ] || fail "the failed write went unnoticed"
  expect "checkpoint write failed: rank [0-9]+: .*step_00000004\.h5\.tmp: writing .*; ending the job without further HDF5 calls"
  "$tool" verify "$work/ckpt/step_00000002.h5" || fail "the previous checkpoint is damaged"
  [ "$(cat "$work/ckpt/LATEST")" = step_00000002.h5 ] || fail "LATEST moved" ;;
stall)
  train 2 2 && [ "$status" -eq 0 ] || fail "first run: status $status"
  sets=(--set checkpoint.timeout_s=3)
  train 2 4 -x LLMTRAIN_FAULT=ckpt.stall:1
  [ "$status" -ne 0 ] || fail "the stalled write went unnoticed"
  expect "error: checkpoint write to .*step_00000004\.h5 did not finish within checkpoint\.timeout_s = 3 s; ending the job"
  [ ! -f "$work/ckpt/step_00000004.h5" ] || fail "a stalled write left a complete-looking file"
  "$tool" verify "$work/ckpt/step_00000002.h5" || fail "the previous checkpoint is damaged"
  [ "$(cat "$work/ckpt/LATEST")" = step_00000002.h5 ] || fail "LATEST moved" ;;
mismatch)
  train 1 1 && [ "$status" -eq 0 ] || fail "first run: status $status"
  tokenizer=$(dirname "$config")/../../inputs/tokenizers/gpt2
  cp -r "$tokenizer" "$work/tok" && sed -i '$d' "$work/tok/vocab.bpe"  # one merge less, same vocabulary
  sets=(--set tokenizer.path="$work/tok")
  train 1 2
  [ "$status" -ne 0 ] || fail "resumed with another tokenizer"
  expect "written with another tokenizer"
  sets=(--set data.datasets.gpl.path="$(dirname "$config")/../data/corpus/lgpl-2.1.jsonl")
  train 1 2
  [ "$status" -ne 0 ] || fail "resumed with another corpus"
  expect "the loader cannot continue from this checkpoint"
  sets=(--set model.seed=7 --set train.lr=0.002)
  train 1 2
  [ "$status" -ne 0 ] || fail "resumed with model.seed changed"
  expect "model\.seed: checkpoint has 1234, this run has 7"
  expect "train\.lr: checkpoint has 0\.001, this run has 0\.002"
  sets=(--set checkpoint.resume=never)
  train 1 1 && [ "$status" -eq 0 ] || fail "resume = never with changed files: status $status" ;;
preempt)
  rm -f "$work/out"
  "$mpirun" --oversubscribe -np 2 "$llmtrain" "$config" --set train.run_dir="$work/run" --set checkpoint.dir="$work/ckpt" \
    --set train.steps=100000 >"$work/out" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do [ -s "$work/run/metrics.jsonl" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -USR1 "$pid"
  for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; cat "$work/out"; fail "the job did not stop after SIGUSR1"; fi
  wait "$pid"
  status=$?
  cat "$work/out"
  [ "$status" -eq 0 ] || fail "exit status $status after SIGUSR1"
  step=$(sed -nE 's/.*stopped by .* after step ([0-9]+) of.*/\1/p' "$work/out")
  [ -n "$step" ] || fail "no 'stopped by' line"
  file=$(printf 'step_%08d.h5' "$step")
  expect "checkpoint .*$file"
  train 2 $((step + 2))
  [ "$status" -eq 0 ] || fail "resume: status $status"
  expect "resumed from .*$file at step $step"
  expected=$(seq -s ' ' 1 $((step + 2)))
  got=$(grep -oE '"step":[0-9]+,"time_s"' "$work/run/metrics.jsonl" | grep -oE '[0-9]+' | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$expected" ] || fail "metrics.jsonl steps '$got', expected '$expected'" ;;
async)
  sets=(--set checkpoint.every_steps=2)
  train 2 6 -x LLMTRAIN_FAULT=ckpt.slow:1
  [ "$status" -eq 0 ] || fail "asynchronous run: status $status"
  expect "checkpoint .*step_00000002\.h5: [0-9]+ bytes in .*, in the background"
  [ "$(cat "$work/ckpt/LATEST")" = step_00000006.h5 ] || fail "the run ended before its last write: LATEST is $(cat "$work/ckpt/LATEST")"
  lines=$(grep -c '"type":"train"' "$work/run/metrics.jsonl")
  [ "$lines" -eq 6 ] && [ "$(grep -c '"ckpt":{"blocked_s":[0-9.e-]*,"snapshot_s":' "$work/run/metrics.jsonl")" -eq 6 ] ||
    fail "not every metrics line reports ckpt.blocked_s"
  ckpt_dir=$work/sync sets+=(--set checkpoint.async=false)
  train 2 6
  [ "$status" -eq 0 ] || fail "synchronous run: status $status"
  for step in 2 4 6; do
    file=$(printf 'step_%08d.h5' "$step")
    "$tool" verify "$work/ckpt/$file" || fail "$file (asynchronous) does not verify"
    "$tool" inspect "$work/ckpt/$file" | grep '^  /' >"$work/async.txt"
    "$tool" inspect "$work/sync/$file" | grep '^  /' >"$work/sync.txt"
    [ -s "$work/sync.txt" ] && diff "$work/async.txt" "$work/sync.txt" || fail "$file differs between asynchronous and synchronous writes"
  done ;;
*) fail "unknown case $case_name" ;;
esac
echo PASS
