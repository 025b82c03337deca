// AdamW update, one call per tensor part in this rank's range (decay is per tensor): on the host the
// variant for the widest instruction set the CPU runs (isa/adamw_kernels.hpp), on GPUs a Kokkos kernel of
// the same element arithmetic (isa/adamw_element.inc); with the units in a CUDA backend's memory, every part
// at once in one device launch (device_passes.hpp).
#include "llmtrain/optim/adamw.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "device_passes.hpp"
#include "isa/adamw_kernels.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::optim {

using Range = Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<std::int64_t>>;
using isa::AdamWCoefficients;

namespace {
#define LLMTRAIN_KERNEL_FN KOKKOS_INLINE_FUNCTION
#include "isa/adamw_element.inc"
#undef LLMTRAIN_KERNEL_FN

#if defined(KOKKOS_ENABLE_CUDA)
constexpr bool kHostKernels = false;
#else
constexpr bool kHostKernels = true;
#endif
}  // namespace

AdamW::AdamW(const std::vector<model::ParamUnit<float>>& params, const AdamWOptions& options,
             model::Backend<float>* device)
    : options_(options), device_(device && device->device() == model::Device::Cuda ? device : nullptr) {
  if (device_) {
    m_on_device_ = model::allocate_like(params, *device_, "adamw.m");
    v_on_device_ = model::allocate_like(params, *device_, "adamw.v");
    m_ = m_on_device_.units;
    v_ = v_on_device_.units;
  } else {
    m_ = model::allocate_like(params, "adamw.m");
    v_ = model::allocate_like(params, "adamw.v");
  }
}

void AdamW::step(std::vector<model::ParamUnit<float>>& params, const std::vector<model::ParamUnit<float>>& grads,
                 double lr, double grad_scale, const std::function<void(int)>& updated) {
  ++steps_;
  const double b1 = options_.beta1, b2 = options_.beta2;
  // torch.optim.AdamW (single-tensor path): step_size = lr / (1 - b1^t); denom = sqrt(v) / sqrt(1 - b2^t) + eps.
  AdamWCoefficients c{};
  c.step_size = float(lr / (1.0 - std::pow(b1, double(steps_))));
  c.bias2_sqrt = float(std::sqrt(1.0 - std::pow(b2, double(steps_))));
  c.beta1 = float(b1);
  c.beta2 = float(b2);
  c.eps = float(options_.eps);
  c.clip = float(grad_scale);
  const float keep_decayed = float(1.0 - lr * options_.weight_decay);
  std::vector<AdamWRange> device_parts;  // on a device: every unit's parts, for one launch
  for (std::size_t u = 0; u < params.size(); ++u) {
    LLMTRAIN_CHECK(params[u].begin == m_[u].begin && params[u].flat.size() == m_[u].flat.size() &&
                       grads[u].begin == m_[u].begin && grads[u].flat.size() == m_[u].flat.size(),
                   "AdamW: unit ", params[u].layout.name, " changed its range since construction");
    const std::int64_t begin = m_[u].begin, end = m_[u].end();
    for (const auto& t : params[u].layout.tensors) {
      // The part of tensor t inside this rank's range, as offsets into the range's buffers.
      const std::int64_t first = std::max(t.offset, begin), last = std::min(t.offset + t.size(), end);
      if (first >= last) continue;
      const bool decay = options_.decay_norms_and_embeddings || !t.is_norm_or_embedding;
      c.keep = float(1.0 - lr * (decay ? options_.weight_decay : 0.0));
      float* p = params[u].flat.data() + (first - begin);
      const float* g = grads[u].flat.data() + (first - begin);
      float* m = m_[u].flat.data() + (first - begin);
      float* v = v_[u].flat.data() + (first - begin);
      if (device_) {
        device_parts.push_back({p, g, m, v, last - first, decay});
      } else if (kHostKernels) {
        isa::adamw_kernel().update(p, g, m, v, last - first, c);
      } else {
        Kokkos::parallel_for("adamw", Range(0, last - first),
                             KOKKOS_LAMBDA(std::int64_t i) { adamw_element(p, g, m, v, i, c); });
      }
    }
    if (updated && !device_) {
      Kokkos::fence();  // the callee may hand the range to a transport on another stream
      updated(int(u));
    }
  }
  if (!device_) return;
  // c.keep for the decayed parts; the launch gives the others 1, as the loop above computes for them.
  c.keep = keep_decayed;
  device::adamw_update(device_parts, c);
  if (!updated) return;
  device_->synchronize();  // the callee may hand the ranges to a transport on another stream
  for (std::size_t u = 0; u < params.size(); ++u) updated(int(u));
}

}  // namespace llmtrain::optim
