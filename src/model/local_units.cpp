// Whole units in this process (see local_units.hpp).
#include "llmtrain/model/local_units.hpp"

#include "llmtrain/model/init.hpp"

namespace llmtrain::model {

template <typename T>
LocalUnits<T>::LocalUnits(const ModelConfig& config)
    : params_(allocate_units<T>(unit_layouts(config), "param")), grads_(allocate_units<T>(unit_layouts(config), "grad")) {
  for (auto& unit : params_) {
    auto host = Kokkos::create_mirror_view(unit.flat);
    init_unit_range(config, unit.layout, 0, unit.layout.size(), host.data());
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
