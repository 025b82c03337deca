#!/usr/bin/env bash
# A run continues pre-training an imported Hugging Face model: `llmtrain-ckpt import` prints the
# configuration's sections, checkpoint.init_from starts a run from the import's parameters (fresh loader and
# schedule), the run's own checkpoint wins over init_from when it resumes, a run whose [model] differs is
# refused naming the setting, and the export of the import states the source's bos/eos ids and tokenizer.
# With a learning rate of 0, a run's checkpoint holds exactly the import's parameters, also under FSDP on 2
# ranks: init_from loads every parameter, and nothing else.
# Usage: hf_init_from_test.sh LLMTRAIN LLMTRAIN_CKPT MPIEXEC FIXTURE CORPUS WORK_DIR
set -u
llmtrain=$1 tool=$2 mpiexec=$3 fixture=$4 corpus=$5 dir=$6
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"

out=$("$tool" import "$fixture" --output "$dir/import" 2>&1) || { echo "$out"; fail "import failed"; }
echo "$out"
grep -q "^wrote $dir/import/step_00000000.h5 (GraniteForCausalLM, [0-9]* parameters, float32 source)" <<<"$out" \
  || fail "no summary line"
for line in "embedding_multiplier = 1.5" "residual_multiplier = 0.8" "attention_multiplier = 0.2" "logits_scaling = 3" \
            "vocab_size = 300" "n_kv_heads = 4" "tie_embeddings = true" "max_position_embeddings = 64" \
            "bos_token = \"<|begin_of_text|>\"" "eos_token = \"<|end_of_text|>\"" \
            "init_from = \"$dir/import/step_00000000.h5\""; do
  grep -qF "$line" <<<"$out" || fail "the printed configuration lacks '$line'"
done
sections=$(sed -n '/^\[model\]/,$p' <<<"$out")
cat >"$dir/run.toml" <<TOML
$sections

[data]
seq_len = 32
logical_shards = 4

[[data.datasets]]
name = "gpl"
path = "$corpus"

[train]
steps = 2
warmup_steps = 1
batch_size = 2
lr = 1e-3
TOML
run() { "$llmtrain" "$dir/run.toml" --set "train.run_dir=$dir/run" --set "checkpoint.dir=$dir/run/ckpt" "$@" 2>&1; }
out=$(run) || { echo "$out"; fail "the run from the import failed"; }
grep -q "parameters from $dir/import/step_00000000.h5 (checkpoint.init_from, saved at step 0)" <<<"$out" \
  || { echo "$out"; fail "the run did not start from the import"; }
out=$(run --set train.steps=3) || { echo "$out"; fail "the resumed run failed"; }
grep -q "resumed from .*step_00000002.h5 at step 2" <<<"$out" || { echo "$out"; fail "no resume from the run's own checkpoint"; }
grep -q "checkpoint.init_from" <<<"$out" && { echo "$out"; fail "init_from applied although the run resumed"; }
out=$("$llmtrain" "$dir/run.toml" --set "train.run_dir=$dir/other" --set "checkpoint.dir=$dir/other/ckpt" \
        --set model.residual_multiplier=1 2>&1) && fail "a run with another [model] started from the import"
grep -q "its \[model\] differs from this run's:" <<<"$out" && grep -q "model.residual_multiplier: checkpoint has 0.8, this run has 1" <<<"$out" \
  || { echo "$out"; fail "the refusal does not name the setting"; }

models() { "$tool" inspect "$1" | grep -E "^  /model/" | sort; }
imported=$(models "$dir/import/step_00000000.h5")
[ -n "$imported" ] || fail "no /model datasets in the import"
for np in 1 2; do
  out=$("$mpiexec" --oversubscribe -np $np "$llmtrain" "$dir/run.toml" --set "train.run_dir=$dir/frozen$np" \
          --set "checkpoint.dir=$dir/frozen$np/ckpt" --set train.steps=1 --set train.lr=0 --set train.min_lr=0 \
          --set parallel.strategy=fsdp 2>&1) || { echo "$out"; fail "the run with lr 0 on $np ranks failed"; }
  [ "$(models "$dir/frozen$np/ckpt/step_00000001.h5")" = "$imported" ] \
    || fail "on $np ranks (fsdp), a step with lr 0 from the import does not hold the import's parameters"
done

out=$("$tool" export "$dir/import/step_00000000.h5" --format safetensors --output "$dir/hf" 2>&1) || { echo "$out"; fail "export failed"; }
python3 - "$dir/hf" "$fixture" <<'PY' || fail "the export's config.json does not state the source's settings"
import json, sys
ours, theirs = (json.load(open(d + "/config.json")) for d in sys.argv[1:3])
for key in ("architectures", "bos_token_id", "eos_token_id", "max_position_embeddings", "embedding_multiplier",
            "residual_multiplier", "attention_multiplier", "logits_scaling", "tie_word_embeddings"):
    assert ours[key] == theirs[key], (key, ours[key], theirs[key])
generation = json.load(open(sys.argv[1] + "/generation_config.json"))
assert generation["eos_token_id"] == theirs["eos_token_id"], generation
assert json.load(open(sys.argv[1] + "/tokenizer.json")) == json.load(open(sys.argv[2] + "/tokenizer.json"))
PY
echo "PASS"
