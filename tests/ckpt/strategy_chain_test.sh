#!/usr/bin/env bash
# Checkpoints across strategies (issues 12 and 13): a run saved under FSDP on 4 ranks resumes replicated on 3
# ranks, whose checkpoint resumes under HSDP on 2 ranks (two shard groups of one rank each). The global batch
# is the same 12 rows at every rank count. The same chain with the replicated strategy throughout reads the
# same data (the loader depends on the rank count and its state, not on the strategy), so its losses are the
# reference: every step of the mixed chain must match it within 1e-5 relative, and each run must say it
# resumed from the previous one's checkpoint. The loader prefetches in its thread from the second batch on
# (data.prefetch_thread = "always": these runs are too short for "auto" to start it): its state is what was
# consumed, whatever its thread had prepared, so the order after a rescale is a function of the step alone.
# A second chain saves under HSDP with shard groups of 2 on 4 ranks (the two members of each replica set
# split their shard: each writes half) and resumes under FSDP on 2; its checkpoint must verify, and its
# losses match the replicated reference's first 3 steps on 4 ranks and a replicated run on 2 ranks resumed
# from the reference's step-3 checkpoint.
# Usage: strategy_chain_test.sh MPIRUN LLMTRAIN CKPT_TOOL CONFIG WORK
set -u
mpirun=$1 llmtrain=$2 tool=$3 config=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
# run CHAIN NP ROWS STEPS STRATEGY [extra --set ...]
run() {
  local chain=$1 np=$2 rows=$3 steps=$4 strategy=$5
  shift 5
  timeout 300 "$mpirun" --oversubscribe -np "$np" "$llmtrain" "$config" --set train.run_dir="$work/$chain" \
    --set checkpoint.dir="$work/$chain/ckpt" --set train.steps="$steps" --set train.batch_size="$rows" \
    --set parallel.strategy="$strategy" --set log.every_steps=1000 --set data.prefetch_thread=always "$@" \
    >"$work/$chain.out" 2>&1
  local status=$?
  cat "$work/$chain.out"
  [ "$status" -eq 0 ] || fail "$chain: $strategy on $np ranks ended with status $status"
  if [ "$steps" -gt 3 ]; then
    grep -qE "resumed from .*step_0*$((steps - 3))\.h5 at step $((steps - 3))" "$work/$chain.out" ||
      fail "$chain: $strategy on $np ranks did not resume from step $((steps - 3))"
    ! grep -q "global batch changes" "$work/$chain.out" ||
      fail "$chain: $strategy on $np ranks reported a change of the global batch, which is 12 rows throughout"
  fi
}
run mixed 4 3 3 fsdp
run mixed 3 4 6 replicated
run mixed 2 6 9 hsdp --set parallel.shard_group_size=1
run reference 4 3 3 replicated
run reference 3 4 6 replicated
run reference 2 6 9 replicated
run hsdp 4 3 3 hsdp --set parallel.shard_group_size=2
timeout 120 "$mpirun" --oversubscribe -np 2 "$tool" verify "$work/hsdp/ckpt/step_00000003.h5" ||
  fail "the checkpoint written under HSDP (shard groups of 2) does not verify"
run hsdp 2 6 6 fsdp
mkdir -p "$work/reference2/ckpt" && cp "$work/reference/ckpt/step_00000003.h5" "$work/reference2/ckpt/"
run reference2 2 6 6 replicated
/usr/bin/python3 - "$work" <<'PY' || fail "losses differ"
import json, sys
def losses(chain):
    path = f"{sys.argv[1]}/{chain}/metrics.jsonl"
    return {j["step"]: j["loss"] for j in map(json.loads, open(path)) if j.get("type") == "train"}
def compare(name, chain, reference, steps):
    assert sorted(chain) == steps, f"steps in the {name} chain: {sorted(chain)}"
    assert set(steps) <= set(reference), f"steps in its reference: {sorted(reference)}"
    worst = max(abs(chain[s] - reference[s]) / reference[s] for s in chain)
    for s in sorted(chain):
        print(f"step {s}: {name} {chain[s]:.8f}, replicated {reference[s]:.8f}")
    print(f"{name}: largest relative difference {worst:.2e}")
    return worst <= 1e-5
reference = losses("reference")
ok = compare("fsdp/replicated/hsdp", losses("mixed"), reference, list(range(1, 10)))
ok = compare("hsdp(S=2)/fsdp", losses("hsdp"), {**reference, **losses("reference2")}, list(range(1, 7))) and ok
sys.exit(0 if ok else 1)
PY
echo PASS
