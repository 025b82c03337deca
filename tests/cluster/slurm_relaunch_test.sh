#!/usr/bin/env bash
# Relaunch after a failure on a real (local) Slurm cluster (scripts/local-slurm.sh: two nodes in network
# namespaces): jobscripts/slurm-ethernet.sbatch runs tiny with 2 ranks on 2 nodes and a checkpoint every
# step; after 3 steps one rank is SIGKILLed. srun ends the step (--kill-on-bad-exit), the batch script must
# log the failure, probe the nodes, relaunch with a new srun inside the same allocation (--no-kill), and the
# relaunched run must resume, report "recovery" on its first metrics line and finish every step with the
# losses of an uninterrupted run.
# Usage: LLMTRAIN_BUILD_DIR=build tests/cluster/slurm_relaunch_test.sh      Exit 77: skipped (reason printed).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${LLMTRAIN_BUILD_DIR:?set LLMTRAIN_BUILD_DIR to the build directory}" && pwd)
llmtrain=$build/bin/llmtrain
work=${SLURM_TEST_DIR:-/tmp/llmtrain-slurm-relaunch-test}
steps=10
source "$src/tests/cluster/slurm_lib.sh"
losses() { sed -nE 's/.*"loss":([^,]*),.*"step":([0-9]+),.*"type":"train".*/\2 \1/p' "$1" | awk '{last[$1] = $2} END {for (s in last) print s, last[s]}' | sort -n; }

ref=$(submit reference) || fail "sbatch refused the reference job"
job=$(LLMTRAIN_MAX_RESTARTS=2 submit failing --set "checkpoint.dir=$work/checkpoints" --set checkpoint.every_steps=1) ||
  fail "sbatch refused the job"
run=$LLMTRAIN_RUNS/failing-$job
steps_done() { local n; n=$(grep -c '"type":"train"' "$run/metrics.jsonl" 2>/dev/null); echo "${n:-0}"; }
for _ in $(seq 1 300); do [ "$(steps_done)" -ge 3 ] && break; sleep 1; done
[ "$(steps_done)" -ge 3 ] || fail "the job took no 3 steps in 300 s"
rank=$(pgrep -f "^$llmtrain .*failing-$job" | head -1)
[ -n "$rank" ] || fail "no rank process to kill"
kill -KILL "$rank"
echo "killed rank process $rank after step $(steps_done)"
wait_gone "$job"
wait_gone "$ref"
out=$work/slurm-failing-$job.out
cat "$out"
grep -qE "llmtrain: the run failed at .* after step [0-9]+" "$out" || fail "no failure line"
grep -qE "llmtrain: relaunch 1 of 2 on 2 nodes" "$out" || fail "no relaunch over both nodes"
log=$run/attempt-0-relaunch-1.log
[ -f "$log" ] || fail "no log of the relaunch"
grep -q "done: $steps steps" "$log" || fail "the relaunched run did not finish"
grep -qE "resumed from .*step_[0-9]+\.h5 at step [0-9]+" "$log" || fail "the relaunch did not resume"
grep -qE '"recovery":\{"failed_at":[0-9.e+-]+,"lost_steps":[0-9]+,"seconds":[0-9.e+-]+\}' "$run/metrics.jsonl" || fail "no recovery on a metrics line"
grep -o '"recovery":{[^}]*}' "$run/metrics.jsonl"
diff <(losses "$LLMTRAIN_RUNS/reference-$ref/metrics.jsonl") <(losses "$run/metrics.jsonl") || fail "losses differ from the uninterrupted run"
echo PASS
