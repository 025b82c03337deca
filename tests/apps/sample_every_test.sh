#!/usr/bin/env bash
# train.sample_every on 2 ranks: the greedy sample is logged once per sampling step (rank 0 only), with the
# same text whether the parameters are replicated or sharded (fsdp: both ranks take part in every gather of
# the decoder's passes; a rank that did not would hang the other; hsdp with shard groups of 1 replicates
# across groups). Samples at steps 2 and 4 of 6, from an
# initialisation wide enough (model.init_std = 0.5) that the text is varied rather than one repeated word.
# Usage: sample_every_test.sh MPIRUN LLMTRAIN CONFIG WORK_DIR
set -u
mpirun=$1 llmtrain=$2 config=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
samples() {  # STRATEGY [SETTINGS...]
  local strategy=$1; shift
  "$mpirun" --oversubscribe -np 2 "$llmtrain" "$config" --set train.run_dir="$work/$strategy" --set train.steps=6 \
    --set parallel.strategy="$strategy" "$@" --set train.sample_every=2 --set train.sample_tokens=12 \
    --set train.sample_prompt="This License" --set model.init_std=0.5 > "$work/$strategy.log" 2>&1 \
    || { cat "$work/$strategy.log"; fail "the $strategy run failed"; }
  grep '^sample at step' "$work/$strategy.log"
}
replicated=$(samples replicated) || exit 1
fsdp=$(samples fsdp) || exit 1
hsdp=$(samples hsdp --set parallel.shard_group_size=1) || exit 1
echo "replicated:"; echo "$replicated"
echo "fsdp:"; echo "$fsdp"
[ "$(grep -c . <<<"$replicated")" = 2 ] || fail "expected 2 sample lines (steps 2 and 4, rank 0 only)"
grep -qE '^sample at step 2: ".+"$' <<<"$replicated" || fail "no sample at step 2"
grep -qE '^sample at step 4: ".+"$' <<<"$replicated" || fail "no sample at step 4"
[ "$(grep -oE '[^ "]+' <<<"${replicated#*: }" | sort -u | wc -l)" -gt 3 ] || fail "the sample repeats one word"
[ "$replicated" = "$fsdp" ] || fail "fsdp samples differ from replicated ones"
[ "$replicated" = "$hsdp" ] || fail "hsdp samples differ from replicated ones"
echo "PASS"
