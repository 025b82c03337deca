// AdamW update as Kokkos kernels, one launch per tensor part in this rank's range (decay is per tensor).
#include "llmtrain/optim/adamw.hpp"

#include <algorithm>
#include <cmath>

#include "llmtrain/core/error.hpp"

namespace llmtrain::optim {

using Range = Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<std::int64_t>>;

AdamW::AdamW(const std::vector<model::ParamUnit<float>>& params, const AdamWOptions& options)
    : options_(options), m_(model::allocate_like(params, "adamw.m")), v_(model::allocate_like(params, "adamw.v")) {}

void AdamW::step(std::vector<model::ParamUnit<float>>& params, const std::vector<model::ParamUnit<float>>& grads,
                 double lr, double grad_scale) {
  ++steps_;
  const double b1 = options_.beta1, b2 = options_.beta2;
  // torch.optim.AdamW (single-tensor path): step_size = lr / (1 - b1^t); denom = sqrt(v) / sqrt(1 - b2^t) + eps.
  const float step_size = float(lr / (1.0 - std::pow(b1, double(steps_))));
  const float bias2_sqrt = float(std::sqrt(1.0 - std::pow(b2, double(steps_))));
  const float beta1 = float(b1), beta2 = float(b2), eps = float(options_.eps), clip = float(grad_scale);
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
      const float keep = float(1.0 - lr * (decay ? options_.weight_decay : 0.0));
      float* p = params[u].flat.data() + (first - begin);
      const float* g = grads[u].flat.data() + (first - begin);
      float* m = m_[u].flat.data() + (first - begin);
      float* v = v_[u].flat.data() + (first - begin);
      Kokkos::parallel_for("adamw", Range(0, last - first), KOKKOS_LAMBDA(std::int64_t i) {
        const float gi = g[i] * clip;
        p[i] *= keep;
        m[i] += (gi - m[i]) * (1.0f - beta1);
        v[i] = v[i] * beta2 + gi * gi * (1.0f - beta2);
        p[i] -= step_size * m[i] / (std::sqrt(v[i]) / bias2_sqrt + eps);
      });
    }
  }
}

}  // namespace llmtrain::optim
