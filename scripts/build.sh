#!/usr/bin/env bash
# Installs the Debian packages (scripts/setup.sh), then configures and builds llmtrain in build/: every
# target (libraries, tools, tests, benchmarks), or only those named with --target (repeatable).
# Other arguments go to the CMake configure step, e.g. -DLLMTRAIN_ENABLE_CUDA=OFF.
#   bash scripts/build.sh                      # everything
#   bash scripts/build.sh --target llmtrain    # the trainer and the libraries it links
set -euo pipefail
cd "$(dirname "$0")/.."
targets=() configure=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) [ $# -ge 2 ] || { echo "build.sh: --target needs a name" >&2; exit 2; }
              targets+=(--target "$2"); shift 2 ;;
    *) configure+=("$1"); shift ;;
  esac
done
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${configure[@]}"
cmake --build build -j"$(nproc)" "${targets[@]}"
