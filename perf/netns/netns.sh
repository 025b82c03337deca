#!/usr/bin/env bash
# An emulated cluster on one machine: N network namespaces ("hosts"), each joined to one bridge by a veth
# pair whose two ends are rate-limited with `tc tbf`, so every host has a full-duplex link of RATE to the
# switch. MPI jobs run across the hosts with one Open MPI daemon per namespace (see mpirun below), so every
# byte between ranks crosses a shaped link. netem is not available on our machines: the harness shapes
# bandwidth only (no added latency or loss).
#
# Usage: netns.sh up N RATE      create hosts 1..N (RATE: a tc rate such as 100mbit, 1gbit, 10gbit, or
#                                "none" for the unshaped veth, about 9 Gbit/s here)
#        netns.sh rate RATE      change the shaping of every link of a running harness
#        netns.sh mpirun ARGS... run mpirun across the hosts (ranks mapped round-robin by host)
#        netns.sh exec I CMD...  run CMD inside host I (its own hostname and network)
#        netns.sh status         list hosts, addresses and their qdiscs
#        netns.sh down           kill what runs in the hosts and remove them (safe to repeat)
# Environment: NETNS_PREFIX (default "llt": hosts lltn1.., bridge lltbr; letters and digits only, since
# MPI and Slurm host names must not contain "_"), NETNS_SUBNET (default 10.77.0: hosts .1.., bridge .254),
# NETNS_TCP_LINKS (default 2: Open MPI's btl_tcp_links for `netns.sh mpirun`; see README.md),
# NETNS_TCP_FRAG (bytes; default about 1 ms of the link: Open MPI's btl_tcp_rdma_pipeline_frag_size, below).
set -euo pipefail
prefix=${NETNS_PREFIX:-llt}
subnet=${NETNS_SUBNET:-10.77.0}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bridge=${prefix}br
[[ $prefix =~ ^[a-z][a-z0-9]{0,6}$ ]] || { echo "netns.sh: NETNS_PREFIX '$prefix' must be 1-7 lower-case letters or digits, starting with a letter (interface names are limited to 15 characters; host names must not contain '_')" >&2; exit 2; }
[[ $subnet =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "netns.sh: NETNS_SUBNET '$subnet' must be the first three octets, such as 10.77.0" >&2; exit 2; }

hosts() { ip netns list | awk '{print $1}' | grep -E "^${prefix}n[0-9]+$" | sort -V || true; }

# tbf needs a bucket of at least one packet burst at the kernel's timer resolution; veth hands it GSO
# packets of up to 64 KiB, so the bucket is at least 256 KiB or 4 ms of traffic, whichever is larger.
shape() {
  local dev=$1 rate=$2 ns=${3:-}
  local run=(); [ -n "$ns" ] && run=(ip netns exec "$ns")
  "${run[@]}" tc qdisc del dev "$dev" root 2>/dev/null || true
  [ "$rate" = none ] && return 0
  local bps burst
  bps=$(rate_bits "$rate")
  burst=$(( bps / 8 / 250 )); [ "$burst" -lt 262144 ] && burst=262144
  "${run[@]}" tc qdisc add dev "$dev" root tbf rate "$rate" burst "$burst" latency 100ms
}

rate_bits() {  # 100mbit -> 100000000 (tc's units: bit, kbit, mbit, gbit)
  local r=$1
  case $r in
    *gbit) echo $(( ${r%gbit} * 1000000000 ));;
    *mbit) echo $(( ${r%mbit} * 1000000 ));;
    *kbit) echo $(( ${r%kbit} * 1000 ));;
    *bit) echo "${r%bit}";;
    *) echo "netns.sh: rate '$r' must be an integer with bit, kbit, mbit or gbit (or 'none')" >&2; return 2;;
  esac
}

up() {
  local n=$1 rate=$2
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 200 ] || { echo "netns.sh up: N '$n' must be 1..200" >&2; exit 2; }
  [ "$rate" = none ] || rate_bits "$rate" >/dev/null
  [ -z "$(hosts)" ] || { echo "netns.sh up: hosts with prefix '$prefix' exist already; run 'netns.sh down' first" >&2; exit 1; }
  trap 'echo "netns.sh up failed; cleaning up" >&2; down' ERR
  ip link add "$bridge" type bridge
  ip addr add "$subnet.254/24" dev "$bridge"
  ip link set "$bridge" up
  for i in $(seq 1 "$n"); do
    local ns=${prefix}n$i
    ip netns add "$ns"
    ip link add "${prefix}v$i" type veth peer name eth0 netns "$ns"
    ip link set "${prefix}v$i" master "$bridge" up
    ip netns exec "$ns" ip addr add "$subnet.$i/24" dev eth0
    ip netns exec "$ns" ip link set eth0 up
    ip netns exec "$ns" ip link set lo up
    shape eth0 "$rate" "$ns"          # host -> switch
    shape "${prefix}v$i" "$rate"      # switch -> host
  done
  trap - ERR
  echo "netns.sh: $n hosts ${prefix}n1..${prefix}n$n on $subnet.0/24 (bridge $bridge, $subnet.254), rate $rate"
}

set_rate() {
  local rate=$1 i
  [ -n "$(hosts)" ] || { echo "netns.sh rate: no hosts with prefix '$prefix'; run 'netns.sh up' first" >&2; exit 1; }
  for ns in $(hosts); do
    i=${ns#${prefix}n}
    shape eth0 "$rate" "$ns"
    shape "${prefix}v$i" "$rate"
  done
  echo "netns.sh: rate $rate on every link"
}

down() {
  local ns pids
  for ns in $(hosts); do
    # A namespace outlives `ip netns del` while processes hold it: end the ones inside first.
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -TERM $pids 2>/dev/null || true
  done
  [ -n "$(hosts)" ] && sleep 0.5
  for ns in $(hosts); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns"   # deleting the namespace deletes its veth pair
  done
  ip link del "$bridge" 2>/dev/null || true
  echo "netns.sh: hosts with prefix '$prefix' removed"
}

status() {
  local list; list=$(hosts)
  [ -n "$list" ] || { echo "netns.sh: no hosts with prefix '$prefix'"; return 0; }
  for ns in $list; do
    echo "$ns: $(ip netns exec "$ns" ip -4 -o addr show dev eth0 | awk '{print $4}')  $(ip netns exec "$ns" tc qdisc show dev eth0 | head -1)"
  done
}

# Open MPI's TCP transport sends a large message's RDMA part as ONE fragment (btl_tcp_rdma_pipeline_frag_size,
# default 2 GiB), and a connection sends fragments one after another. When one connection carries both
# directions, the protocol messages a rank owes its peer (ob1's acknowledgements and put requests) wait
# behind its whole outgoing message, so the two directions take turns (perf/scaling/README.md, "slow
# runs"). Fragments of about 1 ms of the link (at least 128 KiB) bound that wait.
pipeline_frag() {
  [ -n "${NETNS_TCP_FRAG:-}" ] && { echo "$NETNS_TCP_FRAG"; return; }
  local first rate bps frag=131072
  first=$(hosts | head -1)
  rate=$(ip netns exec "$first" tc qdisc show dev eth0 | sed -n 's/.* rate \([0-9]*[KMG]*bit\).*/\1/p' | tr 'KMG' 'kmg')
  bps=$(rate_bits "${rate:-9gbit}")  # unshaped veth: about 9 Gbit/s here
  while [ $(( frag * 2 )) -le $(( bps / 8 / 1000 )) ]; do frag=$(( frag * 2 )); done
  echo "$frag"
}

run_mpirun() {
  local list hostfile
  list=$(hosts)
  [ -n "$list" ] || { echo "netns.sh mpirun: no hosts with prefix '$prefix'; run 'netns.sh up' first" >&2; exit 1; }
  hostfile=$(mktemp)
  # Addresses, not names, in the host file: nothing needs to resolve the emulated host names.
  for ns in $list; do echo "$subnet.${ns#${prefix}n} slots=64"; done >"$hostfile"
  [ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export NETNS_PREFIX=$prefix NETNS_SUBNET=$subnet
  local status=0
  # mpirun stays in this namespace and reaches its daemons through the bridge's address; both the daemons'
  # control traffic (oob) and MPI's data (btl tcp) are held to the emulated subnet, and shared memory is
  # off, so ranks talk only over the shaped links.
  mpirun --hostfile "$hostfile" --map-by node \
    --mca plm_rsh_agent "$here/rsh-agent.sh" \
    --mca oob_tcp_if_include "$subnet.0/24" --mca btl_tcp_if_include "$subnet.0/24" \
    --mca btl tcp,self --mca pml ob1 --mca btl_tcp_links "${NETNS_TCP_LINKS:-2}" \
    --mca btl_tcp_rdma_pipeline_frag_size "$(pipeline_frag)" "$@" || status=$?
  rm -f "$hostfile"
  return "$status"
}

run_exec() {
  local i=$1; shift
  exec ip netns exec "${prefix}n$i" unshare --uts sh -c 'hostname "$0" && exec "$@"' "${prefix}n$i" "$@"
}

case ${1:-} in
  up) [ $# -eq 3 ] || { echo "usage: netns.sh up N RATE" >&2; exit 2; }; up "$2" "$3";;
  rate) [ $# -eq 2 ] || { echo "usage: netns.sh rate RATE" >&2; exit 2; }; set_rate "$2";;
  down) down;;
  status) status;;
  rate-bits) rate_bits "$2";;
  mpirun) shift; run_mpirun "$@";;
  exec) [ $# -ge 3 ] || { echo "usage: netns.sh exec I CMD..." >&2; exit 2; }; shift; run_exec "$@";;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2;;
esac
