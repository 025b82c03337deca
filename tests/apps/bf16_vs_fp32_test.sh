#!/usr/bin/env bash
# bf16 products train the tiny preset like fp32: the same 300-step run (inputs/tiny.toml, one rank) in
# fp32 and in bf16, and the final held-out loss of bf16 within 2 % of fp32's.
# Usage: bf16_vs_fp32_test.sh LLMTRAIN TINY_TOML RUN_DIR [--set ... extra overrides]
set -u
llmtrain=$1 config=$2 run_dir=$3
shift 3
last_eval() { grep '"type":"eval"' "$1/metrics.jsonl" | tail -1 | sed 's/.*"eval_loss":\([0-9.eE+-]*\).*/\1/'; }
for precision in fp32 bf16; do
  rm -rf "$run_dir/$precision"
  "$llmtrain" "$config" --set train.precision="$precision" --set train.run_dir="$run_dir/$precision" "$@" \
    >"$run_dir-$precision.log" 2>&1 || { cat "$run_dir-$precision.log"; echo "FAIL: $precision run"; exit 1; }
  grep -E "matrix products: $precision" "$run_dir-$precision.log" || { cat "$run_dir-$precision.log"; echo "FAIL: $precision not in use"; exit 1; }
done
fp32=$(last_eval "$run_dir/fp32") bf16=$(last_eval "$run_dir/bf16")
echo "held-out loss: fp32 $fp32, bf16 $bf16"
python3 -c "import sys; f, b = $fp32, $bf16; r = abs(b - f) / f; print(f'relative difference {100 * r:.2f} %'); sys.exit(0 if r <= 0.02 else 1)" \
  || { echo "FAIL: bf16 held-out loss more than 2 % from fp32"; exit 1; }
echo "PASS"
