#!/usr/bin/env bash
# The FSDP study of perf/RESULTS.md: two ranks, one core each, replicated vs FSDP and the gather window
# K = 1, 2, 4 (with and without progress polling), on loopback TCP and across a 1 Gbit/s tc-tbf link
# between two network namespaces (perf/netns/netns.sh; needs root).
#
# Usage: perf/fsdp_bench.sh BUILD_DIR [STEPS]
# Environment: NETNS_SH (default perf/netns/netns.sh), NETNS_PREFIX / NETNS_SUBNET (default fsb / 10.79.0,
# so the study runs beside other harnesses), BENCH_ARGS (extra fsdp_bench options, e.g. "--layers 4"),
# BENCH_LOCK (a lock file: each run holds it with flock, e.g. /work/bench.lock, so runs take turns with
# other measurements on a shared machine), TRACE_DIR (each run writes rank 0's trace there as
# LINK-RUN.json, for perf/fsdp_bench.py), LINKS (default "loopback 1gbit": which links, in that order),
# CONFIGS (default all: which of the numbered configurations below to run, e.g. "2 3"), TCP_BUFFER
# (default 0, Open MPI's choice: btl_tcp_sndbuf and btl_tcp_rcvbuf in bytes, e.g. 4194304; a fixed buffer
# lets the kernel keep the link busy between two progress calls, perf/RESULTS.md), BENCH (default
# BUILD_DIR/bin/fsdp_bench: another build's binary, for an A/B). Fp32 figures use the CPU's fastest
# OpenBLAS kernels: OPENBLAS_CORETYPE is unset. Each line ends with the load average at its end.
set -euo pipefail
build=${1:?usage: fsdp_bench.sh BUILD_DIR [STEPS]}
steps=${2:-4}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bench=${BENCH:-$(cd "$build" && pwd)/bin/fsdp_bench}
unset OPENBLAS_CORETYPE
netns=${NETNS_SH:-$here/netns/netns.sh}
export NETNS_PREFIX=${NETNS_PREFIX:-fsb} NETNS_SUBNET=${NETNS_SUBNET:-10.79.0}
[ -x "$bench" ] || { echo "fsdp_bench.sh: $bench not built (cmake --build $build --target fsdp_bench)" >&2; exit 2; }
[ -x "$netns" ] || { echo "fsdp_bench.sh: no namespace harness at $netns (set NETNS_SH)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Each entry (numbered from 1): extra mpirun options (or "-"), then fsdp_bench options. The last one asks Open MPI's TCP
# transport for its own progress thread instead of our polling (btl_tcp_progress_thread).
configs=("- --strategy replicated" "- --strategy fsdp --k 1" "- --strategy fsdp --k 2" "- --strategy fsdp --k 4"
         "- --strategy fsdp --k 2 --progress-us 0"
         "--mca,btl_tcp_progress_thread,1 --strategy fsdp --k 2 --progress-us 0")
lock=()
[ -n "${BENCH_LOCK:-}" ] && lock=(flock "$BENCH_LOCK")
# Each rank pins itself to core = its rank: under the namespace harness every rank has its own daemon, so
# Open MPI's --bind-to core puts both ranks on core 0 (seen: two ranks at 50 % of one core).
pin='exec taskset -c "$OMPI_COMM_WORLD_RANK" "$0" "$@"'
run_all() {  # $1: label; the rest: how to start mpirun
  local label=$1 n=0; shift
  for c in "${configs[@]}"; do
    local mca=${c%% *} args=${c#* } extra=()
    [ "$mca" != - ] && IFS=, read -r -a extra <<<"$mca"
    n=$((n + 1))
    [ -n "${CONFIGS:-}" ] && [[ " $CONFIGS " != *" $n "* ]] && continue
    [ -n "${TRACE_DIR:-}" ] && args+=" --trace $TRACE_DIR/$label-$n.json"
    # shellcheck disable=SC2086
    line=$("${lock[@]}" "$@" "${extra[@]}" --mca btl_tcp_sndbuf "${TCP_BUFFER:-0}" --mca btl_tcp_rcvbuf "${TCP_BUFFER:-0}" -np 2 --bind-to none bash -c "$pin" "$bench" $args --steps "$steps" ${BENCH_ARGS:-} | tail -1)
    echo "$label | ${extra[*]:-} tcp buffer ${TCP_BUFFER:-0} | $line | $(uptime | sed 's/.*load/load/')"
  done
}

echo "# $(lscpu | grep 'Model name' | sed 's/  */ /g'); $(nproc) cores; $(date -u +%FT%TZ)"
for link in ${LINKS:-loopback 1gbit}; do
  case $link in
    loopback) run_all loopback mpirun --mca btl tcp,self --mca pml ob1 ;;
    1gbit)
      trap '"$netns" down >/dev/null' EXIT
      "$netns" up 2 1gbit >/dev/null
      run_all 1gbit "$netns" mpirun
      "$netns" down >/dev/null ;;
    *) echo "fsdp_bench.sh: LINKS takes loopback and 1gbit, got '$link'" >&2; exit 2 ;;
  esac
done
