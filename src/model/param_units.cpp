// Unit layouts: which tensors each unit holds, in which order, at which offsets.
#include "llmtrain/model/param_units.hpp"

#include "llmtrain/core/error.hpp"

namespace llmtrain::model {
namespace {

void add(UnitLayout& unit, const std::string& name, std::vector<std::int64_t> shape, bool norm_or_embedding) {
  const std::int64_t offset = unit.size();
  unit.tensors.push_back(TensorSlice{name, offset, std::move(shape), norm_or_embedding});
}

}  // namespace

const TensorSlice& UnitLayout::tensor(const std::string& tensor_name) const {
  for (const auto& t : tensors) {
    if (t.name == tensor_name) return t;
  }
  LLMTRAIN_FAIL("unit '", name, "' has no tensor '", tensor_name, "'");
}

std::vector<UnitLayout> unit_layouts(const ModelConfig& c) {
  std::vector<UnitLayout> units;
  UnitLayout embedding{"embedding", {}};
  add(embedding, "tok_embedding", {c.vocab_size, c.d_model}, true);
  units.push_back(embedding);
  const std::int64_t hd = c.head_dim();
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    UnitLayout block{"block." + std::to_string(l), {}};
    add(block, "attn_norm", {c.d_model}, true);
    add(block, "wq", {c.n_heads * hd, c.d_model}, false);  // wq, wk, wv adjacent: one fused QKV matrix
    add(block, "wk", {c.n_kv_heads * hd, c.d_model}, false);
    add(block, "wv", {c.n_kv_heads * hd, c.d_model}, false);
    add(block, "wo", {c.d_model, c.n_heads * hd}, false);
    add(block, "ffn_norm", {c.d_model}, true);
    add(block, "w1", {c.d_ff, c.d_model}, false);  // w1 (gate), w3 (up) adjacent: one fused matrix
    add(block, "w3", {c.d_ff, c.d_model}, false);
    add(block, "w2", {c.d_model, c.d_ff}, false);
    units.push_back(block);
  }
  UnitLayout head{"head", {}};
  add(head, "final_norm", {c.d_model}, true);
  if (!c.tie_embeddings) add(head, "output", {c.vocab_size, c.d_model}, false);
  units.push_back(head);
  return units;
}

template <typename T>
std::vector<ParamUnit<T>> allocate_units(const std::vector<UnitLayout>& layouts, const std::string& label) {
  std::vector<ParamUnit<T>> units;
  for (const auto& layout : layouts) {
    units.push_back(ParamUnit<T>{layout, Kokkos::View<T*>(label + "." + layout.name, layout.size())});
  }
  return units;
}

template std::vector<ParamUnit<float>> allocate_units<float>(const std::vector<UnitLayout>&, const std::string&);
template std::vector<ParamUnit<double>> allocate_units<double>(const std::vector<UnitLayout>&, const std::string&);

}  // namespace llmtrain::model
