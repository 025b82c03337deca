#!/usr/bin/env bash
# SIGUSR1 that reaches the ranks while MPI is still starting (the first fraction of a second) stops the job
# gracefully like a later one, instead of killing the ranks by the signal's default action.
# The moment is found without timing: Open MPI installs its SIGSEGV handler inside MPI_Init, so once a rank's
# /proc/<pid>/status shows SIGSEGV caught, the rank is inside or just past MPI_Init; the signal is sent then.
# Usage: early_stop_signal_test.sh MPIRUN LLMTRAIN CONFIG RUN_DIR
set -u
mpirun=$1 llmtrain=$2 config=$3 run_dir=$4
rm -rf "$run_dir"
# In the sanitized tree AddressSanitizer installs its own SIGSEGV handler before main, which would make the
# ranks look as if they were in MPI_Init before our handlers exist: leave SIGSEGV to Open MPI there.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
out=$(mktemp)
"$mpirun" --oversubscribe -np 2 "$llmtrain" "$config" --set train.run_dir="$run_dir" >"$out" 2>&1 &
pid=$!
exe=$(readlink -f "$llmtrain")
caught() {  # caught PID SIGNUM: is the signal's handler installed?
  local mask
  mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$mask" ] && (( (0x$mask >> ($2 - 1)) & 1 ))
}
signalled=()
for _ in $(seq 1 3000); do  # bounded: about 30 s
  kill -0 "$pid" 2>/dev/null || break
  for rank in $(pgrep -P "$pid" 2>/dev/null); do
    [[ " ${signalled[*]} " == *" $rank "* ]] && continue
    # A child not yet exec'd still runs mpirun's image, with mpirun's handlers: wait for llmtrain's.
    [ "$(readlink "/proc/$rank/exe" 2>/dev/null)" = "$exe" ] || continue
    if caught "$rank" 11; then
      caught "$rank" 10 && echo "rank process $rank: SIGUSR1 handler installed before MPI_Init finished" \
                        || echo "rank process $rank: SIGUSR1 not handled yet while MPI starts"
      kill -USR1 "$rank"
      signalled+=("$rank")
    fi
  done
  [ ${#signalled[@]} -ge 2 ] && break
  sleep 0.01
done
for _ in $(seq 1 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo "FAIL: the job did not stop"; cat "$out"; exit 1; fi
wait "$pid"
status=$?
cat "$out"
[ ${#signalled[@]} -eq 2 ] || { echo "FAIL: found ${#signalled[@]} of 2 rank processes starting MPI"; exit 1; }
[ "$status" -eq 0 ] || { echo "FAIL: exit status $status (a rank was killed by the signal?)"; exit 1; }
grep -qE "stopped by SIGUSR1 after step 1 of" "$out" || { echo "FAIL: no 'stopped by SIGUSR1 after step 1'"; exit 1; }
echo "PASS"
