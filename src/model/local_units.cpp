// Whole units in this process (see local_units.hpp).
#include "llmtrain/model/local_units.hpp"

#include <cmath>
#include <random>

namespace llmtrain::model {

template <typename T>
LocalUnits<T>::LocalUnits(const ModelConfig& config)
    : params_(allocate_units<T>(unit_layouts(config), "param")), grads_(allocate_units<T>(unit_layouts(config), "grad")) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(config.seed));
  for (auto& unit : params_) {
    auto host = Kokkos::create_mirror_view(unit.flat);
    for (const auto& t : unit.layout.tensors) {
      const bool is_norm = t.shape.size() == 1;
      const bool is_output_projection = t.name == "wo" || t.name == "w2";
      const double std = config.init_std / (is_output_projection ? std::sqrt(2.0 * double(config.n_layers)) : 1.0);
      std::normal_distribution<double> normal(0.0, std);
      for (std::int64_t i = 0; i < t.size(); ++i) host(t.offset + i) = is_norm ? T(1) : T(normal(rng));
    }
    Kokkos::deep_copy(unit.flat, host);
  }
}

template <typename T>
void LocalUnits<T>::zero_grads() {
  for (auto& unit : grads_) Kokkos::deep_copy(unit.flat, T(0));
}

template class LocalUnits<float>;
template class LocalUnits<double>;

}  // namespace llmtrain::model
