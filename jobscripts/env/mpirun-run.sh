# The body both mpirun scripts share (sourced after common.env and the network's .env).
# Usage: mpirun_run NP HOSTFILE input.toml [llmtrain options]   ($here: the jobscripts/ directory)
# LLMTRAIN_RANKS_PER_NODE (default 8: one per GPU) and LLMTRAIN_CORES_PER_RANK (default 1) set the layout.

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
  local launch=(mpirun --quiet -np "$np" --hostfile "$hostfile"
                # ppn ranks per node, each bound to its own `cores` cores, consecutive ranks on one node.
                --map-by "ppr:$ppn:node:PE=$cores" --bind-to core --rank-by core)
  local v
  for v in ${!OMPI_MCA_@}; do launch+=(--mca "${v#OMPI_MCA_}" "${!v}"); done
  for v in ${!NCCL_@} ${!UCX_@} OMP_NUM_THREADS HDF5_USE_FILE_LOCKING; do launch+=(-x "$v"); done
  local args=("$config" "$@" --set "train.run_dir=$run_dir")
  "${launch[@]}" "$bin" --preflight "${args[@]}" ||
    { echo "llmtrain: preflight failed; not starting the run (see the diagnosis above)" >&2; return 1; }
  echo "llmtrain: $np ranks, $ppn per node, $cores cores each; interface $LLMTRAIN_IFNAME; run directory $run_dir"
  # exec: a signal to this script (SIGUSR1 for a graceful stop) reaches mpirun, which forwards it to the ranks.
  exec "${launch[@]}" "$bin" "${args[@]}"
}
