#!/usr/bin/env bash
# The device check (issue 28): on a machine with a GPU, in one bounded run (default 285 s), from the repository
# root: the versions actually loaded (device, driver, CUDA runtime, cuBLAS, cuDNN, NCCL), then
#   part 1, correctness: the device tests (ctest label gpu), each with a time limit: pass / fail / skip;
#   part 2, throughput: llmtrain with train.device = "cuda" (bf16) on inputs/tiny.toml, inputs/llama-1b.toml
#           and inputs/small.toml for a few steps each, beside PyTorch on the same model (eager and
#           torch.compile): tokens/s, MFU against the same peak, peak device memory, and the ratios.
# Each part reports on its own: one failing or running out of time does not stop the other. Without a visible
# device, the tests report skipped (exit 77) and part 2 says so and is skipped; the check still succeeds.
#
#   bash perf/gpu/check.sh OUTDIR                     binaries from the bundle (perf/gpu/bundle.sh) in gpu-bundle/
#   bash perf/gpu/check.sh OUTDIR --bundle DIR        ... in DIR
#   bash perf/gpu/check.sh OUTDIR --build-dir BUILD   binaries of a build tree, libraries of this machine
# LLMTRAIN_CHECK_BUDGET_S bounds the whole run (seconds); PYTHON names the python with torch (python3).
# OUTDIR gets at most 8 files (what the device tool brings back): summary.md, check.log (all output),
# versions.json, tests.tsv, tests.log, throughput.json, throughput.log.
# Exit status: 0 when no test failed and every throughput run that started ended well, else 1; 2 for usage.
set -uo pipefail
usage() { echo "usage: bash perf/gpu/check.sh OUTDIR [--bundle DIR | --build-dir BUILD]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
out=$1; shift
bundle=gpu-bundle build_dir=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --bundle) [[ $# -ge 2 ]] || usage; bundle=$2; shift 2 ;;
    --build-dir) [[ $# -ge 2 ]] || usage; build_dir=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    *) usage ;;
  esac
done
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 2
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
rm -f "$out"/{summary.md,check.log,versions.json,tests.tsv,tests.log,throughput.json,throughput.log}
exec > >(tee -a "$out/check.log") 2>&1
tee_pid=$!
python=${PYTHON:-python3}
budget=${LLMTRAIN_CHECK_BUDGET_S:-285}
deadline=$((SECONDS + budget))
work=$(mktemp -d "${TMPDIR:-/tmp}/llmtrain-gpu-check.XXXXXX")
# At exit: the scratch space goes, and tee gets to write the last lines before the script returns.
trap 'rm -rf "$work"; exec >&- 2>&-; wait $tee_pid' EXIT
summary=$out/summary.md
echo "# llmtrain device check, $(date -u +%FT%TZ)" >"$summary"

# bounded UNTIL CAP LOG CMD...: runs CMD, output appended to LOG, for at most CAP seconds and never past
# second UNTIL of this script (nor its deadline). Returns CMD's status; 124 when stopped at the limit, 125 when
# no time was left to start it.
bounded() {
  local until=$1 cap=$2 log=$3; shift 3
  ((until > deadline)) && until=$deadline
  ((until - SECONDS < cap)) && cap=$((until - SECONDS))
  if ((cap < 3)); then echo "not started: no time left of the ${budget} s budget" >>"$log"; return 125; fi
  timeout -k 5 "$cap" "$@" >>"$log" 2>&1
}

# --- the programs and their environment ------------------------------------------------------------------
# CUDA's libraries come from this machine: pip's NCCL and cuDNN (PyTorch's) first, then the toolkit's, then
# pip's other CUDA libraries; the bundle's own libraries go before all of them.
cuda_library_path() {
  local dirs=() nvcc toolkit
  mapfile -t pip_dirs < <("$python" - 2>/dev/null <<'EOF'
import os
import nvidia  # the namespace of the NVIDIA pip packages
for sub in ("nccl", "cudnn", "cu13"):
    for base in nvidia.__path__:
        if os.path.isdir(os.path.join(base, sub, "lib")):
            print(os.path.join(base, sub, "lib"))
EOF
  )
  for d in "${pip_dirs[@]}"; do [[ $d != */cu13/lib ]] && dirs+=("$d"); done
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  toolkit=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
  for d in "$toolkit/lib64" "$toolkit/targets/x86_64-linux/lib"; do [[ -d $d ]] && dirs+=("$d"); done
  for d in "${pip_dirs[@]}"; do [[ $d == */cu13/lib ]] && dirs+=("$d"); done
  local IFS=:
  echo "${dirs[*]}"
}
echo "== environment"
tests_tsv=$work/gpu_tests.tsv
cuda_path=$(cuda_library_path)
bundle_lib=""
if [[ -n $build_dir ]]; then
  bin=$build_dir/bin
  ctest --test-dir "$build_dir" -L gpu --show-only=json-v1 >"$work/ctest.json" &&
    "$python" perf/gpu/gpu_tests.py "$work/ctest.json" "$bin" >"$tests_tsv" || : >"$tests_tsv"
  echo "binaries: $bin (this machine's libraries)"
else
  payload=$bundle/payload.tar.xz
  if [[ ! -f $payload ]]; then
    echo "no bundle at $payload: make it with bash perf/gpu/bundle.sh BUILD_DIR $bundle (or give --build-dir)"
    echo "**No bundle** at \`$payload\`: nothing ran." >>"$summary"
    exit 1
  fi
  mkdir -p "$work/bundle"
  tar -C "$work/bundle" -xJf "$payload" 2>/dev/null ||
    "$python" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$payload" "$work/bundle" || exit 1
  bin=$work/bundle/bin
  cp "$work/bundle/gpu_tests.tsv" "$tests_tsv"
  export OPAL_PREFIX=$work/bundle/openmpi
  export OPAL_PKGLIBDIR=$OPAL_PREFIX/lib/openmpi3 OPAL_PKGDATADIR=$OPAL_PREFIX/share/openmpi
  bundle_lib=$work/bundle/lib
  echo "binaries: $bundle ($(head -1 "$bundle/MANIFEST.txt" 2>/dev/null))"
  # Built on Debian 12: this machine's glibc must be at least as new as the one the payload was linked against.
  needs=$(sed -n 's/^glibc\t//p' "$work/bundle/requires.tsv" 2>/dev/null)
  has=$(getconf GNU_LIBC_VERSION 2>/dev/null | cut -d' ' -f2)
  if [[ -n $needs && -n $has && $(printf '%s\n' "$needs" "$has" | sort -V | head -1) != "$needs" ]]; then
    echo "warning: the bundle needs glibc >= $needs, this machine has $has: its programs will not start"
  fi
  echo "glibc: this machine ${has:-unknown}, the bundle needs ${needs:-unknown}"
fi
# Our programs run under `ours` (the bundle's libraries, then CUDA's), the probe under `cuda` (CUDA's alone:
# it loads the CUDA libraries our programs load, and python none of the bundle's Debian ones); PyTorch keeps
# this machine's environment, so that it loads its own CUDA libraries.
cuda=(env "LD_LIBRARY_PATH=$cuda_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
ours=(env "LD_LIBRARY_PATH=${bundle_lib:+$bundle_lib:}$cuda_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
# One process, no mpirun: a singleton that starts no Open MPI daemon.
export OMPI_MCA_ess_singleton_isolated=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LLMTRAIN_SOURCE_DIR=$repo
echo "our programs run with ${ours[1]}"
"${ours[@]}" "$bin/llmtrain" --version || echo "llmtrain does not start here (exit $?)"

echo "== versions"
bounded $deadline 60 "$work/versions.log" "${cuda[@]}" "$python" perf/gpu/gpu_info.py --json "$out/versions.json"
cat "$work/versions.log"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm \
  --format=csv 2>&1 | head -3
echo "llmtrain loads:"; "${ours[@]}" ldd "$bin/llmtrain" | grep -E 'libcuda|cublas|nccl|cudnn|not found' | sed 's/^[[:space:]]*/  /'
devices=$("$python" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$out/versions.json" 2>/dev/null || echo 0)
{ echo; echo "## Versions"; echo; echo '```'; cat "$work/versions.log"; echo '```'; } >>"$summary"

# --- part 1: correctness ---------------------------------------------------------------------------------
echo "== part 1: device tests (label gpu)"
# The whole part within LLMTRAIN_CHECK_TESTS_S (default 110 s), each test within its ctest limit and 90 s.
part1_until=$((SECONDS + ${LLMTRAIN_CHECK_TESTS_S:-110}))
per_test_cap=90
printf 'test\tresult\tseconds\tnote\n' >"$out/tests.tsv"
failed=0 counts=""
if [[ ! -s $tests_tsv ]]; then
  echo "no device tests are registered (ctest -L gpu lists none)"
  counts="none registered"
else
  declare -A tally=()
  while IFS=$'\t' read -r -a test; do
    name=${test[0]} limit=${test[1]} program=${test[2]}
    ((limit > per_test_cap)) && limit=$per_test_cap
    echo "=== $name" >>"$out/tests.log"
    started=$SECONDS
    bounded $part1_until "$limit" "$out/tests.log" "${ours[@]}" "$bin/$program" "${test[@]:3}" </dev/null
    rc=$?
    case $rc in
      0) result=pass ;;
      77) result=skip ;;
      124 | 137) result=timeout ;;
      125) result=not-run ;;
      *) result=fail ;;
    esac
    note=$(sed -n "/^=== $name\$/,\$p" "$out/tests.log" | grep -m1 -E '^SKIPPED|^\[  FAILED  \]|error' | cut -c1-120)
    [[ $result == fail || $result == timeout ]] && failed=1
    [[ $result == fail ]] && note="exit $rc${note:+: $note}"
    tally[$result]=$((${tally[$result]:-0} + 1))
    printf '%s\t%s\t%s\t%s\n' "$name" "$result" "$((SECONDS - started))" "$note" >>"$out/tests.tsv"
  done <"$tests_tsv"
  for r in pass fail timeout skip not-run; do [[ -n ${tally[$r]:-} ]] && counts+="${counts:+, }${tally[$r]} $r"; done
fi
column -t -s $'\t' "$out/tests.tsv" 2>/dev/null || cat "$out/tests.tsv"
echo "part 1: $counts"
{
  echo; echo "## Part 1: device tests ($counts)"; echo
  echo "| test | result | seconds | note |"; echo "|---|---|---|---|"
  tail -n +2 "$out/tests.tsv" | sed 's/\t/ | /g; s/^/| /; s/$/ |/'
} >>"$summary"

# --- part 2: throughput ----------------------------------------------------------------------------------
echo "== part 2: throughput (llmtrain train.device = \"cuda\" beside PyTorch)"
throughput_failed=0
echo >>"$summary"
if ((devices == 0)); then
  echo "part 2: no CUDA device is visible here: throughput skipped"
  echo "## Part 2: throughput: skipped (no CUDA device is visible)" >>"$summary"
elif ! "$python" -c 'import torch' 2>/dev/null; then
  echo "part 2: $python cannot import torch: the PyTorch side is left out"
fi
if ((devices > 0)); then
  : >"$work/runs.jsonl"
  # model config | llmtrain steps | llmtrain cap (s) | torch cap (s). The 1B model comes second: after the
  # cheap sanity run of tiny, before small, so that it is the one that keeps its time if time runs short.
  while read -r model config steps llm_cap torch_cap; do
    echo "--- $model ($config)"
    sets=(--set train.precision=bf16 --set train.grad_accum=1 --set train.recompute=none --set train.steps="$steps"
          --set train.warmup_steps=0 --set train.eval_every=0 --set train.eval_batches=1
          --set log.every_steps=1 --set train.run_dir="$work/runs/$model")
    dry=$work/$model.dry metrics=$work/runs/$model/metrics.jsonl torch_json=$work/$model.torch.jsonl
    bounded $deadline 30 "$dry" "${ours[@]}" "$bin/llmtrain" --dry-run "$config" "${sets[@]}"
    { echo "### $model: llmtrain --dry-run"; cat "$dry"; } >>"$out/throughput.log"
    grep -E '^(model|batch):' "$dry"
    echo "### $model: llmtrain" >>"$out/throughput.log"
    bounded $deadline "$llm_cap" "$out/throughput.log" "${ours[@]}" "$bin/llmtrain" "$config" "${sets[@]}" --set train.device=cuda </dev/null
    llm_rc=$?
    peak=$("$python" perf/gpu/throughput.py peak "$dry" "$metrics" 2>/dev/null)
    echo "### $model: PyTorch${peak:+ (peak $peak TFLOP/s, as llmtrain)}" >>"$out/throughput.log"
    bounded $deadline "$torch_cap" "$out/throughput.log" env PYTHONUNBUFFERED=1 "$python" perf/gpu/torch_reference.py "$dry" \
      --device cuda --modes eager,compile --steps 8 --warmup 2 ${peak:+--peak-tflops "$peak"} --json-out "$torch_json"
    torch_rc=$?
    echo "llmtrain: exit $llm_rc; PyTorch: exit $torch_rc"
    ((llm_rc == 125 && torch_rc == 125)) || { ((llm_rc != 0 || torch_rc != 0)) && throughput_failed=1; }
    printf '{"model": "%s", "dry_run": "%s", "metrics": "%s", "llmtrain_rc": %d, "torch": "%s", "torch_rc": %d}\n' \
      "$model" "$dry" "$metrics" "$llm_rc" "$torch_json" "$torch_rc" >>"$work/runs.jsonl"
  done <<'EOF'
tiny inputs/tiny.toml 20 30 45
llama-1b inputs/llama-1b.toml 8 70 80
small inputs/small.toml 12 30 50
EOF
  "$python" perf/gpu/throughput.py table "$work/runs.jsonl" "$out/throughput.json" >"$work/table.md" ||
    echo "the throughput table could not be made (see above)" >"$work/table.md"
  cat "$work/table.md"
  {
    echo "## Part 2: throughput"; echo
    echo "bf16 products, fp32 weights and AdamW; the configuration's micro-batch, train.grad_accum = 1, no"
    echo "recomputation; medians after 2 warm-up steps. Ratios: llmtrain's tokens/s over PyTorch's."; echo
    cat "$work/table.md"
  } >>"$summary"
fi

((failed || throughput_failed)) && status=1 || status=0
{ echo; echo "Finished in $SECONDS s of the ${budget} s budget; exit status $status."; } >>"$summary"
# What the device tool brings back is at most 16 MiB a file: a runaway log keeps its end.
for f in "$out"/*; do
  (($(stat -c %s "$f") > 15 * 1024 * 1024)) && tail -c $((15 * 1024 * 1024)) "$f" >"$f.tail" && mv "$f.tail" "$f"
done
echo "== summary ($summary)"
cat "$summary"
echo "check: $SECONDS s; summary in $summary"
exit $status
