#!/usr/bin/env bash
# Pre-emption as Slurm does it: SIGUSR1 reaches a running job (mpirun forwards it to every rank); the
# ranks agree to stop after the current step and the job exits 0, saying where it stopped.
# Usage: stop_signal_test.sh MPIRUN LLMTRAIN CONFIG RUN_DIR
set -u
mpirun=$1 llmtrain=$2 config=$3 run_dir=$4
rm -rf "$run_dir"
out=$(mktemp)
"$mpirun" --oversubscribe -np 2 "$llmtrain" "$config" >"$out" 2>&1 &
pid=$!
# Wait (bounded) until the first step is done, so the signal arrives mid-training.
for _ in $(seq 1 600); do
  [ -s "$run_dir/metrics.jsonl" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -USR1 "$pid"
# Bounded wait for the exit: a job that ignores the signal is killed and the test fails.
for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo "FAIL: the job did not stop after SIGUSR1"; cat "$out"; exit 1; fi
wait "$pid"
status=$?
cat "$out"
[ "$status" -eq 0 ] || { echo "FAIL: exit status $status"; exit 1; }
grep -qE "stopped by (SIGUSR1|a stop signal to another rank) after step" "$out" || { echo "FAIL: no 'stopped by SIGUSR1' message"; exit 1; }
echo "PASS"
