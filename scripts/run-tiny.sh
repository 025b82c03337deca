#!/usr/bin/env bash
# The README's first command, in two stages with their own progress and time:
#   [1/2] set up and build the trainer and its tools, llmtrain-ckpt, llmtrain-data, llmtrain-generate and
#         llmtrain-tokenize
#         (cmake prints its percentage; the tests are not built here: scripts/test.sh builds and runs them);
#   [2/2] train the bundled tiny configuration on 2 MPI ranks (a progress line with an ETA every 10 steps).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS=0
echo "== [1/2] set up and build llmtrain and its tools"
bash scripts/build.sh --target llmtrain --target llmtrain-ckpt --target llmtrain-data --target llmtrain-generate \
  --target llmtrain-tokenize
build_s=$SECONDS
echo "== [1/2] built in $((build_s / 60)) min $((build_s % 60)) s"
echo "== [2/2] train inputs/tiny.toml on 2 ranks (300 steps)"
bash scripts/mpirun.sh -np 2 --oversubscribe build/bin/llmtrain inputs/tiny.toml
train_s=$((SECONDS - build_s))
echo "== [2/2] trained in $((train_s / 60)) min $((train_s % 60)) s; both stages $((SECONDS / 60)) min $((SECONDS % 60)) s"
