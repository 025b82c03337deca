#!/usr/bin/env bash
# The README's second command (and CI's): set up, build, and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j2
