#!/usr/bin/env bash
# mpirun as llmtrain's scripts and tests use it: Open MPI refuses to start as root unless told to, and
# containers and CI often run as root; allow it there (and only there) so users need not know. --quiet drops
# Open MPI's banners ("Primary job terminated normally, but 1 process returned a non-zero exit code", ...),
# 8-10 lines that would bury llmtrain's one-line error; the exit status is kept.
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
exec mpirun --quiet "$@"
