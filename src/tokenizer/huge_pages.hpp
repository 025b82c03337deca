// An allocator for the tokenizer's large lookup tables (the merge table, the vocabulary, the pre-token cache:
// megabytes each, probed at random) that asks Linux for transparent huge pages. With 4 KB pages most of
// those probes also miss the TLB (Llama-3's 16 MB merge table alone is 4,096 pages, all of Zen 5's L2 TLB),
// so each cache miss costs a page walk on top. The advice is only that: without huge pages (THP disabled,
// another OS) the tables work the same.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#include <sys/mman.h>

namespace llmtrain::tokenizer {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return std::allocator<T>().allocate(n);
    void* p = std::aligned_alloc(kHugePage, rounded(bytes));
    if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, rounded(bytes), MADV_HUGEPAGE);
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < kHugePage) std::allocator<T>().deallocate(p, n);
    else std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }

 private:
  static std::size_t rounded(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
};

// A vector of a large table.
template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace llmtrain::tokenizer
