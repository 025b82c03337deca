# Relaunch inside the allocation, shared by slurm-run.sh and mpirun-run.sh (sourced after common.env).
#
# A run that fails (a rank or a node died: a non-zero exit without a stop signal) is started again on the
# nodes that still answer, up to LLMTRAIN_MAX_RESTARTS times (default 3; 0: never). Open MPI 4.1 has no
# ULFM, so a world cannot shrink in place: the relaunch is a new MPI job that resumes from the newest state
# (checkpoint.resume = "auto"), on any number of ranks. The script logs the failure's time and the last step
# the failed run logged, and hands both to the relaunched run (LLMTRAIN_RECOVERY), which writes
# "recovery": {"lost_steps": K, "seconds": T} into its first metrics line (T: from the failure to the end of
# its first step). docs/checkpoints.md, "Relaunch".

# The last step RUN_DIR/metrics.jsonl logged (0 when none).
last_logged_step() {
  local step
  step=$(grep -oE '"step":[0-9]+,"time_s"' "$1/metrics.jsonl" 2>/dev/null | tail -1 | grep -oE '[0-9]+')
  echo "${step:-0}"
}

# note_failure RUN_DIR STATUS: call as soon as the launcher has exited. Logs the failure and exports
# LLMTRAIN_RECOVERY for the next launch.
note_failure() {
  local failed_at last
  failed_at=$(date +%s.%N)
  last=$(last_logged_step "$1")
  echo "llmtrain: the run failed at $(date -u -d "@${failed_at%.*}" +%Y-%m-%dT%H:%M:%SZ) ($failed_at) after step $last (exit status $2)"
  export LLMTRAIN_RECOVERY="failed_at=$failed_at,last_step=$last"
}

# run_forwarding_signals COMMAND...: runs the launcher in the background so that this shell's trap can
# forward SIGUSR1/SIGTERM to it (bash runs a trap only after its foreground child ends); returns its exit
# status. Sets stop_signal=1 when a stop signal arrived.
run_forwarding_signals() {
  stop_signal=0
  trap 'stop_signal=1; echo "llmtrain: stop signal; forwarding it to the ranks"; kill -USR1 "$launcher" 2>/dev/null' USR1 TERM
  "$@" &
  launcher=$!
  # wait returns early (status > 128) each time a trapped signal arrives: wait again until the launcher
  # is gone, then once more for its exit status.
  while kill -0 "$launcher" 2>/dev/null; do wait "$launcher" || true; done
  local status=0
  wait "$launcher" || status=$?
  trap - USR1 TERM
  return "$status"
}

# should_relaunch STATUS RESTARTS: whether a launch that ended with STATUS after RESTARTS relaunches gets
# another one (says why not when it does not).
should_relaunch() {
  local status=$1 restarts=$2 max=${LLMTRAIN_MAX_RESTARTS:-3}
  [ "$status" -ne 0 ] && [ "$stop_signal" -eq 0 ] || return 1
  if [ "$restarts" -ge "$max" ]; then
    echo "llmtrain: the run failed (exit status $status) and LLMTRAIN_MAX_RESTARTS = $max relaunches are used up" >&2
    return 1
  fi
}
