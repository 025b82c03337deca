#!/usr/bin/env bash
# jobscripts/env/bind-rank.sh: each rank's cores and HCA from `nvidia-smi topo -m` (a stand-in for a node of
# 8 GPUs on 2 sockets, tests/cluster/fake_gpu_node/), the fallback without a topology, and a real binding.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
bind=$src/jobscripts/env/bind-rank.sh
fail() { echo "FAIL: $*"; exit 1; }
# expect_bind "ENV=... ..." REGEX: the --print line of a rank with that environment matches REGEX.
expect_bind() {
  local line
  line=$(env -u CUDA_VISIBLE_DEVICES -u SLURM_LOCALID -u OMPI_COMM_WORLD_LOCAL_RANK -u SLURM_CPUS_PER_TASK \
         -u LLMTRAIN_IB_HCAS $1 bash "$bind" --print 2>&1)
  [[ "$line" =~ $2 ]] || fail "with $1: got '$line', expected /$2/"
  echo "ok: $line"
}
node="PATH=$src/tests/cluster/fake_gpu_node:$PATH LLMTRAIN_BIND_CPUS=0-191 LLMTRAIN_CORES_PER_RANK=12"
# Slurm's --gpus-per-task: each rank's GPU in CUDA_VISIBLE_DEVICES; the first 12 cores of its socket's share.
expect_bind "$node SLURM_LOCALID=0 CUDA_VISIBLE_DEVICES=0" "GPU 0 .*NUMA 0\): cores 0-11, nearest NIC mlx5_0$"
expect_bind "$node SLURM_LOCALID=3 CUDA_VISIBLE_DEVICES=3" "GPU 3 .*: cores 36-47, nearest NIC mlx5_3$"
expect_bind "$node SLURM_LOCALID=4 CUDA_VISIBLE_DEVICES=4" "GPU 4 .*NUMA 1\): cores 48-59, nearest NIC mlx5_4$"
# mpirun: no CUDA_VISIBLE_DEVICES, the local rank is the GPU.
expect_bind "$node OMPI_COMM_WORLD_LOCAL_RANK=6" "GPU 6 .*: cores 72-83, nearest NIC mlx5_6$"
# InfiniBand: MPI (UCX) on the nearest HCA when the job uses it, else left alone.
expect_bind "$node SLURM_LOCALID=5 CUDA_VISIBLE_DEVICES=5 LLMTRAIN_IB_HCAS=mlx5_0:1,mlx5_5:1" "nearest NIC mlx5_5, MPI on mlx5_5:1$"
expect_bind "$node SLURM_LOCALID=2 CUDA_VISIBLE_DEVICES=2 LLMTRAIN_IB_HCAS=mlx5_0:1,mlx5_5:1" "nearest NIC mlx5_2$"
# A device cgroup that shows each rank its own GPU only (as GPU0): the socket from the GPU's row, the slice
# from the local rank modulo the socket's slices (8 of 12 CPUs here; with the 24 CPUs per rank that fill a
# socket among its 4 GPUs, the slices line up with the GPUs).
expect_bind "$node FAKE_NVIDIA_SMI_ONLY=1 SLURM_LOCALID=1 CUDA_VISIBLE_DEVICES=0" "GPU 0 .*NUMA 0\): cores 12-23, nearest NIC mlx5_1$"
expect_bind "$node FAKE_NVIDIA_SMI_ONLY=5 SLURM_LOCALID=5 CUDA_VISIBLE_DEVICES=0" "GPU 0 .*NUMA 1\): cores 156-167, nearest NIC mlx5_5$"
expect_bind "$node FAKE_NVIDIA_SMI_ONLY=5 SLURM_LOCALID=5 CUDA_VISIBLE_DEVICES=0 LLMTRAIN_CORES_PER_RANK=24" "NUMA 1\): cores 72-95, nearest NIC mlx5_5$"
# More cores asked than the socket has left: what there is, never another socket's.
expect_bind "$node LLMTRAIN_CORES_PER_RANK=90 SLURM_LOCALID=1 CUDA_VISIBLE_DEVICES=1" "cores 138-143,"
# No topology (no nvidia-smi on PATH): the k-th slice of the allowed CPUs; none left: as the launcher placed it.
nogpu="PATH=/usr/bin:/bin LLMTRAIN_BIND_CPUS=0-7 LLMTRAIN_CORES_PER_RANK=2"
expect_bind "$nogpu SLURM_LOCALID=2" "no GPU topology here \(no nvidia-smi\): local rank 2: cores 4-5$"
expect_bind "$nogpu SLURM_LOCALID=4" "cores none \(left as placed\)$"
# The binding is applied: local rank 1 of 1 core each runs on CPU 1 of this machine's allowed CPUs.
allowed=$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)
if [ "$allowed" != 0 ]; then
  got=$(PATH=/usr/bin:/bin SLURM_LOCALID=1 LLMTRAIN_CORES_PER_RANK=1 bash "$bind" awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status 2>/dev/null)
  [ "$got" = 1 ] || fail "local rank 1 runs on CPUs '$got', expected 1"
  echo "ok: local rank 1 runs on CPU 1"
fi
got=$(LLMTRAIN_BIND=0 SLURM_LOCALID=1 bash "$bind" awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)
[ "$got" = "$allowed" ] || fail "LLMTRAIN_BIND=0 changed the CPUs to '$got'"
echo PASS
