#!/usr/bin/env bash
# mpirun as llmtrain's scripts and tests use it: Open MPI refuses to start as root unless told to, and
# containers and CI often run as root; allow it there (and only there) so users need not know.
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
exec mpirun "$@"
