#!/usr/bin/env bash
# The scaling study's measurements (perf/scaling/README.md): perf/fsdp_bench at W = 2, one core each, over
# loopback TCP and across perf/netns's tc-tbf link at 10, 1 and 0.1 Gbit/s, for three model sizes and the
# strategies replicated (all-reduce overlapped with backward) and fsdp (K = 1, 2, 4; fp32 and bf16 on the
# wire). One line per point is appended to the CSV; analyze.py fits and projects from it.
#
# Usage: perf/scaling/run.sh BUILD_DIR [CSV] [STEPS]      (needs root for the namespaces)
# Environment: NETNS_PREFIX / NETNS_SUBNET (default scl / 10.81.0, beside other harnesses), BENCH_LOCK
# (default /work/bench.lock: each point holds it, so measurements of different people never overlap),
# LINKS (default "loopback 10gbit 1gbit 100mbit"), MODELS / CONFIGS (space-separated names of the lists
# below to keep, e.g. MODELS="m3 m13" CONFIGS="replicated fsdp1 fsdp2 fsdp2bf16 fsdp4").
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [CSV] [STEPS]}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
csv=${2:-$here/results.csv}
steps=${3:-3}
bench=$(cd "$build" && pwd)/bin/fsdp_bench
unset OPENBLAS_CORETYPE  # the CPU's own OpenBLAS kernels: a forced older set (e.g. Haswell) halves fp32 compute
netns=$here/../netns/netns.sh
lock=${BENCH_LOCK:-/work/bench.lock}
export NETNS_PREFIX=${NETNS_PREFIX:-scl} NETNS_SUBNET=${NETNS_SUBNET:-10.81.0}
[ -x "$bench" ] || { echo "run.sh: $bench not built (cmake --build $build --target fsdp_bench)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run.sh: the namespaces need root" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# name: fsdp_bench shape options. m13 is 4 blocks of perf/RESULTS.md's FSDP benchmark (13.1 M parameters, 2 x 128
# tokens per rank); m13r8 the same with 4x the tokens, so that compute covers communication at 1 Gbit/s; m3 a
# quarter of the width (3.3 M parameters).
models=("m3:--d-model 256 --d-ff 768 --layers 4 --rows 2"
        "m13:--layers 4 --rows 2"
        "m13r8:--layers 4 --rows 8")
configs=("replicated:replicated 2 fp32" "fsdp1:fsdp 1 fp32" "fsdp2:fsdp 2 fp32" "fsdp2bf16:fsdp 2 bf16"
         "fsdp4:fsdp 4 fp32")
keep() { [ -z "$2" ] || [[ " $2 " == *" $1 "* ]]; }  # name, list (empty: keep all)

# Each rank pins itself to core = its rank: under the harness every rank has its own daemon, so Open MPI's
# --bind-to core would put both on core 0.
pin='exec taskset -c "$OMPI_COMM_WORLD_RANK" "$0" "$@"'
[ -s "$csv" ] || echo "time,load1,link,rate_gbit,model,params,rows,strategy,k,comm,steps,step_s,compute_s,gather_s,gather_wait_s,waits_s,reduce_s,gather_mb,reduce_mb" > "$csv"

field() { sed -n "s/.*| $1 \([0-9][0-9.]*\) .*/\1/p" <<<"$2"; }  # the number after "| NAME " in the line

point() {  # link rate model_name model_args strategy k comm -- launcher...
  local link=$1 rate=$2 name=$3 margs=$4 strategy=$5 k=$6 comm=$7; shift 8
  local line
  # shellcheck disable=SC2086
  line=$(flock "$lock" "$@" -np 2 --bind-to none bash -c "$pin" "$bench" --strategy "$strategy" --k "$k" \
         --comm-dtype "$comm" --steps "$steps" $margs | tail -1)
  local rows; rows=$(sed -n 's/.*--rows \([0-9]*\).*/\1/p' <<<"$margs")
  echo "$(date -u +%FT%TZ),$(cut -d' ' -f1 /proc/loadavg),$link,$rate,$name,$(field params "$line"),$rows,$strategy,$k,$comm,$steps,$(field step "$line"),$(field forward+backward "$line"),$(field gather "$line"),$(field 'gather wait' "$line"),$(field 'all waits' "$line"),$(field reduce "$line"),$(field 'gather bytes' "$line"),$(field 'reduce bytes' "$line")" | tee -a "$csv"
}

sweep() {  # link rate launcher...
  local link=$1 rate=$2; shift 2
  for m in "${models[@]}"; do
    keep "${m%%:*}" "${MODELS:-}" || continue
    for c in "${configs[@]}"; do
      keep "${c%%:*}" "${CONFIGS:-}" || continue
      # shellcheck disable=SC2086
      point "$link" "$rate" "${m%%:*}" "${m#*:}" ${c#*:} -- "$@"
    done
  done
}

echo "# $(lscpu | grep 'Model name' | sed 's/  */ /g'); $(nproc) cores; $(uptime)" >&2
trap '"$netns" down >/dev/null 2>&1' EXIT
for link in ${LINKS:-loopback 10gbit 1gbit 100mbit}; do
  case $link in
    loopback) sweep loopback 0 mpirun --mca btl tcp,self --mca pml ob1;;
    *) "$netns" down >/dev/null 2>&1; "$netns" up 2 "$link" >/dev/null
       rate=$(awk -v r="$link" 'BEGIN { n = r + 0; print (r ~ /mbit/) ? n / 1000 : n }')
       sweep "$link" "$rate" "$netns" mpirun;;
  esac
done
