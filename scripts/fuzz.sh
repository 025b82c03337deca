#!/usr/bin/env bash
# Fuzzes one parser: bash scripts/fuzz.sh TARGET SECONDS [more libFuzzer flags]
# TARGET is a directory name of tests/fuzz (config, tokenizer_json, tokenizer_encode, vocab_merges, records,
# ltok, state; docs/fuzzing.md says what each covers). Builds the libFuzzer targets in build-fuzz/ (clang,
# ASan + UBSan, the whole project instrumented), then runs TARGET under nice for SECONDS. Kept in build-fuzz/:
#   corpus/TARGET     the working corpus, grown from the seeds in tests/fuzz/TARGET (reused by the next run)
#   findings/TARGET   crashing, timed-out and out-of-memory inputs (add each to tests/fuzz/TARGET when fixed)
#   logs/TARGET-*.log the run's output, ending with libFuzzer's final stats
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags]}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags]}
shift 2
if [[ ! -d tests/fuzz/$target ]]; then
  echo "scripts/fuzz.sh: no fuzz target '$target' (one of: $(cd tests/fuzz && ls -d */ | tr -d / | tr '\n' ' '))" >&2
  exit 2
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DLLMTRAIN_FUZZ=ON -DLLMTRAIN_ENABLE_CUDA=OFF -DLLMTRAIN_BUILD_BENCHMARKS=OFF "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j2 --target "fuzz_$target"

out=build-fuzz
mkdir -p "$out/corpus/$target" "$out/findings/$target" "$out/logs"
flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
       -artifact_prefix="$out/findings/$target/")
if [[ -f tests/fuzz/$target.dict ]]; then flags+=(-dict="tests/fuzz/$target.dict"); fi
# Targets that parse files write each input to a scratch file: on tmpfs that costs 6x less than on disk.
if [[ -z "${TMPDIR:-}" && -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi
log="$out/logs/$target-$(date +%Y%m%d-%H%M%S).log"
echo "fuzzing $target for ${seconds}s; log: $log"
# New inputs go to the first directory (the working corpus); the seeds are read only.
nice -n 19 "$out/bin/fuzz_$target" "${flags[@]}" "$@" "$out/corpus/$target" "tests/fuzz/$target" 2>&1 | tee "$log"
