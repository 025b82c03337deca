#!/usr/bin/env bash
# The README's second command (and CI's): set up, build, and run every test; then build the test programs
# again with AddressSanitizer + UBSan in build-asan/ and run the unit and MPI tests there (the seed corpus
# replays of tests/fuzz included), less the long training runs of tests/sanitizers/release_only.txt unless --long.
# Set LLMTRAIN_SKIP_SANITIZED=1 to stop after the first tree.
# Tests labelled `long` (a local Slurm cluster, long training runs, 60 s of fuzzing per target) are registered, and run, only
# with --long (CMake's LLMTRAIN_LONG_TESTS), so a plain `ctest --test-dir build` never starts them either.
set -euo pipefail
cd "$(dirname "$0")/.."
long=OFF
if [[ "${1:-}" == "--long" ]]; then long=ON; shift; fi
bash scripts/build.sh -DLLMTRAIN_LONG_TESTS=$long
ctest --test-dir build --output-on-failure -j2
[[ "${LLMTRAIN_SKIP_SANITIZED:-0}" == 1 ]] && exit 0

# -O1 keeps the sanitized build and its run short; benchmarks and CUDA sources are left out (not test programs,
# and nvcc does not take the sanitizer flags). ccache, when present, makes the rebuild incremental.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" -DLLMTRAIN_SANITIZE=address,undefined \
      -DLLMTRAIN_ENABLE_CUDA=OFF -DLLMTRAIN_BUILD_BENCHMARKS=OFF -DLLMTRAIN_LONG_TESTS=OFF "${launcher[@]}" >/dev/null
cmake --build build-asan -j"$(nproc)"
# Leaks inside Open MPI and its plugins are not ours: tests/sanitizers/lsan.supp lists them by library, one
# comment each; plugins stay loaded and stacks are unwound fully so that every frame has a library name.
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# intercept_tls_get_addr=0: GCC 12's __tls_get_addr interceptor can take a dynamic TLS block of a dlopen'ed
# Open MPI plugin for a pre-2.25 glibc header and read garbage; LSan's tracer then dies at exit ("Tracer
# caught signal 11", once in CI on collectives_np4) with no leak found. Our thread_locals are linked statically,
# so they sit in static TLS, which LSan still scans.
export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:strict_string_checks=1:detect_stack_use_after_return=1"
ASAN_OPTIONS+=":intercept_tls_get_addr=0"
export OMPI_MCA_mca_base_component_disable_dlclose=1
# Without --long, the whole training runs listed in tests/sanitizers/release_only.txt (each has a lighter twin that
# does run sanitized) are left to the Release tree above: they would double CI's time.
exclude=()
if [[ $long == OFF ]]; then
  exclude=(-E "^($(grep -v '^#' tests/sanitizers/release_only.txt | awk 'NF {print $1}' | paste -sd'|'))\$")
fi
ctest --test-dir build-asan --output-on-failure -j2 -L 'unit|mpi' "${exclude[@]}"
