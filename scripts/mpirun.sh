#!/usr/bin/env bash
# mpirun as llmtrain's scripts and tests use it: Open MPI refuses to start as root unless told to, and
# containers and CI often run as root; allow it there (and only there) so users need not know. --quiet drops
# Open MPI's banners ("Primary job terminated normally, but 1 process returned a non-zero exit code", ...),
# 8-10 lines that would bury llmtrain's one-line error; the exit status is kept.
#
# Ctrl-C at a terminal: mpirun turns SIGINT into SIGTERM for the ranks and exits 1 whatever they do, so a
# graceful stop would look like a failure. On a terminal this script therefore starts mpirun in a session of
# its own (the terminal's SIGINT reaches only the script) and hands the first Ctrl-C to mpirun as SIGUSR1,
# which it forwards to the ranks: they stop after the same step, checkpoint and exit 0, and so does this
# script. A second Ctrl-C sends SIGTERM (mpirun ends the job); SIGTERM and SIGHUP to the script are passed on
# as SIGTERM, SIGUSR1 as itself. Without a terminal (batch jobs, tests) mpirun simply replaces the script.
set -uo pipefail
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
[ -t 0 ] || exec mpirun --quiet "$@"

setsid mpirun --quiet "$@" <&0 &
pid=$!
interrupts=0
on_interrupt() {
  interrupts=$((interrupts + 1))
  if [ "$interrupts" -eq 1 ]; then
    echo "mpirun.sh: Ctrl-C: asking the ranks to stop after the current step (again to end the job now)" >&2
    kill -USR1 "$pid" 2>/dev/null
  else
    kill -TERM "$pid" 2>/dev/null
  fi
}
trap on_interrupt INT
trap 'kill -TERM "$pid" 2>/dev/null' TERM HUP
trap 'kill -USR1 "$pid" 2>/dev/null' USR1
while :; do
  wait "$pid"
  status=$?
  kill -0 "$pid" 2>/dev/null || exit "$status"  # else wait returned for a trapped signal: mpirun runs on
done
