#!/usr/bin/env bash
# Issue 30's memory-tier target: the training loop's wall time with a memory snapshot every step against the
# same run without, on 2 ranks, medians of REPEATS repeats interleaved in time (none, memory, none, ...).
# Both runs have a checkpoint.dir (the memory tier needs one) and write only the final disk checkpoint, so the
# difference is the memory tier: the snapshot copy on the training thread, and the part file write (and, on
# several nodes, the buddy send) on the background thread. The loop's time is measured as in
# perf/ckpt_async_bench.sh (rank 0's log from "model: ..." to "done: ...").
# Usage: perf/ckpt_memory_bench.sh [BUILD_DIR] [DIR] [REPEATS] [PRESET] [STEPS] [MEMORY_DIR]
#   MEMORY_DIR defaults to the run's default (/dev/shm/llmtrain-<key>).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
dir=${2:-/tmp/llmtrain-ckpt-memory-bench}
repeats=${3:-3}
preset=${4:-tiny}
steps=${5:-30}
memory_dir=${6:-}
mpirun="bash $root/scripts/mpirun.sh --oversubscribe -np 2"
lscpu | grep 'Model name'
uptime

# loop_seconds CASE EXTRA...: prints the loop's seconds.
loop_seconds() {
  local name=$1
  shift
  rm -rf "${dir:?}/$name" && mkdir -p "$dir/$name"
  $mpirun "$build/bin/llmtrain" "$root/inputs/$preset.toml" --set train.steps="$steps" --set train.eval_every=0 \
    --set train.run_dir="$dir/$name/run" --set train.check_memory=false --set checkpoint.dir="$dir/$name/ckpt" \
    --set checkpoint.resume=never "$@" >"$dir/$name.log" 2>&1 || { cat "$dir/$name.log"; exit 1; }
  awk '/\] model: / {sub(/s$/, "", $2); start = $2} /\] done: / {sub(/s$/, "", $2); print $2 - start}' "$dir/$name.log"
}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

memory=(--set checkpoint.memory_every_steps=1)
[ -n "$memory_dir" ] && memory+=(--set checkpoint.memory_dir="$memory_dir")
none=() mem=()
for r in $(seq 1 "$repeats"); do
  none+=("$(loop_seconds "$preset-none")")
  mem+=("$(loop_seconds "$preset-memory" "${memory[@]}")")
  echo "$preset repeat $r: none ${none[-1]} s, memory every step ${mem[-1]} s"
done
n=$(printf '%s\n' "${none[@]}" | median)
m=$(printf '%s\n' "${mem[@]}" | median)
blocked=$(grep -o '"blocked_s":[0-9.e-]*' "$dir/$preset-memory/run/metrics.jsonl" | cut -d: -f2 | awk '{t += $1} END {print t}')
snapshot=$(grep -o '"snapshot_s":[0-9.e-]*' "$dir/$preset-memory/run/metrics.jsonl" | cut -d: -f2 | awk '{t += $1} END {print t}')
echo "$preset, $steps steps, 2 ranks, medians of $repeats: loop none $n s | memory snapshot every step $m s" \
     "($(echo "$n / $m" | bc -l | cut -c1-5)x); last memory run: snapshot copies $snapshot s, waits for the previous snapshot $blocked s in all (rank 0)"
uptime
