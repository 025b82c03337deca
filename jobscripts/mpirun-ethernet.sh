#!/usr/bin/env bash
# llmtrain on an Ethernet cluster with mpirun (no Slurm): the network settings of
# jobscripts/env/ethernet.env, ranks mapped and bound per node, a preflight, then the run.
# Usage: LLMTRAIN_IFNAME=<nic> [LLMTRAIN_RANKS_PER_NODE=8] [LLMTRAIN_CORES_PER_RANK=8] \
#          jobscripts/mpirun-ethernet.sh NP HOSTFILE input.toml [llmtrain options]
# SIGUSR1 to this script stops the run gracefully after the current step (mpirun forwards it).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 3 ] || { echo "usage: jobscripts/mpirun-ethernet.sh NP HOSTFILE input.toml [llmtrain options]" >&2; exit 2; }
source "$here/env/common.env"
source "$here/env/ethernet.env"
source "$here/env/mpirun-run.sh"
mpirun_run "$@"
