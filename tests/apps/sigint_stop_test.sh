#!/usr/bin/env bash
# Ctrl-C (SIGINT) to a running llmtrain stops it gracefully, like SIGTERM and SIGUSR1: it finishes the step,
# writes a checkpoint, says "stopped by SIGINT" and exits 0. The rank keeps its name: ps, top and pgrep
# show "llmtrain" (/proc/<pid>/comm), also after it re-executed itself for the BLAS kernels.
# Usage: sigint_stop_test.sh LLMTRAIN CONFIG WORK_DIR
set -u
set -m  # job control: the background job gets SIGINT's default disposition, as a terminal's foreground job does
llmtrain=$1 config=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
out="$work/out"
"$llmtrain" "$config" --set train.run_dir="$work/run" --set checkpoint.dir="$work/ckpt" >"$out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do  # bounded: until the first step is logged
  [ -s "$work/run/metrics.jsonl" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
comm=$(cat "/proc/$pid/comm" 2>/dev/null)
tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q '^OPENBLAS_CORETYPE=' && echo "note: the process re-executed itself"
kill -INT "$pid"
for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo "FAIL: no stop after SIGINT"; cat "$out"; exit 1; fi
wait "$pid"
status=$?
cat "$out"
[ "$comm" = llmtrain ] || { echo "FAIL: the process is named '$comm', not llmtrain"; exit 1; }
[ "$status" -eq 0 ] || { echo "FAIL: exit status $status"; exit 1; }
grep -qE "stopped by SIGINT after step [0-9]+ of" "$out" || { echo "FAIL: no 'stopped by SIGINT after step'"; exit 1; }
ls "$work/ckpt"/step_*.h5 >/dev/null 2>&1 || { echo "FAIL: no checkpoint written"; exit 1; }
echo "PASS"
