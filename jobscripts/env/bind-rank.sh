#!/usr/bin/env bash
# Runs one rank (the command given) on the CPU cores nearest its GPU and, on InfiniBand, with MPI on the HCA
# nearest it, as `nvidia-smi topo -m` reports them. Both launchers put it in front of llmtrain
# (slurm-run.sh, mpirun-run.sh), which then place no binding of their own.
#
# The rank's GPU: the first entry of CUDA_VISIBLE_DEVICES when it is an index (Slurm's --gpus-per-task sets
# it), else its local rank (llmtrain picks the device the same way: docs/gpu.md). Its cores: LLMTRAIN_CORES_PER_RANK
# (Slurm: SLURM_CPUS_PER_TASK) of the CPUs both in the GPU's "CPU Affinity" and in this process's allowed
# set, the k-th slice for the k-th GPU of that affinity, so ranks of GPUs on one socket share it out. Without
# a topology (no nvidia-smi, a CPU-only node, a count-only GPU resource) the k-th slice of the allowed CPUs
# for local rank k, as the launchers bound before. Memory follows the GPU's NUMA node where numactl exists.
# NCCL picks the HCA nearest each GPU itself from its own topology search (NCCL_IB_HCA lists them all);
# MPI over UCX does not, so UCX_NET_DEVICES is set to the nearest HCA of LLMTRAIN_IB_HCAS.
#
# Usage: bind-rank.sh [--print] COMMAND [ARGS...]   --print: print the binding and exit (tests, checking a node)
# LLMTRAIN_BIND=0 runs COMMAND as placed; LLMTRAIN_BIND_CPUS (e.g. 0-95) names the CPUs to share out instead of
# the allowed set. Local rank 0 of each node prints its binding on stderr; every rank
# does with LLMTRAIN_BIND_VERBOSE=1.
set -uo pipefail
print_only=0
if [ "${1:-}" = --print ]; then print_only=1; shift; fi
[ $# -ge 1 ] || [ "$print_only" -eq 1 ] || { echo "usage: bind-rank.sh [--print] COMMAND [ARGS...]" >&2; exit 2; }
[ "${LLMTRAIN_BIND:-1}" = 0 ] && exec "$@"

local_rank=${SLURM_LOCALID:-${OMPI_COMM_WORLD_LOCAL_RANK:-${LLMTRAIN_LOCAL_RANK:-0}}}
cores_per_rank=${LLMTRAIN_CORES_PER_RANK:-${SLURM_CPUS_PER_TASK:-1}}
gpu=${CUDA_VISIBLE_DEVICES:-}
gpu=${gpu%%,*}
[[ "$gpu" =~ ^[0-9]+$ ]] || gpu=$local_rank

# "0-3,8,10-11" -> one CPU number a line, and back (numbers one a line -> "0-3,8,10-11").
compress() { awk 'NR == 1 {lo = hi = $1; next} $1 == hi + 1 {hi = $1; next}
                  {printf "%s%s,", lo, (hi > lo ? "-" hi : ""); lo = hi = $1}
                  END {if (NR) printf "%s%s\n", lo, (hi > lo ? "-" hi : "")}'; }
expand() { tr ',' '\n' <<<"$1" | awk -F- 'NF == 1 && $1 != "" {print $1} NF == 2 {for (c = $1; c <= $2; c++) print c}'; }
# The CPUs to share out: LLMTRAIN_BIND_CPUS, else those this process may run on (the launcher's allocation).
allowed=${LLMTRAIN_BIND_CPUS:-$(awk '/^Cpus_allowed_list:/ {print $2}' /proc/self/status)}

# From `nvidia-smi topo -m` (tab-separated columns): this GPU's CPU affinity, NUMA node, how many GPUs before
# it share its affinity, and its nearest NIC by PCIe distance (PIX < PXB < PHB < NODE < SYS) named by the legend.
topology=""
if command -v nvidia-smi >/dev/null 2>&1; then
  topology=$(nvidia-smi topo -m 2>/dev/null | awk -F'\t' -v gpu="GPU$gpu" '
    function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
    /CPU Affinity/ && !header { for (i = 1; i <= NF; i++) column[trim($i)] = i; header = 1; next }
    header && trim($1) ~ /^GPU[0-9]+$/ && !(trim($1) in seen) {
      seen[trim($1)] = 1; gpus++
      affinity = trim($column["CPU Affinity"])
      if (trim($1) == gpu) { mine = affinity; numa = trim($column["NUMA Affinity"]); found = 1
        best = 99
        for (name in column) if (name ~ /^NIC[0-9]+$/) {
          d = trim($column[name]); rank = d == "PIX" ? 1 : d == "PXB" ? 2 : d == "PHB" ? 3 : d == "NODE" ? 4 : d == "SYS" ? 5 : 99
          if (rank < best || (rank == best && name < nic)) { best = rank; nic = name }
        }
      } else if (!found) before[affinity]++
    }
    /^ *NIC[0-9]+: / { split(trim($0), kv, ": "); legend[kv[1]] = kv[2] }
    END { if (found) print mine "|" numa "|" before[mine] + 0 "|" gpus "|" (nic != "" ? legend[nic] : "") }')
fi

if [ -n "$topology" ]; then
  IFS='|' read -r gpu_cpus numa slot gpus nic <<<"$topology"
  candidates=$(comm -12 <(expand "$gpu_cpus" | sort) <(expand "$allowed" | sort) | sort -n)
  # A node whose device cgroup shows each rank only its own GPU (listed as GPU0): the ranks of one socket
  # are consecutive local ranks, so the local rank, modulo how many slices the socket has, picks the slice
  # (they line up with the GPUs when the cores per rank fill the socket, e.g. 24 of 96 CPUs for 4 GPUs).
  if [ "$gpus" -eq 1 ]; then
    slices=$(( $(grep -c . <<<"$candidates") / cores_per_rank ))
    slot=$(( slices > 0 ? local_rank % slices : 0 ))
  fi
  where="GPU $gpu (CPU affinity $gpu_cpus, NUMA ${numa:-?})"
else
  numa="" nic="" slot=$local_rank
  candidates=$(expand "$allowed")
  where="no GPU topology here ($(command -v nvidia-smi >/dev/null 2>&1 && echo "nvidia-smi lists no GPU $gpu" || echo "no nvidia-smi")): local rank $local_rank"
fi
cores=$(sed -n "$((slot * cores_per_rank + 1)),$(((slot + 1) * cores_per_rank))p" <<<"$candidates" | compress)

# MPI's HCA on InfiniBand: the nearest one, if it is among the HCAs the job uses.
if [ -n "$nic" ] && [ -n "${LLMTRAIN_IB_HCAS:-}" ] && [[ ",$LLMTRAIN_IB_HCAS," == *",$nic:"* ]]; then
  export UCX_NET_DEVICES="$nic:1"
fi
summary="bind: $(hostname -s) local rank $local_rank, $where: cores ${cores:-none (left as placed)}${nic:+, nearest NIC $nic}${UCX_NET_DEVICES:+, MPI on $UCX_NET_DEVICES}"
if [ "$print_only" -eq 1 ]; then echo "$summary"; exit 0; fi
[ "$local_rank" = 0 ] || [ "${LLMTRAIN_BIND_VERBOSE:-0}" = 1 ] && echo "$summary" >&2

[ -n "$cores" ] || exec "$@"
if command -v numactl >/dev/null 2>&1 && [[ "$numa" =~ ^[0-9]+$ ]]; then
  exec numactl --physcpubind="$cores" --preferred="$numa" "$@"
fi
exec taskset -c "$cores" "$@"
