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

std::int64_t UnitLayout::fused(const std::vector<std::string>& parts) const {
  LLMTRAIN_CHECK(!parts.empty(), "unit '", name, "': a fused matrix of no tensors");
  const TensorSlice& first = tensor(parts.front());
  std::int64_t end = first.offset + first.size();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const TensorSlice& part = tensor(parts[i]);
    LLMTRAIN_CHECK(part.offset == end && part.shape.size() == 2 && first.shape.size() == 2 &&
                       part.shape[1] == first.shape[1],
                   "unit '", name, "': '", parts[i], "' does not continue '", parts[i - 1],
                   "' as rows of one fused matrix (it starts at offset ", part.offset, " with rows of ",
                   part.shape.back(), "; the part before ends at ", end, " with rows of ", first.shape.back(), ")");
    end = part.offset + part.size();
  }
  return first.offset;
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

template <typename T>
std::vector<ParamUnit<T>> allocate_like(const std::vector<ParamUnit<T>>& shapes, const std::string& label) {
  std::vector<ParamUnit<T>> units;
  for (const auto& shape : shapes)
    units.push_back(ParamUnit<T>{shape.layout, Kokkos::View<T*>(label + "." + shape.layout.name, shape.flat.size()),
                                 shape.begin});
  return units;
}

double sum_of_squares(const std::vector<ParamUnit<float>>& units) {
  // Each parallel index sums one block with 8 independent accumulators: a single running sum would be a
  // serial chain of dependent additions, several times slower than the memory it reads.
  using Range = Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<std::int64_t>>;
  constexpr std::int64_t kBlock = 4096;
  constexpr int kLanes = 8;
  double total = 0;
  for (const auto& unit : units) {
    const float* g = unit.flat.data();
    const std::int64_t n = std::int64_t(unit.flat.size());
    double sum = 0;
    Kokkos::parallel_reduce("sum_of_squares", Range(0, (n + kBlock - 1) / kBlock), KOKKOS_LAMBDA(std::int64_t b, double& acc) {
      const std::int64_t begin = b * kBlock, end = begin + kBlock < n ? begin + kBlock : n;
      double lane[kLanes] = {};
      std::int64_t i = begin;
      for (; i + kLanes <= end; i += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] += double(g[i + l]) * double(g[i + l]);
      for (; i < end; ++i) lane[0] += double(g[i]) * double(g[i]);
      for (int l = 0; l < kLanes; ++l) acc += lane[l];
    }, sum);
    total += sum;
  }
  return total;
}

template std::vector<ParamUnit<float>> allocate_like<float>(const std::vector<ParamUnit<float>>&, const std::string&);
template std::vector<ParamUnit<double>> allocate_like<double>(const std::vector<ParamUnit<double>>&, const std::string&);
template std::vector<ParamUnit<float>> allocate_units<float>(const std::vector<UnitLayout>&, const std::string&);
template std::vector<ParamUnit<double>> allocate_units<double>(const std::vector<UnitLayout>&, const std::string&);

}  // namespace llmtrain::model
