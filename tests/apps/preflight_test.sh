#!/usr/bin/env bash
# `llmtrain --preflight`: each diagnosis it can make on one machine, plus a passing run whose TCP ring
# really connects the ranks. Each case checks the exit status and the exact diagnosis.
# Usage: preflight_test.sh CASE LLMTRAIN MPIRUN SOURCE_DIR WORK_DIR
# Permission cases run the check as user nobody when the test runs as root (root reads and writes anything).
# Everything nobody touches (the binary, the tokenizer, the configuration, the corpus) is copied into a
# world-traversable scratch directory of the test's own, so the test does not depend on the permissions of
# the directories above the checkout (a clone under root's home or under `mktemp -d` is private). Exit 77
# (skipped, reason printed) where no such directory can be made.
set -u
case_name=$1 llmtrain=$2 mpirun=$3 src=$4 work=$5
tokenizer=$src/inputs/tokenizers/gpt2
as_nobody=()
if [ "$(id -u)" -eq 0 ] && { [ "$case_name" = unreadable_dataset ] || [ "$case_name" = unwritable_run_dir ]; }; then
  as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  scratch=$(mktemp -d "${LLMTRAIN_SCRATCH_DIR:-/tmp}/llmtrain-preflight.XXXXXX") || { echo "FAIL: no scratch directory"; exit 1; }
  trap 'rm -rf "$scratch"' EXIT
  chmod 755 "$scratch"
  cp "$llmtrain" "$scratch/llmtrain" && cp -r "$tokenizer" "$scratch/tokenizer" && chmod -R a+rX "$scratch"
  llmtrain=$scratch/llmtrain tokenizer=$scratch/tokenizer work=$scratch/work
  "${as_nobody[@]}" test -x "$llmtrain" || {
    echo "SKIPPED: user nobody cannot reach $scratch (set LLMTRAIN_SCRATCH_DIR to a world-traversable directory)"; exit 77; }
fi
rm -rf "$work" && mkdir -p "$work/corpus" && chmod 755 "$work"
cp "$src/inputs/data/kjv/eval.jsonl" "$work/corpus/a.jsonl"
cp "$src/inputs/data/kjv/eval.jsonl" "$work/corpus/b.jsonl"
run_dir=$work/run
write_config() {
  cat >"$work/input.toml" <<TOML
[model]
d_model = 32
n_layers = 2
n_heads = 2
d_ff = 64
[tokenizer]
path = "$tokenizer"
[data]
seq_len = 32
logical_shards = 8
[[data.datasets]]
name = "kjv"
path = "$work/corpus"
[train]
steps = 4
warmup_steps = 1
run_dir = "$run_dir"
TOML
}
expect() {  # expect STATUS REGEX...: the last run's status and output
  local want=$1; shift
  cat "$work/out"
  [ "$status" -eq "$want" ] || { echo "FAIL: exit status $status, expected $want"; exit 1; }
  for re in "$@"; do grep -qE -- "$re" "$work/out" || { echo "FAIL: output lacks /$re/"; exit 1; }; done
  echo PASS
}
run_np2() { "$mpirun" --oversubscribe -np 2 "$@" >"$work/out" 2>&1; status=$?; }
run_one() { "$@" >"$work/out" 2>&1; status=$?; }

write_config
case $case_name in
  pass_ring_over_lo)
    run_np2 -x NCCL_SOCKET_IFNAME=lo "$llmtrain" --preflight "$work/input.toml"
    expect 0 "data.datasets: 1 dataset, 2 files readable" \
           "interfaces: NCCL_SOCKET_IFNAME -> lo; every rank reached the next over it \[all ranks\]" \
           "train.run_dir: $run_dir writable" "ok: train.device: cpu \(train.device = \"auto\": " \
           "ok: GPU checks: skipped \(not every rank trains on a GPU of its own: train.device = \"auto\", above\) \[all ranks\]" \
           "preflight: all checks passed";;
  device_cuda_without_gpu)
    # No rank of this machine has a GPU: train.device = "cuda" is caught before the run, on every rank.
    run_np2 "$llmtrain" --preflight "$work/input.toml" --set train.device=cuda
    expect 1 "PROBLEM: train.device = \"cuda\": this rank sees 0 CUDA devices \(2 ranks on this node\).* \[all ranks\]" \
           "ok: GPU checks: skipped \(not every rank trains on a GPU of its own" "preflight: 1 problem";;
  unknown_interface)
    run_np2 -x NCCL_SOCKET_IFNAME=nosuch0 "$llmtrain" --preflight "$work/input.toml"
    expect 1 "PROBLEM: NCCL_SOCKET_IFNAME=nosuch0: no interface matches \(this host has: .*lo 127.0.0.1.*\) \[all ranks\]" \
           "preflight: 1 problem";;
  exact_name_is_not_a_prefix)
    # "lo" as a prefix matches lo; "=l" asks for an interface named exactly "l".
    run_np2 -x NCCL_SOCKET_IFNAME==l "$llmtrain" --preflight "$work/input.toml"
    expect 1 "PROBLEM: NCCL_SOCKET_IFNAME==l: no interface matches";;
  nccl_sockets_over_64)
    run_np2 -x NCCL_SOCKET_NTHREADS=16 -x NCCL_NSOCKS_PERTHREAD=8 "$llmtrain" --preflight "$work/input.toml"
    expect 1 "PROBLEM: NCCL_SOCKET_NTHREADS=16 x NCCL_NSOCKS_PERTHREAD=8 = 128 sockets: NCCL caps the product at 64" \
           "preflight: 1 problem";;
  missing_rdma_device)
    # This machine has no RDMA devices: an InfiniBand script's NCCL_IB_HCA is caught before the run.
    run_np2 -x NCCL_IB_HCA==mlx5_0:1 "$llmtrain" --preflight "$work/input.toml"
    expect 1 "PROBLEM: NCCL_IB_HCA==mlx5_0:1: no RDMA port matches \(this host has: .*\) \[all ranks\]";;
  unreadable_dataset)
    chmod 000 "$work/corpus/b.jsonl"
    mkdir -p "$run_dir" && chmod 777 "$run_dir"   # so that only the dataset is a problem
    run_one "${as_nobody[@]}" "$llmtrain" --preflight "$work/input.toml"
    expect 1 "PROBLEM: data.datasets\[0\] \('kjv'\): $work/corpus/b.jsonl: cannot read: Permission denied" "preflight: 1 problem";;
  unwritable_run_dir)
    mkdir -p "$work/readonly" && chmod 555 "$work/readonly"
    run_dir=$work/readonly/run && write_config
    run_one "${as_nobody[@]}" "$llmtrain" --preflight "$work/input.toml"
    expect 1 "PROBLEM: train.run_dir: cannot create $run_dir: Permission denied";;
  run_dir_under_a_file)
    touch "$work/plain-file"
    run_dir=$work/plain-file/run && write_config
    run_one "$llmtrain" --preflight "$work/input.toml"
    expect 1 "PROBLEM: train.run_dir: cannot create $run_dir: Not a directory";;
  *) echo "unknown case $case_name"; exit 2;;
esac
