#!/usr/bin/env bash
# Per-rank logs after an abnormal end: a job whose rank meets a bad record under data.on_bad_record = "fail"
# ends through MPI_Abort; every rank's log must still hold its info lines (written when logged, not at
# exit), and the failing rank's log must hold the error that ended it.
# Usage: rank_logs_test.sh MPIRUN LLMTRAIN CONFIG RUN_DIR
set -u
mpirun=$1 llmtrain=$2 config=$3 run_dir=$4
rm -rf "$run_dir"
out=$(mktemp)
"$mpirun" --oversubscribe -np 2 "$llmtrain" "$config" --set train.run_dir="$run_dir" --set log.per_rank=true \
  --set data.on_bad_record=fail >"$out" 2>&1
status=$?
cat "$out"
for r in 0 1; do echo "--- rank-$r.log"; cat "$run_dir/rank-$r.log"; done
[ "$status" -ne 0 ] || { echo "FAIL: the job should have failed on the bad record"; exit 1; }
for r in 0 1; do
  grep -q "r$r\] info: model: [0-9]* parameters" "$run_dir/rank-$r.log" ||
    { echo "FAIL: rank-$r.log lacks the info lines logged before the failure"; exit 1; }
done
grep -hE "r[01]\] fatal: error on rank [01] of 2 \(.*\): .*two_bad_records.jsonl: byte [0-9]+: bad record" \
  "$run_dir"/rank-*.log || { echo "FAIL: no rank log holds the error that ended it"; exit 1; }
echo "PASS"
