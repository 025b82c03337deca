#!/usr/bin/env bash
# Open MPI's remote-shell agent for the netns harness (plm_rsh_agent): mpirun calls it as
# `rsh-agent.sh HOST COMMAND...` to start its daemon on HOST. HOST is a harness address (NETNS_SUBNET.I);
# the daemon starts inside namespace NETNS_PREFIXnI with its own host name, so Open MPI sees separate
# nodes and MPI, PMIx and the node name all agree.
set -euo pipefail
prefix=${NETNS_PREFIX:-llt}
subnet=${NETNS_SUBNET:-10.77.0}
host=$1; shift
i=${host#"$subnet".}
[[ $i =~ ^[0-9]+$ ]] || { echo "rsh-agent.sh: host '$host' is not an address of $subnet.0/24" >&2; exit 1; }
ns=${prefix}n$i
# The command arrives as words meant for a remote shell (like ssh's), so a shell runs it.
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$ns" "$*"
