#!/usr/bin/env bash
# Installs the Debian packages (scripts/setup.sh), then configures and builds llmtrain in build/.
# Extra arguments go to the CMake configure step, e.g. -DLLMTRAIN_ENABLE_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$(nproc)"
