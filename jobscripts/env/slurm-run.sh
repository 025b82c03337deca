# The body both Slurm scripts share (sourced after common.env and the network's .env): preflight, then the
# run with pre-emption handling and relaunch after a failure. Usage: slurm_run input.toml [llmtrain options]
#
# Pre-emption: `#SBATCH --signal=B:USR1@T` sends SIGUSR1 to this batch shell T seconds before the time
# limit. Only to the shell: `scancel --signal=USR1` would reach srun's tasks but not the ranks of an mpirun
# started here, so the shell forwards it (relaunch.sh). llmtrain stops after the current step, saves a
# checkpoint (when [checkpoint] is configured) and exits 0; the script then requeues the job if steps
# remain, and the next start resumes from the checkpoint (checkpoint.resume = "auto").
#
# Failure: `#SBATCH --no-kill` keeps the allocation when a node dies; a failed run is relaunched with a new
# srun over the nodes that still run a task (relaunch.sh), the same ranks per node.

source "$(dirname "${BASH_SOURCE[0]}")/relaunch.sh"

# The allocation's nodes that still start a task, comma-separated, probed in parallel (a dead node costs one
# LLMTRAIN_PROBE_TIMEOUT_S, default 20). --overlap: the failed step may still hold the CPUs while Slurm
# waits for the dead node's part of it to end.
alive_nodes() {
  local node probes=()
  for node in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
    (timeout "${LLMTRAIN_PROBE_TIMEOUT_S:-20}" srun --overlap --nodes=1 --ntasks=1 --nodelist="$node" --cpu-bind=none \
       true >/dev/null 2>&1 && echo "$node") &
    probes+=($!)
  done
  wait "${probes[@]}"
}

slurm_run() {
  local config=$1; shift
  local bin=${LLMTRAIN_BIN:-build/bin/llmtrain}
  local run_dir=$LLMTRAIN_RUNS/${SLURM_JOB_NAME}-${SLURM_JOB_ID}
  local attempt=${SLURM_RESTART_COUNT:-0}
  local per_node=${SLURM_NTASKS_PER_NODE:-$((SLURM_NTASKS / SLURM_JOB_NUM_NODES))}
  mkdir -p "$run_dir"
  echo "llmtrain job $SLURM_JOB_ID attempt $attempt on $SLURM_JOB_NUM_NODES nodes ($SLURM_JOB_NODELIST): $SLURM_NTASKS ranks," \
       "$SLURM_CPUS_PER_TASK cpus each; interface $LLMTRAIN_IFNAME; run directory $run_dir"
  # --kill-on-bad-exit: one failing rank ends the step at once; block distribution keeps consecutive ranks
  # on one node. Each rank binds itself to the cores (and HCA) nearest its GPU (bind-rank.sh), so srun binds none.
  local launch=(srun --kill-on-bad-exit=1 --cpu-bind=none --distribution=block:block)
  local bind
  bind=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bind-rank.sh
  local args=("$config" "$@" --set "train.run_dir=$run_dir")

  # The same ranks, the same environment: every node checks its files, and the ranks connect in a ring
  # over the chosen interface. A failure here costs seconds, not the allocation.
  if ! "${launch[@]}" "$bind" "$bin" --preflight "${args[@]}"; then
    echo "llmtrain: preflight failed; not starting the run (see the diagnosis above)" >&2
    return 1
  fi

  unset LLMTRAIN_RECOVERY
  local restarts=0 log=$run_dir/attempt-$attempt.log status nodes
  while :; do
    status=0
    run_forwarding_signals "${launch[@]}" "$bind" "$bin" "${args[@]}" > >(tee -a "$log") 2>&1 || status=$?
    should_relaunch "$status" "$restarts" || break
    note_failure "$run_dir" "$status"
    nodes=$(alive_nodes | sort | paste -sd,)
    [ -n "$nodes" ] || { echo "llmtrain: no node of the allocation answers; not relaunching" >&2; break; }
    restarts=$((restarts + 1))
    local count
    count=$(echo "$nodes" | tr ',' '\n' | wc -l)
    echo "llmtrain: relaunch $restarts of ${LLMTRAIN_MAX_RESTARTS:-3} on $count nodes ($nodes), $((count * per_node)) ranks"
    launch=(srun --overlap --kill-on-bad-exit=1 --cpu-bind=none --distribution=block:block --nodes="$count"
            --nodelist="$nodes" --ntasks=$((count * per_node)) --ntasks-per-node="$per_node")
    log=$run_dir/attempt-$attempt-relaunch-$restarts.log
  done
  if [ "$status" -eq 0 ] && [ "$stop_signal" -eq 1 ] && grep -q "stopped by .* after step" "$log"; then
    # A clean stop exits 0, and Slurm requeues only failed or pre-empted jobs: do it here (--requeue).
    echo "llmtrain: stopped before the last step; requeueing job $SLURM_JOB_ID"
    scontrol requeue "$SLURM_JOB_ID"
  fi
  return "$status"
}
