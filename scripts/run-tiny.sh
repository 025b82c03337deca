#!/usr/bin/env bash
# The README's first command: set up, build, and run the main job on the bundled tiny configuration
# with two MPI ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/mpirun.sh -np 2 --oversubscribe build/bin/llmtrain inputs/tiny.toml
