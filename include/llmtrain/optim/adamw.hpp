// AdamW (decoupled weight decay) over parameter units, with the same arithmetic as torch.optim.AdamW.
//
// Moments live in buffers shaped like the parameters this rank updates: whole units (replicated) or the
// rank's range of each unit (FSDP), so checkpoints can write them by name and range. Weight decay skips norm weights
// and embeddings unless decay_norms_and_embeddings is set. Where the parameters live in a CUDA backend's memory
// (the replicated store on a device), the moments live there too and a step is one device launch
// (optim::cuda::adamw_update) over the same parts with the same coefficients.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "llmtrain/model/backend.hpp"
#include "llmtrain/model/param_units.hpp"
#include "llmtrain/model/units_in_memory.hpp"

namespace llmtrain::optim {

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  bool decay_norms_and_embeddings = false;
};

class AdamW {
 public:
  // `params` gives the layouts and ranges of the parameters step() will update; they live in host memory
  // (`device` null) or in the memory of `device` (a CUDA backend, which must outlive the optimizer).
  AdamW(const std::vector<model::ParamUnit<float>>& params, const AdamWOptions& options,
        model::Backend<float>* device = nullptr);

  // One update of every parameter from grad_scale * its gradient (grad_scale carries gradient clipping)
  // at learning rate lr. params and grads have the ranges given at construction. Units are updated in
  // index order; `updated(u)`, if given, runs as soon as unit u is (a parameter store may start
  // communicating it while the later units update).
  void step(std::vector<model::ParamUnit<float>>& params, const std::vector<model::ParamUnit<float>>& grads,
            double lr, double grad_scale = 1.0, const std::function<void(int)>& updated = {});

  std::int64_t steps_taken() const { return steps_; }
  // Continues the bias correction of a run that took `steps` updates (a checkpoint's, with its moments).
  void restore_steps_taken(std::int64_t steps) { steps_ = steps; }
  // The moments, where the parameters live (device memory: copy them through memory()).
  std::vector<model::ParamUnit<float>>& first_moments() { return m_; }
  std::vector<model::ParamUnit<float>>& second_moments() { return v_; }
  // The device backend the parameters and moments live in, or null (host memory).
  model::Backend<float>* device() const { return device_; }

 private:
  AdamWOptions options_;
  model::Backend<float>* device_;
  std::int64_t steps_ = 0;
  model::UnitsInMemory<float> m_on_device_, v_on_device_;  // the buffers behind m_ and v_ on a device
  std::vector<model::ParamUnit<float>> m_, v_;
};

}  // namespace llmtrain::optim
