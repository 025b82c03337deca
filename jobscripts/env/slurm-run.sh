# The body both Slurm scripts share (sourced after common.env and the network's .env): preflight, then the
# run with pre-emption handling. Usage: slurm_run input.toml [llmtrain options]
#
# Pre-emption: `#SBATCH --signal=B:USR1@T` sends SIGUSR1 to this batch shell T seconds before the time
# limit. Only to the shell: `scancel --signal=USR1` would reach srun's tasks but not the ranks of an mpirun
# started here, so the shell forwards it. Bash runs a trap only after its foreground child ends, so the
# launcher runs in the background and the shell waits for it. llmtrain stops after the current step, saves
# a checkpoint (when [checkpoint] is configured) and exits 0; the script then requeues the job if steps
# remain, and the next start resumes from the checkpoint (checkpoint.resume = "auto").

slurm_run() {
  local config=$1; shift
  local bin=${LLMTRAIN_BIN:-build/bin/llmtrain}
  local run_dir=$LLMTRAIN_RUNS/${SLURM_JOB_NAME}-${SLURM_JOB_ID}
  local attempt=${SLURM_RESTART_COUNT:-0}
  mkdir -p "$run_dir"
  echo "llmtrain job $SLURM_JOB_ID attempt $attempt on $SLURM_JOB_NUM_NODES nodes ($SLURM_JOB_NODELIST): $SLURM_NTASKS ranks," \
       "$SLURM_CPUS_PER_TASK cpus each; interface $LLMTRAIN_IFNAME; run directory $run_dir"
  # --kill-on-bad-exit: one failing rank ends the step at once; --cpu-bind=cores pins each rank to the
  # cores of its --cpus-per-task; block distribution keeps consecutive ranks on one node.
  local launch=(srun --kill-on-bad-exit=1 --cpu-bind=cores --distribution=block:block)
  local args=("$config" "$@" --set "train.run_dir=$run_dir")

  # The same ranks, the same environment: every node checks its files, and the ranks connect in a ring
  # over the chosen interface. A failure here costs seconds, not the allocation.
  if ! "${launch[@]}" "$bin" --preflight "${args[@]}"; then
    echo "llmtrain: preflight failed; not starting the run (see the diagnosis above)" >&2
    return 1
  fi

  stop_signal=0
  trap 'stop_signal=1; echo "llmtrain: stop signal; forwarding it to the ranks"; kill -USR1 "$launcher" 2>/dev/null' USR1 TERM
  "${launch[@]}" "$bin" "${args[@]}" > >(tee -a "$run_dir/attempt-$attempt.log") 2>&1 &
  launcher=$!
  # wait returns early (status > 128) each time a trapped signal arrives: wait again until the launcher
  # is gone, then once more for its exit status.
  while kill -0 "$launcher" 2>/dev/null; do wait "$launcher" || true; done
  local status=0
  wait "$launcher" || status=$?
  trap - USR1 TERM
  if [ "$status" -eq 0 ] && [ "$stop_signal" -eq 1 ] && grep -q "stopped by .* after step" "$run_dir/attempt-$attempt.log"; then
    # A clean stop exits 0, and Slurm requeues only failed or pre-empted jobs: do it here (--requeue).
    echo "llmtrain: stopped before the last step; requeueing job $SLURM_JOB_ID"
    scontrol requeue "$SLURM_JOB_ID"
  fi
  return "$status"
}
