#!/usr/bin/env bash
# Chaos soak: `tiny` on the local Slurm cluster (scripts/local-slurm.sh: 2 nodes x 2 ranks) through
# jobscripts/slurm-ethernet.sbatch, with a checkpoint every step, while for MINUTES a random rank is
# SIGKILLed every KILL_EVERY seconds and, once (half-way), a whole node dies (every process of its
# namespace, slurmd included); then the run finishes undisturbed. The batch script relaunches inside the allocation after each failure (jobscripts/env/relaunch.sh).
# At the end it checks the run against a reference chain that resumes from disk checkpoints at the same
# steps with the same rank counts (4 ranks up to the node's death, 2 after; every other relaunch keeps the
# rank count, and a resume on the same ranks is bitwise a straight run):
#   - the final checkpoint's datasets (parameters, moments, loader state) equal the reference's, checksum
#     for checksum;
#   - the loader's provenance of all attempts (each trimmed at its resume) equals the reference chain's, row
#     for row: every row delivered once, none lost (exactly-once through every failure);
#   - every step's last logged loss equals the reference's;
# and prints failures survived, steps lost and recovery time (median, max), from the "recovery" lines.
# Usage: perf/chaos/soak.sh [MINUTES] [KILL_EVERY_S] [BUILD_DIR]     (defaults 5, 30, build)
# Exit 0: PASS; 1: a check failed; 77: the local cluster cannot start here.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
minutes=${1:-5}
kill_every=${2:-30}
build=$(cd "${3:-$src/build}" && pwd)
llmtrain=$build/bin/llmtrain tool=$build/bin/llmtrain-ckpt
work=${SOAK_DIR:-/tmp/llmtrain-soak}
[ -x "$llmtrain" ] && [ -x "$tool" ] || { echo "FAIL: build llmtrain and llmtrain-ckpt in $build first"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
say() { echo "[soak $(date -u +%H:%M:%S)] $*"; }

export LOCAL_SLURM_DIR=$work/cluster
bash "$src/scripts/local-slurm.sh" up >"$work/up.log" 2>&1
status=$?
[ "$status" -eq 77 ] && { cat "$work/up.log"; echo "SKIPPED: the local Slurm cluster cannot start here"; exit 77; }
[ "$status" -eq 0 ] || { cat "$work/up.log"; bash "$src/scripts/local-slurm.sh" down; fail "local-slurm.sh up exited $status"; }
trap 'bash "$src/scripts/local-slurm.sh" down >/dev/null 2>&1' EXIT
export SLURM_CONF=$LOCAL_SLURM_DIR/etc/slurm.conf LLMTRAIN_RUNS=$work/runs LLMTRAIN_BIN=$llmtrain LLMTRAIN_IFNAME=eth0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The run's length: MINUTES at the pace of 4 ranks here (measured on 5 steps first), halved for the time
# the failures take, so that most of the run is under fire.
common=(--set train.warmup_steps=1 --set train.eval_every=0 --set train.eval_batches=1 --set log.provenance=true
        --set checkpoint.every_steps=1)
timeout 300 mpirun --oversubscribe -np 4 "$llmtrain" "$src/inputs/tiny.toml" "${common[@]}" --set train.steps=5 \
  --set train.run_dir="$work/calibrate" >"$work/calibrate.log" 2>&1 || fail "calibration run failed: $(tail "$work/calibrate.log")"
step_s=$(grep -o '"step":[0-9.e-]*}' "$work/calibrate/metrics.jsonl" | tail -3 | grep -oE '[0-9.e-]+' | awk '{t += $1} END {print t / NR}')
steps=$(awk -v m="$minutes" -v s="$step_s" 'BEGIN {n = int(m * 60 / s / 2); print n < 20 ? 20 : n}')
say "a step takes ${step_s} s on 4 ranks: $steps steps; for $minutes minutes a rank is killed every $kill_every s"
common+=(--set train.steps="$steps")

job=$(cd "$src" && LLMTRAIN_MAX_RESTARTS=1000 sbatch --parsable --job-name=soak --output="$work/slurm-%x-%j.out" \
  --nodes=2 --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-task=0 --time=$((minutes * 3 + 10)) \
  jobscripts/slurm-ethernet.sbatch inputs/tiny.toml "${common[@]}" --set checkpoint.dir="$work/ckpt") || fail "sbatch"
run=$LLMTRAIN_RUNS/soak-$job
in_queue() { [ -n "$(squeue -h -j "$job" -o %T 2>/dev/null)" ]; }
last_step() { grep -oE '"step":[0-9]+,"time_s"' "$run/metrics.jsonl" 2>/dev/null | tail -1 | grep -oE '[0-9]+'; }
for _ in $(seq 1 600); do [ -n "$(last_step)" ] && break; sleep 0.5; done
[ -n "$(last_step)" ] || fail "the soak job took no step"

started=$(date +%s) node_killed=0 kills=0
while in_queue && [ $(( $(date +%s) - started )) -lt $((minutes * 60)) ]; do
  sleep "$kill_every"
  in_queue || break
  if [ "$node_killed" -eq 0 ] && [ $(( $(date +%s) - started )) -ge $((minutes * 30)) ]; then
    say "killing node llsn2 (every process of its namespace) after step $(last_step)"
    date +%s.%N >>"$work/kill_times"
    ip netns pids llsn2 | xargs -r kill -KILL
    node_killed=1
  else
    rank=$(pgrep -f "^$llmtrain .*soak-$job" | shuf -n 1)
    [ -n "$rank" ] || continue
    say "killing rank process $rank after step $(last_step)"
    date +%s.%N >>"$work/kill_times"
    kill -KILL "$rank"
  fi
  kills=$((kills + 1))
done
say "no more kills after $kills; waiting for the run to finish"
for _ in $(seq 1 3600); do in_queue || break; sleep 1; done
in_queue && fail "the soak job is still running an hour after the last kill"
out=$work/slurm-soak-$job.out
grep -q "done: $steps steps" "$run"/attempt-*.log || { cat "$out"; fail "the soak run did not finish its $steps steps"; }
say "the soak job finished after $kills kills"

# Segments: each attempt's rank count and the step it resumed from.
segments=$(for log in $(ls -tr "$run"/attempt-*.log); do
  ranks=$(sed -nE 's/.*llmtrain [^ ]+: ([0-9]+) ranks on .*/\1/p' "$log" | head -1)
  from=$(sed -nE 's/.*resumed from .* at step ([0-9]+) .*/\1/p' "$log" | head -1)
  echo "${from:-0} $ranks"
done)
echo "attempts (resumed from step, ranks):" $segments
# The reference chain: a straight run on the first rank count to the first step where the count changes,
# continued from that step's checkpoint on the next count; mpirun on this host (the bits do not depend on
# where a rank runs). Each segment keeps its checkpoint at the step where the next one starts (keep_every).
ref=$work/reference
mkdir -p "$ref"
prev_ranks="" chain=() 
while read -r from ranks; do
  [ "$ranks" = "$prev_ranks" ] && continue
  chain+=("$from $ranks"); prev_ranks=$ranks
done <<<"$segments"
for i in "${!chain[@]}"; do
  read -r from ranks <<<"${chain[$i]}"
  next=$steps
  [ $((i + 1)) -lt ${#chain[@]} ] && next=$(echo "${chain[$((i + 1))]}" | cut -d' ' -f1)
  resume=(--set checkpoint.resume=never)
  [ "$from" -gt 0 ] && resume=(--set checkpoint.resume="$ref/ckpt-$((i - 1))/$(printf 'step_%08d.h5' "$from")")
  say "reference segment $i: $ranks ranks, steps $from..$next"
  mpirun --oversubscribe -np "$ranks" "$llmtrain" "$src/inputs/tiny.toml" "${common[@]}" "${resume[@]}" \
    --set train.run_dir="$ref/run" --set checkpoint.dir="$ref/ckpt-$i"  --set checkpoint.keep_last=1 \
    --set checkpoint.keep_every="$next" >"$ref/segment-$i.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 36000); do
    [ -f "$ref/ckpt-$i/$(printf 'step_%08d.h5' "$next")" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  # A clean stop after the step the next segment resumes from (mpirun forwards SIGUSR1 to the ranks).
  [ "$next" -lt "$steps" ] && kill -USR1 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  [ -f "$ref/ckpt-$i/$(printf 'step_%08d.h5' "$next")" ] || fail "reference segment $i wrote no checkpoint at step $next"
done

final=$(printf 'step_%08d.h5' "$steps")
"$tool" inspect "$work/ckpt/$final" | grep '^  /' >"$work/final.soak"
"$tool" inspect "$ref/ckpt-$((${#chain[@]} - 1))/$final" | grep '^  /' >"$work/final.ref"
[ -s "$work/final.soak" ] && cmp -s "$work/final.soak" "$work/final.ref" ||
  fail "the final checkpoint differs from the reference chain's (diff $work/final.soak $work/final.ref)"
losses() { sed -nE 's/.*"loss":([^,]*),.*"step":([0-9]+),.*"type":"train".*/\2 \1/p' "$1" | awk '{last[$1] = $2} END {for (s in last) print s, last[s]}' | sort -n; }
diff <(losses "$run/metrics.jsonl") <(losses "$ref/run/metrics.jsonl") >/dev/null || fail "losses differ from the reference chain's"
cat "$run"/provenance.rank*.jsonl | sort >"$work/provenance.soak"
cat "$ref"/run/provenance.rank*.jsonl | sort >"$work/provenance.ref"
[ "$(sort -u "$work/provenance.soak" | wc -l)" -eq "$(wc -l <"$work/provenance.soak")" ] || fail "a provenance row appears twice"
cmp -s "$work/provenance.soak" "$work/provenance.ref" || fail "the loader's provenance differs from the reference chain's"

failures=$(grep -c "llmtrain: the run failed at" "$out")
grep -ho '"recovery":{[^}]*}' "$run/metrics.jsonl" >"$work/recovery"
lost=$(grep -oE '"lost_steps":[0-9]+' "$work/recovery" | cut -d: -f2 | awk '{t += $1; if ($1 > m) m = $1} END {printf "%d in all, at most %d per failure", t, m}')
times=$(grep -oE '"seconds":[0-9.e+-]+' "$work/recovery" | cut -d: -f2 | sort -g |
  awk '{v[NR] = $1} END {if (NR) printf "median %.1f s, max %.1f s over %d recoveries", v[int((NR + 1) / 2)], v[NR], NR}')
# From the kill itself: the launcher returns some seconds after it (srun's KillWait, mpirun's wind-down);
# each failure line carries the launcher's return time, the recovery line the seconds after that.
from_kill=$(sed -E 's/.*"failed_at":([^,]*),"lost_steps":[0-9]+,"seconds":([^}]*)}.*/\2 \1/' "$work/recovery" |
  while read -r seconds failed; do
    killed=$(awk -v f="$failed" '$1 <= f {k = $1} END {print k}' "$work/kill_times")
    [ -n "$killed" ] && awk -v f="$failed" -v k="$killed" -v s="$seconds" 'BEGIN {print f - k + s}'
  done | sort -g | awk '{v[NR] = $1} END {if (NR) printf "median %.1f s, max %.1f s", v[int((NR + 1) / 2)], v[NR]}')
echo "soak: $minutes min, $steps steps, a kill every $kill_every s ($kills kills, one of them node llsn2)"
echo "failures survived: $failures; steps lost: $lost"
echo "recovery, from the launcher's return to the end of the first step: $times"
echo "recovery, from the kill to the end of the first step: $from_kill"
echo "final checkpoint, every step's loss and the loader's provenance equal the reference chain's"
echo PASS
