// Whole units in this process (see local_units.hpp).
#include "llmtrain/model/local_units.hpp"

#include "llmtrain/model/init.hpp"

namespace llmtrain::model {

template <typename T>
LocalUnits<T>::LocalUnits(const ModelConfig& config, Backend<T>* backend)
    : backend_(backend),
      params_(allocate_units<T>(unit_layouts(config), "param")),
      grads_(allocate_units<T>(unit_layouts(config), "grad")) {
  for (auto& unit : params_) {
    auto host = Kokkos::create_mirror_view(unit.flat);
    init_unit_range(config, unit.layout, 0, unit.layout.size(), host.data());
    Kokkos::deep_copy(unit.flat, host);
  }
  if (!backend_) return;
  // The same bits as on the host, then the host units go.
  params_in_backend_ = allocate_like(params_, *backend_, "param");
  grads_in_backend_ = allocate_like(grads_, *backend_, "grad");
  copy_from_host(*backend_, params_in_backend_.units, params_);
  backend_->synchronize();
  params_ = params_in_backend_.units;
  grads_ = grads_in_backend_.units;
}

template <typename T>
void LocalUnits<T>::zero_grads() {
  if (backend_) {
    for (auto& unit : grads_) backend_->fill(unit.flat.data(), T(0), std::int64_t(unit.flat.size()));
    return;
  }
  for (auto& unit : grads_) Kokkos::deep_copy(unit.flat, T(0));
}

template class LocalUnits<float>;
template class LocalUnits<double>;

}  // namespace llmtrain::model
