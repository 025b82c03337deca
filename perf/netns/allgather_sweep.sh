#!/usr/bin/env bash
# The harness's proof: all-gather bandwidth between 2 emulated hosts at each shaped rate, beside the rate.
# Usage: perf/netns/allgather_sweep.sh BUILD_DIR [RATES...]   (default rates: 100mbit 1gbit 10gbit none)
# Brings the harness up with prefix "lltag" (unless NETNS_PREFIX is set) and always takes it down.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?usage: allgather_sweep.sh BUILD_DIR [RATES...]}; shift
rates=("$@"); [ ${#rates[@]} -gt 0 ] || rates=(100mbit 1gbit 10gbit none)
bin=$build/bin/allgather_bw
[ -x "$bin" ] || { echo "allgather_sweep.sh: $bin not found; build the target allgather_bw" >&2; exit 1; }
export NETNS_PREFIX=${NETNS_PREFIX:-lltag} NETNS_SUBNET=${NETNS_SUBNET:-10.77.9}
trap 'bash "$here/netns.sh" down >/dev/null' EXIT
bash "$here/netns.sh" up 2 none >/dev/null
printf '%-8s %10s %12s %8s\n' rate "configured" "busbw" "share"
for rate in "${rates[@]}"; do
  bash "$here/netns.sh" rate "$rate" >/dev/null
  # 10 s of traffic at the lowest rate is enough; larger transfers at higher rates average out start-up.
  bytes=67108864; [ "$rate" = 100mbit ] && bytes=33554432
  line=$(bash "$here/netns.sh" mpirun -np 2 "$bin" "$bytes" 5)
  bus=$(sed -E 's/.*busbw=([0-9.]+).*/\1/' <<<"$line")
  if [ "$rate" = none ]; then conf="-"; share="-"
  else conf=$(awk -v b="$(bash "$here/netns.sh" rate-bits "$rate")" 'BEGIN{printf "%.3f", b/1e9}')
       share=$(awk -v a="$bus" -v c="$conf" 'BEGIN{printf "%.0f %%", 100*a/c}'); fi
  printf '%-8s %10s %12s %8s\n' "$rate" "$conf" "$bus" "$share"
done
echo "(Gbit/s; busbw = bytes each rank received / time, the best of 5 all-gathers)"
