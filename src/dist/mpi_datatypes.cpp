// MPI datatypes and sums per DType; the bf16 sum is the one place its reduction semantics are coded.
#include "mpi_datatypes.hpp"

#include <cstdint>

#include "llmtrain/core/bf16.hpp"
#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::dist {
namespace {

// One reduction hop: inout[i] = bf16(fp32(in[i]) + fp32(inout[i])), rounded once, to nearest even. A bf16
// value has 8 significant bits, so the fp32 sum is exact unless the exponents differ by more than 15, and
// then the smaller operand is far below half a bf16 step: each hop is the exact sum rounded once to bf16.
void bf16_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = bf16_from_float(bf16_to_float(a[i]) + bf16_to_float(b[i]));
}

}  // namespace

MpiDatatypes::MpiDatatypes() {
  LLMTRAIN_MPI_CHECK(MPI_Type_contiguous(2, MPI_BYTE, &bf16_));
  LLMTRAIN_MPI_CHECK(MPI_Type_commit(&bf16_));
  LLMTRAIN_MPI_CHECK(MPI_Op_create(&bf16_sum, /*commute=*/1, &bf16_sum_));
}

MpiDatatypes::~MpiDatatypes() {
  MPI_Op_free(&bf16_sum_);
  MPI_Type_free(&bf16_);
}

MPI_Datatype MpiDatatypes::datatype(DType type) const {
  switch (type) {
    case DType::f32: return MPI_FLOAT;
    case DType::bf16: return bf16_;
    case DType::f64: return MPI_DOUBLE;
    case DType::i64: return MPI_INT64_T;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op MpiDatatypes::sum(DType type) const { return type == DType::bf16 ? bf16_sum_ : MPI_SUM; }

}  // namespace llmtrain::dist
