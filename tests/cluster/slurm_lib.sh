# Sourced by the tests that submit jobscripts/slurm-ethernet.sbatch to the local Slurm cluster
# (scripts/local-slurm.sh: two one-core nodes in network namespaces). The caller sets src (the repository),
# work (a scratch directory, emptied here), llmtrain (the binary), steps (the run's length) and, optionally,
# submit_sets (more llmtrain options for every job). This brings the cluster up (exit 77, skipped, where it
# cannot start), takes it down at exit, and defines fail, submit and wait_gone.
[ -x "$llmtrain" ] || { echo "FAIL: $llmtrain not built"; exit 1; }
rm -rf "$work" && mkdir -p "$work"

export LOCAL_SLURM_DIR=$work/cluster
bash "$src/scripts/local-slurm.sh" up >"$work/up.log" 2>&1
status=$?
cat "$work/up.log"
[ "$status" -eq 77 ] && { echo "SKIPPED: the local Slurm cluster cannot start here (reason above)"; exit 77; }
[ "$status" -eq 0 ] || { echo "FAIL: scripts/local-slurm.sh up exited $status"; bash "$src/scripts/local-slurm.sh" down; exit 1; }
trap 'bash "$src/scripts/local-slurm.sh" down' EXIT
export SLURM_CONF=$LOCAL_SLURM_DIR/etc/slurm.conf LLMTRAIN_RUNS=$work/runs LLMTRAIN_BIN=$llmtrain LLMTRAIN_IFNAME=eth0

fail() { echo "FAIL: $*"; exit 1; }

# submit NAME [llmtrain options]: the Ethernet script as users submit it, fitted to 2 one-core nodes with one of
# their counted GPUs per task (train.device = "cpu": the nodes have none); prints the job id.
submit() {
  local name=$1; shift
  (cd "$src" && sbatch --parsable --job-name="$name" --output="$work/slurm-%x-%j.out" --nodes=2 --ntasks-per-node=1 \
     --cpus-per-task=1 --gpus-per-task=1 --time=15 jobscripts/slurm-ethernet.sbatch inputs/tiny.toml \
     --set train.steps="$steps" --set train.warmup_steps=1 --set train.eval_every=0 --set train.eval_batches=1 \
     --set log.every_steps=1 --set train.device=cpu ${submit_sets[@]+"${submit_sets[@]}"} "$@")
}

wait_gone() {  # bounded wait until job $1 has left the queue
  for _ in $(seq 1 300); do [ -z "$(squeue -h -j "$1" -o %T 2>/dev/null)" ] && return 0; sleep 1; done
  fail "job $1 still in the queue after 300 s: $(squeue -h -j "$1")"
}
