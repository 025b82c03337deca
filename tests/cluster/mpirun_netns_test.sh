#!/usr/bin/env bash
# jobscripts/mpirun-ethernet.sh across two emulated hosts (perf/netns: namespaces with their own eth0,
# links shaped to 1 Gbit/s), launched from host 1 with the harness's rsh agent standing in for ssh:
#  - the script's settings reach every rank (the preflight finds OMPI_MCA_btl_tcp_if_include = eth0 on
#    both hosts and connects them over it), and tiny trains 3 steps on 2 ranks on 2 nodes;
#  - a wrong LLMTRAIN_IFNAME stops the launch at the preflight: no run starts.
# Usage: LLMTRAIN_BUILD_DIR=build tests/cluster/mpirun_netns_test.sh      Exit 77: skipped (reason printed).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${LLMTRAIN_BUILD_DIR:?set LLMTRAIN_BUILD_DIR to the build directory}" && pwd)
work=${MPIRUN_TEST_DIR:-/tmp/llmtrain-mpirun-netns-test}
[ "$(id -u)" -eq 0 ] || { echo "SKIPPED: network namespaces need root"; exit 77; }
export NETNS_PREFIX=llmr NETNS_SUBNET=10.77.8
netns=$src/perf/netns/netns.sh
bash "$netns" up 2 1gbit || { bash "$netns" down >/dev/null 2>&1; echo "SKIPPED: network namespaces cannot be created here"; exit 77; }
trap 'bash "$netns" down' EXIT
rm -rf "$work" && mkdir -p "$work"
printf '%s.1 slots=1\n%s.2 slots=1\n' "$NETNS_SUBNET" "$NETNS_SUBNET" >"$work/hosts"
export OMPI_MCA_plm_rsh_agent=$src/perf/netns/rsh-agent.sh LLMTRAIN_BIN=$build/bin/llmtrain LLMTRAIN_RANKS_PER_NODE=1
fail() { echo "FAIL: $*"; exit 1; }

LLMTRAIN_IFNAME=eth0 LLMTRAIN_RUNS=$work/good timeout 300 bash "$netns" exec 1 "$src/jobscripts/mpirun-ethernet.sh" 2 "$work/hosts" \
  "$src/inputs/tiny.toml" --set train.steps=3 --set train.warmup_steps=1 --set train.eval_batches=1 >"$work/good.log" 2>&1
status=$?
cat "$work/good.log"
[ "$status" -eq 0 ] || fail "exit status $status"
for re in "preflight of .*: 2 ranks on 2 nodes" \
          "interfaces: OMPI_MCA_btl_tcp_if_include -> eth0; every rank reached the next over it \[all ranks\]" \
          "preflight: all checks passed" "2 ranks on 2 nodes" "done: 3 steps"; do
  grep -qE "$re" "$work/good.log" || fail "output lacks /$re/"
done

LLMTRAIN_IFNAME=eth9 LLMTRAIN_RUNS=$work/bad timeout 300 bash "$netns" exec 1 "$src/jobscripts/mpirun-ethernet.sh" 2 "$work/hosts" \
  "$src/inputs/tiny.toml" --set train.steps=3 >"$work/bad.log" 2>&1
status=$?
cat "$work/bad.log"
[ "$status" -ne 0 ] || fail "a launch over a missing interface exited 0"
grep -q "preflight failed; not starting the run" "$work/bad.log" || fail "the launch did not stop at the preflight"
[ -z "$(find "$work/bad" -name metrics.jsonl)" ] || fail "a run started after the preflight failed"
echo PASS
