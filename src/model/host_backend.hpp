// The host backend (backend.hpp): the model's operations as Kokkos kernels (ops.hpp), the tiled attention
// (attention.hpp) and BLAS (gemm.hpp), on Kokkos memory that the process's tracker counts. Float and double
// (double backs the gradient checks). Defined in host_backend.cpp.
#pragma once

#include <memory>

#include "llmtrain/model/backend.hpp"

namespace llmtrain::model {

template <typename T>
std::unique_ptr<Backend<T>> make_host_backend();

}  // namespace llmtrain::model
