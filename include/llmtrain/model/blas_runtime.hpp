// Host BLAS set-up: make OpenBLAS use its fast kernels, and say which it uses.
//
// Debian's OpenBLAS 0.3.21 is built with DYNAMIC_ARCH and does not recognise Sapphire Rapids: it falls back
// to its "Prescott" (SSE3) kernels, 4-6x slower in sgemm than its AVX-512 "SkylakeX" ones. The kernel table
// is chosen once, when the library is loaded (before main), from OPENBLAS_CORETYPE. So the fix has to
// happen before the process starts: if the variable is unset, the CPU has AVX-512 and OpenBLAS picked a
// pre-AVX-512 kernel set (or, on a CPU with AVX512_BF16, one without bf16 kernels),
// ensure_fast_blas_kernels() sets OPENBLAS_CORETYPE and re-executes the program with the same arguments
// (same pid, so mpirun is unaffected; call it before MPI_Init). A user who sets OPENBLAS_CORETYPE keeps
// their choice. The set chosen: Cooperlake on CPUs with AVX512_BF16 (its
// sbgemm uses the bf16 dot-product instructions; SkylakeX's bf16 path is a slow generic loop; Zen 4 gets
// Cooperlake from OpenBLAS itself), SkylakeX on other AVX-512 CPUs.
#pragma once

#include <string>

namespace llmtrain::model {

// Call first thing in main(). Returns only if no re-execution was needed (or it failed, which is reported
// on stderr and leaves the slow but correct kernels in place).
void ensure_fast_blas_kernels(char** argv);

// The kernel set OpenBLAS uses ("SkylakeX", "Prescott", ...), or "unknown" for another BLAS.
std::string blas_kernel_name();

// Host BLAS threads (OpenBLAS); the trainer uses 1 per rank by default (one rank per core).
void set_blas_threads(int threads);

}  // namespace llmtrain::model
