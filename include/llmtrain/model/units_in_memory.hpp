// Unit buffers in a backend's memory (buffer.hpp), a CUDA device's on a run on devices: the parameters,
// gradients and AdamW moments of the replicated store and the optimizer there.
//
// Each ParamUnit's flat view wraps the pointer of a Buffer held beside it (an unmanaged Kokkos view): the
// ranges, layouts and pointers the optimizer and the model walk stay those of host units, but the host never
// reads the elements. Whatever must see them on the host (a checkpoint) copies them through the memory's
// copies (copy_to_host / copy_from_host below).
#pragma once

#include <string>
#include <vector>

#include "llmtrain/model/buffer.hpp"
#include "llmtrain/model/param_units.hpp"

namespace llmtrain::model {

template <typename T>
struct UnitsInMemory {
  std::vector<ParamUnit<T>> units;  // flat: views of buffers[u]
  std::vector<Buffer<T>> buffers;   // own the memory
};

// Zeroed buffers in `memory` shaped like `shapes` (same layouts and ranges).
template <typename T>
UnitsInMemory<T> allocate_like(const std::vector<ParamUnit<T>>& shapes, Memory& memory, const std::string& label) {
  UnitsInMemory<T> out;
  for (const auto& shape : shapes) {
    out.buffers.emplace_back(memory, std::int64_t(shape.flat.size()), label.c_str());
    out.units.push_back(ParamUnit<T>{shape.layout, Kokkos::View<T*>(out.buffers.back().data(), shape.flat.size()),
                                     shape.begin});
  }
  return out;
}

// Every unit of `from` into the same-shaped `to`: host units into a memory's, or a memory's into host units.
template <typename T>
void copy_from_host(Memory& memory, std::vector<ParamUnit<T>>& to, const std::vector<ParamUnit<T>>& from) {
  LLMTRAIN_CHECK(to.size() == from.size(), "copy of ", from.size(), " units into ", to.size());
  for (std::size_t u = 0; u < to.size(); ++u) {
    LLMTRAIN_CHECK(to[u].flat.size() == from[u].flat.size(), "copy of unit ", from[u].layout.name, ": ",
                   from[u].flat.size(), " elements into ", to[u].flat.size());
    memory.copy_from_host(to[u].flat.data(), from[u].flat.data(), std::int64_t(sizeof(T) * to[u].flat.size()));
  }
}
template <typename T>
void copy_to_host(Memory& memory, std::vector<ParamUnit<T>>& to, const std::vector<ParamUnit<T>>& from) {
  LLMTRAIN_CHECK(to.size() == from.size(), "copy of ", from.size(), " units into ", to.size());
  for (std::size_t u = 0; u < to.size(); ++u) {
    LLMTRAIN_CHECK(to[u].flat.size() == from[u].flat.size(), "copy of unit ", from[u].layout.name, ": ",
                   from[u].flat.size(), " elements into ", to[u].flat.size());
    memory.copy_to_host(to[u].flat.data(), from[u].flat.data(), std::int64_t(sizeof(T) * to[u].flat.size()));
  }
}

}  // namespace llmtrain::model
