#!/usr/bin/env bash
# llmtrain-generate on a checkpoint trained here (tests/job/resume.toml, 80 steps, GPT-2's tokenizer):
#  - greedy text is deterministic and equals the argmax of the full-sequence logits, token after token
#    (generate_probe greedy: no cache), alone and for prompts of different lengths batched together;
#  - sampling repeats bit for bit with the same seed and differs with another;
#  - --score's losses equal the model's own forward loss over the same windows (generate_probe score), within
#    1e-5 (the probe prints 6 decimals of its own mean);
#  - bad inputs: exit 1 with a message naming the file (and line) or the flag.
# Usage: generate_test.sh LLMTRAIN GENERATE PROBE CONFIG TOKENIZER CORPUS WORK_DIR
set -u
llmtrain=$1 generate=$2 probe=$3 config=$4 tokenizer=$5 corpus=$6 work=$7
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$llmtrain" "$config" --set train.run_dir="$work/run" --set checkpoint.dir="$work/ckpt" --set train.steps=80 \
  --set train.warmup_steps=5 --set train.lr=3e-3 > "$work/train.log" 2>&1 || { cat "$work/train.log"; fail "training failed"; }
ckpt=$work/ckpt/step_00000080.h5
[ -f "$ckpt" ] || fail "no checkpoint $ckpt"

# Greedy, one prompt, twice; and the cache-free reference.
prompt="This License applies to any program"
one=$("$generate" "$ckpt" --prompt "$prompt" --max-new-tokens 30 2>"$work/err") || { cat "$work/err"; fail "greedy run failed"; }
two=$("$generate" "$ckpt" --prompt "$prompt" --max-new-tokens 30 2>/dev/null)
[ "$one" = "$two" ] || fail "greedy output differs between runs: '$one' vs '$two'"
ref=$("$probe" greedy "$ckpt" "$tokenizer" 30 "$prompt") || fail "probe failed"
[ "$one" = "$ref" ] || fail "greedy output '$one' is not the full-logits argmax '$ref'"
grep -qE "^30 tokens generated from 1 prompt of [0-9]+ tokens in [0-9.]+ s \([0-9.]+ CPU s\): [0-9.]+ tokens/s$" "$work/err" \
  || { cat "$work/err"; fail "no tokens/s line on stderr"; }
echo "greedy: $one"

# Prompts of different lengths in one batch: each as alone.
printf '%s\n' '{"prompt": "You"}' '{"prompt": "The GNU General Public License is a free, copyleft license for"}' \
  '{"id": 3, "prompt": "Developers that use"}' > "$work/prompts.jsonl"
batched=$("$generate" "$ckpt" --prompts "$work/prompts.jsonl" --max-new-tokens 12 2>/dev/null) || fail "batched run failed"
expected=$(for p in "You" "The GNU General Public License is a free, copyleft license for" "Developers that use"; do
  "$probe" greedy "$ckpt" "$tokenizer" 12 "$p"; done)
[ "$batched" = "$expected" ] || { echo "batched:"; echo "$batched"; echo "expected:"; echo "$expected"; fail "batched greedy differs"; }

# Sampling.
sample() { "$generate" "$ckpt" --prompts "$work/prompts.jsonl" --max-new-tokens 12 --temperature 0.9 --top-p 0.95 "$@" 2>/dev/null; }
s5=$(sample --seed 5) && s5b=$(sample --seed 5) && s6=$(sample --seed 6) || fail "sampling failed"
[ "$s5" = "$s5b" ] || fail "same seed, different samples"
[ "$s5" != "$s6" ] || fail "seeds 5 and 6 gave the same samples"
[ "$s5" != "$batched" ] || fail "sampling at temperature 0.9 gave the greedy text"

# Scoring: two long documents of the corpus (several windows of 64 each) and a short one.
{ awk 'length > 800' "$corpus" | head -n 2; head -n 1 "$corpus"; } > "$work/docs.jsonl"
scored=$("$generate" "$ckpt" --score "$work/docs.jsonl" 2>/dev/null) || fail "score failed"
echo "$scored"
grep -qE "^# .*docs.jsonl: windows of 64 tokens, stride 64; documents framed with EOS after each$" <<<"$scored" \
  || fail "no header naming windows and stride"
reference=$("$probe" score "$ckpt" "$tokenizer" "$work/docs.jsonl") || fail "probe score failed"
paste <(grep '^document' <<<"$scored") <(echo "$reference") | awk '
  { tool = $4; tool_n = $8; ref = $13; ref_n = $15;
    if (tool_n != ref_n) { print "FAIL: document " NR " counts " tool_n " targets, the reference " ref_n; bad = 1 }
    d = tool - ref; if (d < 0) d = -d; if (d > 1e-5) { print "FAIL: document " NR " loss " tool " vs forward " ref; bad = 1 } }
  END { exit bad }' || exit 1
[ "$(grep -c '^document' <<<"$scored")" = 3 ] || fail "not 3 documents scored"
grep -qE "^total: loss [0-9.]+ perplexity [0-9.]+ over [0-9]+ tokens in 3 documents$" <<<"$scored" || fail "no total line"
# Overlapping windows count every target once.
strided=$("$generate" "$ckpt" --score "$work/docs.jsonl" --stride 16 2>/dev/null) || fail "strided score failed"
[ "$(grep '^total' <<<"$strided" | awk '{print $7}')" = "$(grep '^total' <<<"$scored" | awk '{print $7}')" ] \
  || fail "--stride 16 counts other targets: $(grep '^total' <<<"$strided")"

# A tokenizer of the same size replaces the checkpoint's with a note; another size is refused.
out=$("$generate" "$ckpt" --prompt "You" --max-new-tokens 2 --tokenizer "$tokenizer" 2>&1) || fail "--tokenizer of the same size refused: $out"
grep -q "note: --tokenizer $tokenizer replaces the checkpoint's tokenizer" <<<"$out" || fail "no note for --tokenizer: $out"
mkdir -p "$work/tok3"
printf '%s' '{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,"post_processor":null,' \
  '"decoder":null,"model":{"type":"BPE","vocab":{"a":0,"b":1,"c":2},"merges":[]}}' > "$work/tok3/tokenizer.json"

# Bad inputs: exit status 1 and a message naming the file, line, field or flag.
expect_error() {  # PATTERN ARGS...
  local pattern=$1; shift
  local out status
  out=$("$generate" "$@" 2>&1); status=$?
  [ "$status" -eq 1 ] || fail "exit status $status, not 1, for: $* ($out)"
  grep -qE -e "$pattern" <<<"$out" || fail "for: $*: expected '$pattern', got: $out"
}
printf '%s\n' '{"prompt": "fine"}' '{"prompt": "unterminated' > "$work/bad_line.jsonl"
printf '%s\n' '{"prompt": "fine"}' '{"text": "no prompt"}' > "$work/no_field.jsonl"
expect_error "llmtrain-generate: error: .*absent.h5: no such checkpoint file" "$work/absent.h5" --prompt x
expect_error "bad_line.jsonl:2: not JSON" "$ckpt" --prompts "$work/bad_line.jsonl"
expect_error "no_field.jsonl:2: no string field \"prompt\"" "$ckpt" --prompts "$work/no_field.jsonl"
expect_error "no_field.jsonl:1: no string field \"body\"" "$ckpt" --score "$work/no_field.jsonl" --field body
expect_error "--tokenizer .*tok3 has 3 tokens, the checkpoint's tokenizer has 50257" "$ckpt" --prompt x --tokenizer "$work/tok3"
expect_error "--temperature must be >= 0, got -0.5" "$ckpt" --prompt x --temperature -0.5
expect_error "--top-p must lie in \(0, 1\], got 0$" "$ckpt" --prompt x --top-p 0
expect_error "--top-p must lie in \(0, 1\], got 1.5" "$ckpt" --prompt x --top-p 1.5
expect_error "--max-new-tokens: expected a positive integer, got 'many'" "$ckpt" --prompt x --max-new-tokens many
expect_error "give exactly one of --prompt, --prompts and --score" "$ckpt" --prompt x --score "$work/docs.jsonl"
expect_error "missing.jsonl: cannot open" "$ckpt" --prompts "$work/missing.jsonl"
long=$(printf 'word %.0s' $(seq 80))  # 81 tokens: "word", 79 x " word", " "
expect_error "--prompt has 81 tokens; the model's context \(data.seq_len\) is 64" "$ckpt" --prompt "$long"
expect_error "--stride 65 exceeds the model's context \(data.seq_len\) 64" "$ckpt" --score "$work/docs.jsonl" --stride 65
echo "PASS"
