#!/usr/bin/env bash
# Issue 30's checkpoint targets: the training loop's wall time with checkpoints against the same run without,
# on 2 ranks, medians of REPEATS repeats interleaved in time (none, async, sync, none, async, ...):
#   tiny   30 steps, a checkpoint every step
#   small  SMALL_STEPS steps with train.grad_accum = 1, a checkpoint every SMALL_STEPS / 4 steps
# and what MPI_THREAD_MULTIPLE (which asynchronous checkpoints need) costs all-reduce and all-gather.
# The loop's time is rank 0's log from "model: ..." (just before the first step) to "done: ..." (after the
# final checkpoint's write, which the run's end waits for); start-up is the same in every case and left out.
# Usage: perf/ckpt_async_bench.sh [BUILD_DIR] [DIR] [REPEATS] [SMALL_STEPS]   (SMALL_STEPS 0: tiny only)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
dir=${2:-/tmp/llmtrain-ckpt-async-bench}
repeats=${3:-3}
small_steps=${4:-40}
mpirun="bash $root/scripts/mpirun.sh --oversubscribe -np 2"
lscpu | grep 'Model name'
uptime

echo "# MPI thread level: median latency of 5 x N calls, 2 ranks"
for r in $(seq 1 "$repeats"); do
  for level in funneled multiple; do $mpirun "$build/bin/mpi_thread_level_bench" $level; done
done

# loop_seconds PRESET CASE STEPS EXTRA...: prints the loop's seconds.
loop_seconds() {
  local preset=$1 name=$2 steps=$3
  shift 3
  rm -rf "${dir:?}/$name" && mkdir -p "$dir/$name"
  $mpirun "$build/bin/llmtrain" "$root/inputs/$preset.toml" --set train.steps="$steps" --set train.eval_every=0 \
    --set train.run_dir="$dir/$name/run" --set train.check_memory=false "$@" >"$dir/$name.log" 2>&1 ||
    { cat "$dir/$name.log"; exit 1; }
  # A log line: "[   12.345s r0] message"; the second field is the time.
  awk '/\] model: / {sub(/s$/, "", $2); start = $2} /\] done: / {sub(/s$/, "", $2); print $2 - start}' "$dir/$name.log"
}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

run_preset() {
  local preset=$1 steps=$2 every=$3
  shift 3
  local none=() async=() sync=()
  for r in $(seq 1 "$repeats"); do
    none+=("$(loop_seconds "$preset" "$preset-none" "$steps" "$@")")
    async+=("$(loop_seconds "$preset" "$preset-async" "$steps" "$@" --set checkpoint.dir="$dir/$preset-async/ckpt" \
      --set checkpoint.every_steps="$every")")
    sync+=("$(loop_seconds "$preset" "$preset-sync" "$steps" "$@" --set checkpoint.dir="$dir/$preset-sync/ckpt" \
      --set checkpoint.every_steps="$every" --set checkpoint.async=false)")
    echo "$preset repeat $r: none ${none[-1]} s, async ${async[-1]} s, sync ${sync[-1]} s"
  done
  local n a s
  n=$(printf '%s\n' "${none[@]}" | median)
  a=$(printf '%s\n' "${async[@]}" | median)
  s=$(printf '%s\n' "${sync[@]}" | median)
  local blocked
  blocked=$(grep -o '"blocked_s":[0-9.e-]*' "$dir/$preset-async/run/metrics.jsonl" | cut -d: -f2 | awk '{t += $1} END {print t}')
  echo "$preset, $steps steps, a checkpoint every $every: loop none $n s | async $a s ($(echo "$n / $a" | bc -l | cut -c1-5)x) | sync $s s ($(echo "$n / $s" | bc -l | cut -c1-5)x); last async run blocked $blocked s in all"
}

echo "# checkpoint cost, 2 ranks, medians of $repeats"
run_preset tiny 30 1
[ "$small_steps" -gt 0 ] && run_preset small "$small_steps" $((small_steps / 4)) --set train.grad_accum=1
uptime
