#!/usr/bin/env bash
# Relaunch after a lost rank, through jobscripts/mpirun-ethernet.sh on this host (loopback; 2 ranks): tiny
# with a checkpoint every step; once it has logged 4 steps one rank is SIGKILLed. The script must log the
# failure with its last step, relaunch (LLMTRAIN_MAX_RESTARTS), and the relaunched run must resume, report
# "recovery": {"failed_at": F, "lost_steps": K, ...} on its first metrics line with K = last step - resumed step, finish
# with exit 0, and log the same loss as an uninterrupted run at every step. With LLMTRAIN_MAX_RESTARTS=0
# the same kill ends the script with a non-zero status and no relaunch.
# Usage: mpirun_relaunch_test.sh LLMTRAIN WORK
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
llmtrain=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
echo "localhost slots=2" >"$work/hosts"
export LLMTRAIN_BIN=$llmtrain LLMTRAIN_IFNAME=lo LLMTRAIN_RANKS_PER_NODE=2
steps=10
sets=(--set train.steps=$steps --set train.warmup_steps=1 --set train.eval_every=0 --set train.eval_batches=1)
losses() { sed -nE 's/.*"loss":([^,]*),.*"step":([0-9]+),.*"type":"train".*/\2 \1/p' "$1" | awk '{last[$1] = $2} END {for (s in last) print s, last[s]}' | sort -n; }

# launch NAME [options]: the script in the background; its output in $work/NAME.out, its pid in $pid.
launch() {
  local name=$1; shift
  LLMTRAIN_RUNS=$work/$name timeout 300 "$src/jobscripts/mpirun-ethernet.sh" 2 "$work/hosts" "$src/inputs/tiny.toml" \
    "${sets[@]}" "$@" >"$work/$name.out" 2>&1 &
  pid=$!
}
# kill_a_rank_after NAME STEPS: SIGKILL to one rank once the run logged STEPS steps.
kill_a_rank_after() {
  local metrics
  for _ in $(seq 1 1200); do
    metrics=$(find "$work/$1" -name metrics.jsonl 2>/dev/null | head -1)
    [ -n "$metrics" ] && [ "$(grep -c '"type":"train"' "$metrics")" -ge "$2" ] && break
    kill -0 "$pid" 2>/dev/null || fail "$1 ended before step $2: $(cat "$work/$1.out")"
    sleep 0.1
  done
  local rank
  rank=$(pgrep -f "^$llmtrain .*$work/$1/" | head -1)
  [ -n "$rank" ] || fail "no rank of $1 to kill"
  kill -KILL "$rank"
  echo "killed rank process $rank of $1 after step $2"
}

launch reference
wait "$pid" || fail "the reference run failed: $(cat "$work/reference.out")"

LLMTRAIN_MAX_RESTARTS=2 launch relaunched --set checkpoint.dir="$work/relaunched/ckpt" --set checkpoint.every_steps=1
kill_a_rank_after relaunched 4
wait "$pid"
status=$?
cat "$work/relaunched.out"
[ "$status" -eq 0 ] || fail "exit status $status after a relaunch"
grep -qE "llmtrain: the run failed at .* after step [0-9]+ \(exit status [0-9]+\)" "$work/relaunched.out" || fail "no failure line"
grep -q "llmtrain: relaunch 1 of 2 on 1 hosts" "$work/relaunched.out" || fail "no relaunch line"
last=$(sed -nE 's/.*the run failed at .* after step ([0-9]+) .*/\1/p' "$work/relaunched.out")
resumed=$(sed -nE 's/.*resumed from .*step_[0-9]+\.h5 at step ([0-9]+) .*/\1/p' "$work/relaunched.out")
[ -n "$resumed" ] || fail "the relaunched run did not resume from a checkpoint"
grep -q "done: $steps steps" "$work/relaunched.out" || fail "the relaunched run did not finish"
metrics=$(find "$work/relaunched" -name metrics.jsonl | head -1)
line=$(grep '"recovery"' "$metrics")
[ "$(echo "$line" | wc -l)" -eq 1 ] || fail "expected one metrics line with recovery, got: $line"
echo "$line" | grep -qE "\"recovery\":\{\"failed_at\":[0-9.e+-]+,\"lost_steps\":$((last - resumed)),\"seconds\":[0-9.e+-]+\}" ||
  fail "recovery should report $((last - resumed)) lost steps (failed after $last, resumed at $resumed): $line"
echo "$line" | grep -qE "\"step\":$((resumed + 1))," || fail "the recovery is not on the first step after the resume: $line"
diff <(losses "$(find "$work/reference" -name metrics.jsonl)") <(losses "$metrics") || fail "losses differ from the uninterrupted run"

LLMTRAIN_MAX_RESTARTS=0 launch once --set checkpoint.dir="$work/once/ckpt" --set checkpoint.every_steps=1
kill_a_rank_after once 2
wait "$pid"
status=$?
cat "$work/once.out"
[ "$status" -ne 0 ] || fail "a lost rank with LLMTRAIN_MAX_RESTARTS=0 exited 0"
grep -q "LLMTRAIN_MAX_RESTARTS = 0 relaunches are used up" "$work/once.out" || fail "no message about the restart limit"
grep -q "relaunch 1 of" "$work/once.out" && fail "relaunched with LLMTRAIN_MAX_RESTARTS=0"
echo PASS
