#!/usr/bin/env bash
# Issue 13's checkpoint figures: write and read bandwidth of a preset's checkpoint (parameters + AdamW
# moments, fp32) at W = 1 and 2 ranks, against dd writing the same number of bytes with fdatasync (and reading
# them back) in the same directory, in the same run. Both files are evicted from the page cache before they
# are read (posix_fadvise DONTNEED; dd iflag=nocache), so reads come from the disk.
# Usage: perf/ckpt_bench.sh [BUILD_DIR] [DIR] [PRESET] [REPEATS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
dir=${2:-/tmp/llmtrain-ckpt-bench}
preset=${3:-small}
repeats=${4:-3}
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lscpu | grep 'Model name'
uptime
for ranks in 1 2; do
  out=$(mpirun --oversubscribe -np "$ranks" "$build/bin/ckpt_bench" "$root/inputs/$preset.toml" "$dir" 1 | tail -1)
  bytes=$(echo "$out" | sed -E 's/.*"bytes":([0-9]+).*/\1/')
  for r in $(seq 1 "$repeats"); do
    mib=$(( (bytes + 1048575) / 1048576 ))
    dd_w=$(dd if=/dev/zero of="$dir/dd.bin" bs=1M count="$mib" conv=fdatasync 2>&1 | tail -1)
    dd if="$dir/dd.bin" iflag=nocache count=0 2>/dev/null
    dd_r=$(dd if="$dir/dd.bin" of=/dev/null bs=1M 2>&1 | tail -1)
    rm -f "$dir/dd.bin"
    echo "W=$ranks dd ${mib} MiB write+fdatasync: $dd_w"
    echo "W=$ranks dd ${mib} MiB read: $dd_r"
    echo "W=$ranks llmtrain: $(mpirun --oversubscribe -np "$ranks" "$build/bin/ckpt_bench" "$root/inputs/$preset.toml" "$dir" 1)"
  done
done
uptime
