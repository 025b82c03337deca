#!/usr/bin/env bash
# The loader figures of perf/RESULTS.md, end to end through `llmtrain-data bench`: raw JSON Lines and .jsonl.zst with the
# Llama-3 tokenizer, pre-tokenized .ltok, each with 1 and 2 tokenizing threads; the tokenizer alone on the same
# text; time to first batch for 10^3 vs 10^5 files. Corpora are generated under $WORK (default /tmp) from the
# committed KJV text (inputs/data/kjv/train.jsonl, 3.9 MB, 1129 chapters).
# The prefetch hand-off figures (section "handoff", also run by default): .ltok with the prefetch thread against
# the synchronous path, runs alternated; time to first batch with shuffle_window 64 vs 10000, .ltok and raw text.
# Usage: perf/data_loader_bench.sh [BUILD_DIR] [all|handoff]   (LLMTRAIN_SHARED_DIR locates data/tokenizers/llama3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
work=${WORK:-/tmp}/llmtrain-loader-bench
shared=${LLMTRAIN_SHARED_DIR:-$root/../shared}
tok=$shared/data/tokenizers/llama3/tokenizer.json
data=$build/bin/llmtrain-data
mkdir -p "$work/jsonl" "$work/zst"
[ -f "$work/jsonl/part-00.jsonl" ] || split -n l/8 -d --additional-suffix=.jsonl "$root/inputs/data/kjv/train.jsonl" "$work/jsonl/part-"
for f in "$work"/jsonl/*.jsonl; do [ -f "$work/zst/$(basename "$f").zst" ] || zstd -q -19 "$f" -o "$work/zst/$(basename "$f").zst"; done
config() {  # name path shards
  printf '[tokenizer]\npath = "%s"\n[data]\nseq_len = 2048\nseed = 1\nlogical_shards = %s\nshuffle_window = 16\n[[data.datasets]]\nname = "kjv"\npath = "%s"\n' \
    "$tok" "$3" "$2" > "$work/$1.toml"
}
config jsonl "$work/jsonl" 64
config zst "$work/zst" 64
"$data" pretokenize "$work/jsonl.toml" --output "$work/pt" --threads 2 2>/dev/null
config pt "$work/pt/kjv" 64

handoff() {
  echo "pt, 2000 steps x 8 rows: prefetch 64 rows vs synchronous, alternated (5 runs each):"
  for _ in 1 2 3 4 5; do
    for p in 0 64; do echo "prefetch $p: $("$data" bench "$work/pt.toml" --steps 2000 --batch 8 --threads 1 --prefetch $p | tail -1)"; done
  done
  for name in pt jsonl; do
    echo "$name, time to first batch (8 rows), shuffle_window 64 vs 10000, synchronous (3 runs each):"
    for _ in 1 2 3; do
      for w in 64 10000; do
        echo "window $w: $("$data" bench "$work/$name.toml" --steps 1 --batch 8 --threads 1 --prefetch 0 --set data.shuffle_window=$w | tail -1)"
      done
    done
  done
}
handoff
[ "${2:-all}" = handoff ] && exit 0

echo "tokenizer alone (best of 5):"
for _ in 1 2 3 4 5; do "$build/bin/llmtrain-tokenize" --tokenizer "$tok" --bench "$root/inputs/data/kjv/train.jsonl" 2>&1 | tail -1; done
for name in jsonl zst pt; do
  steps=800; [ $name = pt ] && steps=3000
  for threads in 1 2; do
    echo "$name, $threads thread(s), prefetch 64 (3 runs):"
    for _ in 1 2 3; do "$data" bench "$work/$name.toml" --steps $steps --batch 8 --threads $threads --prefetch 64 | tail -1; done
  done
done
echo "pt, synchronous (no prefetch thread), 1 thread (3 runs):"
for _ in 1 2 3; do "$data" bench "$work/pt.toml" --steps 3000 --batch 8 --threads 1 --prefetch 0 | tail -1; done

# 10^3 vs 10^5 one-document files; rank 0 of 64, 4096 logical shards.
for n in 1000 100000; do
  dir=$work/files$n
  if [ ! -d "$dir" ]; then
    python3 - "$root/inputs/data/kjv/train.jsonl" "$dir" "$n" <<'PY'
import json, os, sys
lines = open(sys.argv[1]).readlines(); d = sys.argv[2]; n = int(sys.argv[3])
for i in range(n):
    sub = f"{d}/{i // 1000:03d}"; os.makedirs(sub, exist_ok=True)
    with open(f"{sub}/f{i:06d}.jsonl", "w") as f:
        f.write(json.dumps({"text": json.loads(lines[i % len(lines)])["text"][:400]}) + "\n")
PY
  fi
  config files$n "$dir" 4096
  echo "$n files, rank 0 of 64:"
  "$data" bench "$work/files$n.toml" --steps 2 --batch 8 --threads 1 --prefetch 0 --world-size 64 | tail -1
done
