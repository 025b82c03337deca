#!/usr/bin/env bash
# llmtrain-ckpt list tells a truncated checkpoint (a copy cut short, a disk that filled) from a complete one:
# it is marked and not counted among the complete ones.
# Usage: list_truncated_test.sh LLMTRAIN_CKPT CHECKPOINT WORK_DIR
set -u
tool=$1 checkpoint=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
cp "$checkpoint" "$dir/step_00000070.h5"
size=$(stat -c %s "$checkpoint")
head -c $((size / 2)) "$checkpoint" >"$dir/step_00000080.h5"
out=$("$tool" list "$dir" 2>&1)
status=$?
echo "$out"
[ "$status" -eq 0 ] || { echo "FAIL: exit status $status"; exit 1; }
grep -qE "^70	[0-9]+ bytes	.*step_00000070.h5$" <<<"$out" || { echo "FAIL: the complete checkpoint is not listed plainly"; exit 1; }
grep -qE "^80	[0-9]+ bytes	.*step_00000080.h5	INCOMPLETE OR CORRUPT: .*step_00000080.h5" <<<"$out" \
  || { echo "FAIL: the truncated checkpoint is not marked"; exit 1; }
grep -qx "1 complete checkpoint, 1 incomplete or corrupt (a resume skips them)" <<<"$out" \
  || { echo "FAIL: wrong count"; exit 1; }
echo "PASS"
