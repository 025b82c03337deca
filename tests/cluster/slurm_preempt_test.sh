#!/usr/bin/env bash
# Pre-emption on a real (local) Slurm cluster: jobscripts/slurm-ethernet.sbatch runs tiny with 2 ranks on
# two nodes (network namespaces, scripts/local-slurm.sh); the batch shell gets SIGUSR1 mid-run (as
# `--signal=B:USR1@T` delivers it); its trap must forward it to the ranks, llmtrain must stop after a step
# and exit 0, the script must requeue the job, and the requeued attempt must finish the run. Its step count,
# losses and loader provenance must equal those of an uninterrupted run of the same job, and the requeued
# attempt must have resumed from the checkpoint written on the stop (each step logged once).
# Usage: LLMTRAIN_BUILD_DIR=build tests/cluster/slurm_preempt_test.sh      Exit 77: skipped (reason printed).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${LLMTRAIN_BUILD_DIR:?set LLMTRAIN_BUILD_DIR to the build directory}" && pwd)
llmtrain=$build/bin/llmtrain
work=${SLURM_TEST_DIR:-/tmp/llmtrain-slurm-test}
steps=12
submit_sets=(--set log.provenance=true)
source "$src/tests/cluster/slurm_lib.sh"
losses() { sed -nE 's/.*"loss":([^,]*),.*"step":([0-9]+),.*"type":"train".*/\2 \1/p' "$1"; }

ref=$(submit reference) || fail "sbatch refused the reference job"
job=$(submit preempted --set "checkpoint.dir=$work/checkpoints") || fail "sbatch refused the pre-empted job"
run=$LLMTRAIN_RUNS/preempted-$job
echo "reference job $ref, pre-empted job $job"

# Pre-empt after 3 steps: SIGUSR1 to the batch shell only, as --signal=B:USR1@T sends it.
steps_done() { cat "$run/metrics.jsonl" 2>/dev/null | wc -l; }
for _ in $(seq 1 300); do [ "$(steps_done)" -ge 3 ] && break; sleep 1; done
[ "$(steps_done)" -ge 3 ] || fail "the job took no 3 steps in 300 s"
scancel --batch --signal=USR1 "$job" || fail "scancel --batch --signal=USR1 $job"
for _ in $(seq 1 300); do
  [ "$(scontrol show job "$job" | grep -oE 'Restarts=[0-9]+')" = "Restarts=1" ] && break; sleep 1
done
log0=$run/attempt-0.log
cat "$log0"
grep -q "llmtrain: stop signal; forwarding it to the ranks" "$work/slurm-preempted-$job.out" || fail "the batch shell's trap did not run"
stop_step=$(sed -nE 's/.*stopped by SIGUSR1 after step ([0-9]+) of.*/\1/p' "$log0")
[ -n "$stop_step" ] && [ "$stop_step" -lt "$steps" ] || fail "llmtrain did not stop early on the forwarded signal"
grep -q "requeueing job $job" "$work/slurm-preempted-$job.out" || fail "the script did not requeue the job"
scontrol show job "$job" | grep -q "Restarts=1" || fail "the job was not requeued"
# A requeued job waits about 2 minutes for its begin time; a test need not.
scontrol update JobId="$job" StartTime=now
wait_gone "$job"
wait_gone "$ref"
log1=$run/attempt-1.log
cat "$log1"
grep -q "done: $steps steps" "$log1" || fail "the requeued attempt did not finish the run"
echo "ran: submit, batch-shell trap forwarding SIGUSR1, clean stop after step $stop_step with exit 0, requeue, second attempt to step $steps"

# The finished run against the uninterrupted one: the last loss logged for each step, and the loader's
# provenance (which document spans filled which row of which step on which rank).
refrun=$LLMTRAIN_RUNS/reference-$ref
grep -q "done: $steps steps" "$refrun/attempt-0.log" || fail "the reference run did not finish"
# One stand-in GPU per task from the counted resource, and the preflight's GPU checks skipped on train.device = "cpu".
grep -q 'ok: GPU checks: skipped (train.device = "cpu") \[all ranks\]' "$work/slurm-reference-$ref.out" ||
  fail "the preflight did not note its GPU checks skipped: $(cat "$work/slurm-reference-$ref.out")"
[ "$(losses "$refrun/metrics.jsonl" | wc -l)" -eq "$steps" ] || fail "the reference run's metrics.jsonl lacks $steps train steps"
[ "$(losses "$run/metrics.jsonl" | wc -l)" -ge "$steps" ] || fail "the pre-empted run's metrics.jsonl lacks train steps"
diff <(losses "$refrun/metrics.jsonl") <(losses "$run/metrics.jsonl" | sort -n -k1,1 -s | awk '{last[$1]=$2} END {for (s in last) print s, last[s]}' | sort -n) \
  || fail "losses differ from the uninterrupted run"
for r in 0 1; do
  cmp -s <(sort "$refrun/provenance.rank$r.jsonl") <(sort -u "$run/provenance.rank$r.jsonl") \
    || fail "rank $r's loader provenance differs from the uninterrupted run"
done
grep -qE "resumed from .* at step $stop_step " "$log1" || fail "the requeued attempt did not resume from step $stop_step"
[ "$(losses "$run/metrics.jsonl" | wc -l)" -eq "$steps" ] || fail "metrics.jsonl does not hold each step once"
for r in 0 1; do
  cmp -s <(sort "$refrun/provenance.rank$r.jsonl") <(sort "$run/provenance.rank$r.jsonl") \
    || fail "rank $r's provenance holds steps twice or misses some"
done
echo "resume: the requeued attempt resumed from the checkpoint at step $stop_step; $steps steps, losses and provenance equal the uninterrupted run"
echo PASS
