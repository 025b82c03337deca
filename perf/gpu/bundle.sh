#!/usr/bin/env bash
# Packs what the device check (perf/gpu/check.sh) needs on a lent GPU machine that has the CUDA toolkit and
# PyTorch but none of our Debian packages and no network: llmtrain and the device test programs of a CUDA
# build (stripped), the list of those tests with their time limits (from ctest), and every shared library they
# load that is neither glibc/libstdc++ nor CUDA's (Open MPI with the plugins whose own libraries come along,
# and its help files; HDF5, OpenBLAS, Kokkos, hwloc, libevent, simdjson, pcre2, zstd, ...). cuBLAS, cuDNN and
# NCCL are left to that machine's toolkit and pip packages: check.sh finds them there at run time.
#
#   bash perf/gpu/bundle.sh BUILD_DIR BUNDLE_DIR      (e.g. build gpu-bundle; BUNDLE_DIR is git-ignored)
#
# BUNDLE_DIR gets payload.tar.xz (what check.sh unpacks) and MANIFEST.txt. The payload must stay small
# enough to travel with the working tree (the tool's limit is 64 MiB in all): above LLMTRAIN_BUNDLE_MAX_MB
# (default 40) compressed, this fails. Every library of the payload is checked to resolve inside it.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: bash perf/gpu/bundle.sh BUILD_DIR BUNDLE_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
bundle=$2
max_mb=${LLMTRAIN_BUNDLE_MAX_MB:-40}
here=$(cd "$(dirname "$0")" && pwd)
llmtrain="$build/bin/llmtrain"
[[ -x $llmtrain ]] || { echo "bundle.sh: $llmtrain not found: build it first (cmake --build $1 --target llmtrain)" >&2; exit 1; }
"$llmtrain" --version | grep -q nccl ||
  { echo "bundle.sh: $llmtrain was built without CUDA (llmtrain --version names no nccl)" >&2; exit 1; }

# Libraries the device machine brings itself: glibc's, the C++ runtime, the driver and CUDA's.
system_libs='^(linux-vdso|ld-linux|libc|libm|libpthread|librt|libdl|libresolv|libutil|libstdc\+\+|libgcc_s)\.so'
cuda_libs='^(libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnccl|libnvrtc|libnvJitLink|libcufft|libcurand|libcusparse|libcusolver|libnvidia-[a-z-]*)\.so'

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"

# The device tests: ctest's own list (label gpu), so names, commands and time limits are the build's.
ctest --test-dir "$build" -L gpu --show-only=json-v1 >"$stage/ctest.json"
python3 "$here/gpu_tests.py" "$stage/ctest.json" "$build/bin" >"$stage/gpu_tests.tsv"
rm "$stage/ctest.json"
programs=("$llmtrain")
while IFS=$'\t' read -r _name _timeout program _; do programs+=("$build/bin/$program"); done <"$stage/gpu_tests.tsv"
for program in "${programs[@]}"; do
  cp "$program" "$stage/bin/"
  strip --strip-unneeded "$stage/bin/$(basename "$program")"
done

# Open MPI's plugins (dlopen'ed, so ldd of llmtrain does not list them): those whose libraries are llmtrain's
# own or Open MPI's common ones; the rest (InfiniBand, UCX, libfabric, PSM, OpenSHMEM) serve no single-GPU run.
pkglibdir=$(ompi_info --parsable --path pkglibdir | cut -d: -f3)
pkgdatadir=$(ompi_info --parsable --path pkgdatadir | cut -d: -f3)
ompi_libdir=$(ompi_info --parsable --path libdir | cut -d: -f3)
needed() { ldd "$1" | awk '/=>/ { print $1 }'; }
declare -A allowed
for lib in $(needed "$llmtrain"); do allowed[$lib]=1; done
mkdir -p "$stage/openmpi/lib/openmpi3" "$stage/openmpi/share"
kept=0 dropped=()
for plugin in "$pkglibdir"/*.so; do
  ok=1
  for lib in $(needed "$plugin"); do
    [[ $lib =~ $system_libs || $lib =~ $cuda_libs || $lib == libmca_common_* || -n ${allowed[$lib]:-} ]] ||
      { ok=0; break; }
  done
  if ((ok)); then cp "$plugin" "$stage/openmpi/lib/openmpi3/"; kept=$((kept + 1)); else dropped+=("$(basename "$plugin" .so)"); fi
done
cp -r "$pkgdatadir" "$stage/openmpi/share/openmpi"
echo "Open MPI: $kept plugins kept, ${#dropped[@]} left out (${dropped[*]})"

# Every library the programs and plugins load, under the name they ask for (the SONAME), from this machine.
copy_deps() {
  ldd "$1" | while read -r name arrow path _; do
    [[ $arrow == "=>" ]] || continue
    [[ $name =~ $system_libs || $name =~ $cuda_libs ]] && continue
    [[ $path == "not" ]] && { echo "bundle.sh: $1 needs $name, which is not found here" >&2; exit 1; }
    [[ -e $stage/lib/$name ]] || cp -L "$path" "$stage/lib/$name"
  done
}
for elf in "$stage"/bin/* "$stage"/openmpi/lib/openmpi3/*.so; do copy_deps "$elf"; done

# The check: inside the payload, every library resolves to the payload or to what the device machine brings.
for elf in "$stage"/bin/* "$stage"/lib/* "$stage"/openmpi/lib/openmpi3/*.so; do
  LD_LIBRARY_PATH="$stage/lib:$ompi_libdir" ldd "$elf" | while read -r name arrow path _; do
    [[ $arrow == "=>" ]] || continue
    [[ $name =~ $system_libs || $name =~ $cuda_libs || $path == "$stage/lib/"* ]] && continue
    echo "bundle.sh: $(basename "$elf") loads $name from $path, outside the payload" >&2
    exit 1
  done
done

# The newest glibc and libstdc++ symbol versions the payload asks for: the machine must bring at least those.
newest() { for elf in "$stage"/bin/* "$stage"/lib/* "$stage"/openmpi/lib/openmpi3/*.so; do
  objdump -T "$elf" | grep -o "$1_[0-9.]*"; done | sort -uV | tail -1 | cut -d_ -f2; }
printf 'glibc\t%s\nGLIBCXX\t%s\n' "$(newest GLIBC)" "$(newest GLIBCXX)" >"$stage/requires.tsv"

mkdir -p "$bundle"
rm -f "$bundle/payload.tar.xz"
XZ_OPT="-6 -T0" tar -C "$stage" -cJf "$bundle/payload.tar.xz" .
staged_mb=$(du -sm "$stage" | cut -f1)
packed_bytes=$(stat -c %s "$bundle/payload.tar.xz")
{
  echo "llmtrain device-check bundle: made $(date -u +%FT%TZ) from $build"
  echo "source: $(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)"
  "$llmtrain" --version | head -1
  echo "device tests: $(wc -l <"$stage/gpu_tests.tsv")"
  echo "needs: glibc >= $(sed -n 's/^glibc\t//p' "$stage/requires.tsv"), GLIBCXX >= $(sed -n 's/^GLIBCXX\t//p' "$stage/requires.tsv")"
  echo "unpacked ${staged_mb} MiB, packed $((packed_bytes / 1024 / 1024)) MiB"
  (cd "$stage" && find . -type f -printf '%s\t%p\n' | sort -k2)
} >"$bundle/MANIFEST.txt"
echo "bundle: $bundle/payload.tar.xz, $((packed_bytes / 1024 / 1024)) MiB packed (${staged_mb} MiB unpacked):" \
     "llmtrain + $(wc -l <"$stage/gpu_tests.tsv") device test program(s), $(ls "$stage/lib" | wc -l) libraries, $kept Open MPI plugins"
if ((packed_bytes > max_mb * 1024 * 1024)); then
  echo "bundle.sh: the payload is over ${max_mb} MiB (LLMTRAIN_BUNDLE_MAX_MB): it may not travel with the tree" >&2
  exit 1
fi
