// The MPI datatype and sum operation of each DType. MPI has no bf16: it travels as a 2-byte contiguous
// type and is summed by a user-defined operation (the definition is in docs/collectives.md).
#pragma once

#include <mpi.h>

#include "llmtrain/dist/dtype.hpp"

namespace llmtrain::dist {

class MpiDatatypes {
 public:
  MpiDatatypes();  // creates and commits the bf16 type and its sum
  ~MpiDatatypes();
  MpiDatatypes(const MpiDatatypes&) = delete;
  MpiDatatypes& operator=(const MpiDatatypes&) = delete;

  MPI_Datatype datatype(DType type) const;
  MPI_Op sum(DType type) const;

 private:
  MPI_Datatype bf16_ = MPI_DATATYPE_NULL;
  MPI_Op bf16_sum_ = MPI_OP_NULL;
};

}  // namespace llmtrain::dist
