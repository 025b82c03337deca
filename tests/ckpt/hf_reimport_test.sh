#!/usr/bin/env bash
# Import of an export is the checkpoint's parameters bit for bit, for a checkpoint a run trained (GPT-2's
# tokenizer, exported as tokenizer.json): every /model dataset of the import has the trained checkpoint's
# type, shape and checksum (a checksum of every element's bits and index: docs/checkpoints.md).
# Usage: hf_reimport_test.sh LLMTRAIN_CKPT CHECKPOINT EXPORT_DIR WORK_DIR
set -u
tool=$1 checkpoint=$2 export=$3 dir=$4
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir"
out=$("$tool" import "$export" --output "$dir" 2>&1) || { echo "$out"; fail "import failed"; }
echo "$out" | head -1
models() { "$tool" inspect "$1" | grep -E "^  /model/" | sort; }
trained=$(models "$checkpoint") imported=$(models "$dir/step_00000000.h5")
[ -n "$trained" ] || fail "no /model datasets in $checkpoint"
echo "$trained" | head -3
[ "$trained" = "$imported" ] || { diff <(echo "$trained") <(echo "$imported"); fail "the import's parameters differ"; }
echo "$(wc -l <<<"$trained") model datasets identical"
echo "PASS"
