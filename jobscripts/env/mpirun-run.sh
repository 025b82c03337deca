# The body both mpirun scripts share (sourced after common.env and the network's .env).
# Usage: mpirun_run NP HOSTFILE input.toml [llmtrain options]   ($here: the jobscripts/ directory)
# LLMTRAIN_RANKS_PER_NODE (default 8: one per GPU) and LLMTRAIN_CORES_PER_RANK (default 1) set the layout.
# SIGUSR1 or SIGTERM to the script stops the run gracefully after the current step (forwarded to mpirun,
# which forwards it to the ranks). A failed run is relaunched on the hosts that still answer (relaunch.sh).

source "$here/env/relaunch.sh"

# The lines of HOSTFILE whose host still starts a process, into OUT, probed in parallel (a dead host costs
# one LLMTRAIN_PROBE_TIMEOUT_S, default 20).
alive_hosts() {
  local host rest
  while read -r host rest; do
    [ -z "$host" ] || [ "${host#\#}" != "$host" ] && continue
    (timeout "${LLMTRAIN_PROBE_TIMEOUT_S:-20}" mpirun --quiet -np 1 --host "$host" true </dev/null >/dev/null 2>&1 && echo "$host $rest") &
  done <"$1" >"$2"
  wait
}

mpirun_run() {
  local np=$1 hostfile=$2 config=$3; shift 3
  local bin=${LLMTRAIN_BIN:-$here/../build/bin/llmtrain}
  local ppn=${LLMTRAIN_RANKS_PER_NODE:-8} cores=${LLMTRAIN_CORES_PER_RANK:-1}
  local run_dir
  run_dir=$LLMTRAIN_RUNS/llmtrain-$(date +%Y%m%d-%H%M%S)
  mkdir -p "$run_dir"
  [ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Open MPI's daemons on remote nodes do not inherit this shell's environment: pass every OMPI_MCA_*
  # setting as --mca (daemons and ranks) and the others with -x (ranks).
  # --quiet: no Open MPI banners under llmtrain's one-line errors (the exit status is kept).
  # ppn ranks per node, consecutive ranks on one node; each binds itself to `cores` cores nearest its GPU
  # (bind-rank.sh), so mpirun binds none.
  local common=(--quiet --map-by "ppr:$ppn:node" --bind-to none --rank-by core -x LLMTRAIN_CORES_PER_RANK="$cores")
  local v
  for v in ${!OMPI_MCA_@}; do common+=(--mca "${v#OMPI_MCA_}" "${!v}"); done
  for v in ${!NCCL_@} ${!UCX_@} OMP_NUM_THREADS HDF5_USE_FILE_LOCKING; do common+=(-x "$v"); done
  local args=("$config" "$@" --set "train.run_dir=$run_dir")
  mpirun "${common[@]}" -np "$np" --hostfile "$hostfile" "$here/env/bind-rank.sh" "$bin" --preflight "${args[@]}" ||
    { echo "llmtrain: preflight failed; not starting the run (see the diagnosis above)" >&2; return 1; }
  echo "llmtrain: $np ranks, $ppn per node, $cores cores each; interface $LLMTRAIN_IFNAME; run directory $run_dir"

  unset LLMTRAIN_RECOVERY
  local restarts=0 status hosts=$hostfile
  while :; do
    status=0
    run_forwarding_signals mpirun "${common[@]}" -np "$np" --hostfile "$hosts" ${LLMTRAIN_RECOVERY:+-x LLMTRAIN_RECOVERY} \
      "$here/env/bind-rank.sh" "$bin" "${args[@]}" || status=$?
    should_relaunch "$status" "$restarts" || break
    note_failure "$run_dir" "$status"
    hosts=$run_dir/hosts.relaunch-$((restarts + 1))
    alive_hosts "$hostfile" "$hosts"
    local count
    count=$(wc -l <"$hosts")
    [ "$count" -gt 0 ] || { echo "llmtrain: no host of $hostfile answers; not relaunching" >&2; break; }
    restarts=$((restarts + 1))
    [ "$np" -le $((count * ppn)) ] || np=$((count * ppn))
    echo "llmtrain: relaunch $restarts of ${LLMTRAIN_MAX_RESTARTS:-3} on $count hosts ($hosts), $np ranks"
  done
  return "$status"
}
