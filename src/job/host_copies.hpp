// The checkpoint boundary of a run on a device: checkpoint writers, readers and memory snapshots only ever see
// host memory (HDF5 and the snapshot threads are never handed a device pointer). Where the store's parameters
// and the optimizer's moments live in a CUDA backend's memory, host copies of the same shapes stand in for them:
// filled from the device before a write, read into and copied onto the device after a read. On the host the
// units themselves are handed out. The file format is the same either way, so a checkpoint written on cuda
// resumes on cpu and the reverse.
#pragma once

#include <vector>

#include "llmtrain/model/backend.hpp"
#include "llmtrain/model/param_units.hpp"
#include "llmtrain/optim/adamw.hpp"
#include "llmtrain/parallel/param_store.hpp"

namespace llmtrain::job {

class HostCopies {
 public:
  // `store` and `optimizer` must outlive this; `device`: the CUDA backend their units live in, or null.
  HostCopies(parallel::ParamStore& store, optim::AdamW& optimizer, model::Backend<float>* device);

  struct Units {
    std::vector<model::ParamUnit<float>>* params;
    std::vector<model::ParamUnit<float>>* first_moments;
    std::vector<model::ParamUnit<float>>* second_moments;
  };
  // The units as they are now, in host memory (on a device: copied, once the queued work has finished).
  Units current();
  // Host units for a reader to fill; then loaded() puts what was read where the units live.
  Units to_fill();
  // After to_fill()'s units were read: onto the device (the parameters, and the moments with `moments`).
  void loaded(bool moments);

 private:
  parallel::ParamStore& store_;
  optim::AdamW& optimizer_;
  model::Backend<float>* device_;
  std::vector<model::ParamUnit<float>> params_, m_, v_;  // host copies on a device; empty on the host
};

}  // namespace llmtrain::job
