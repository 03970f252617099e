#pragma once
// Block headers, segments and the free-block pools of the caching allocator.
// See docs/memory.md ("How the pools are kept") for why the small pool is binned.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "graft/alloc/caching_allocator.h"

namespace graft::alloc {

/// A segment: one raw allocation, cut into blocks linked by prev/next in address order.
struct Segment {
  char* base = nullptr;
  size_t size = 0;
  BlockPool* pool = nullptr;
  CachingAllocator* owner = nullptr;
  Block* head = nullptr;  // the block at `base`
  Segment* prev = nullptr;
  Segment* next = nullptr;
};

/// The block header: one handed-out allocation or one free piece of a segment. DataPtr's
/// context points here. `category` and `saved_claims` may be written by the tensor's owner
/// without the allocator lock (relaxed atomics); everything else is under the lock.
struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  size_t requested_size = 0;
  Block* prev = nullptr;  // neighbours in the segment
  Block* next = nullptr;
  Segment* segment = nullptr;
  uint64_t gc_count_base = 0;  // pool's search count when the block was last freed
  uint32_t heap_index = 0;     // position in its small-pool bin
  bool allocated = false;
  std::atomic<uint8_t> category{0};
  std::atomic<uint32_t> saved_claims{0};
  uint32_t site = 0;                            // creation site and generation of the storage using it, while a
  uint32_t generation = 0;                      // doctor session counts (set by the doctor; lifetime.h)
  std::shared_ptr<const AllocContext> context;  // set only while history records

  bool is_split() const { return prev != nullptr || next != nullptr; }
  MemoryCategory effective_category() const {
    auto c = static_cast<MemoryCategory>(category.load(std::memory_order_relaxed));
    if (c == MemoryCategory::Other && saved_claims.load(std::memory_order_relaxed) > 0)
      return MemoryCategory::SavedForBackward;
    return c;
  }
};

/// Free blocks of one pool, searched best fit: the smallest block with size >= request,
/// lowest address among equals (PyTorch orders its set by (stream, size, address)).
/// Small pool: a bin per 512-byte size class up to the 2 MiB segment size, a two-level
/// bitmap of non-empty bins, and an address min-heap per bin -- O(1) search, no allocation.
/// Large pool: an ordered set.
class BlockPool {
 public:
  explicit BlockPool(bool small);
  const bool is_small;
  /// Searches made since start (for the garbage collector's block ages).
  uint64_t get_free_blocks_call_count = 0;

  void insert(Block* b);
  void erase(Block* b);
  /// The best fit for `size`, left in the pool; null if none.
  Block* lower_bound(size_t size) const;
  /// Every free block in (size, address) order.
  std::vector<Block*> blocks() const;
  size_t count() const { return count_; }

  struct Order {
    using is_transparent = void;
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
    bool operator()(const Block* a, size_t s) const { return a->size < s; }
    bool operator()(size_t s, const Block* b) const { return s < b->size; }
  };
  /// The large pool's set (release_available_cached_blocks walks it).
  std::set<Block*, Order>& tree() { return tree_; }

 private:
  static constexpr size_t kNumBins = kSmallBuffer / kMinBlockSize + 1;  // size / 512, 0..4096
  static constexpr size_t kWords = (kNumBins + 63) / 64;
  static constexpr size_t kSummaryWords = (kWords + 63) / 64;
  void sift_up(std::vector<Block*>& h, uint32_t i);
  void sift_down(std::vector<Block*>& h, uint32_t i);
  size_t first_bin_from(size_t bin) const;

  size_t count_ = 0;
  std::vector<std::vector<Block*>> bins_;
  // the large pool's set nodes are recycled: insert/erase then never call malloc
  static constexpr size_t kSpareNodes = 16;
  std::vector<std::set<Block*, Order>::node_type> spare_nodes_;
  uint64_t words_[kWords] = {};
  uint64_t summary_[kSummaryWords] = {};
  std::set<Block*, Order> tree_;
};

// The hot operations, inline: they run on every allocate and free.
inline void BlockPool::sift_up(std::vector<Block*>& h, uint32_t i) {
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (h[parent]->ptr <= h[i]->ptr) break;
    std::swap(h[parent], h[i]);
    h[parent]->heap_index = parent;
    h[i]->heap_index = i;
    i = parent;
  }
}

inline void BlockPool::sift_down(std::vector<Block*>& h, uint32_t i) {
  const auto n = static_cast<uint32_t>(h.size());
  for (;;) {
    uint32_t m = i;
    const uint32_t l = 2 * i + 1, r = 2 * i + 2;
    if (l < n && h[l]->ptr < h[m]->ptr) m = l;
    if (r < n && h[r]->ptr < h[m]->ptr) m = r;
    if (m == i) break;
    std::swap(h[m], h[i]);
    h[m]->heap_index = m;
    h[i]->heap_index = i;
    i = m;
  }
}

[[gnu::always_inline]] inline void BlockPool::insert(Block* b) {
  b->gc_count_base = get_free_blocks_call_count;
  ++count_;
  if (!is_small) {
    if (!spare_nodes_.empty()) {
      auto nh = std::move(spare_nodes_.back());
      spare_nodes_.pop_back();
      nh.value() = b;
      tree_.insert(std::move(nh));
    } else {
      tree_.insert(b);
    }
    return;
  }
  const size_t bin = b->size / kMinBlockSize;
  auto& h = bins_[bin];
  b->heap_index = static_cast<uint32_t>(h.size());
  h.push_back(b);
  sift_up(h, b->heap_index);
  if (h.size() == 1) {
    words_[bin / 64] |= uint64_t{1} << (bin % 64);
    summary_[bin / 4096] |= uint64_t{1} << ((bin / 64) % 64);
  }
}

[[gnu::always_inline]] inline void BlockPool::erase(Block* b) {
  --count_;
  if (!is_small) {
    auto nh = tree_.extract(b);
    if (spare_nodes_.size() < kSpareNodes) spare_nodes_.push_back(std::move(nh));  // capacity reserved
    return;
  }
  const size_t bin = b->size / kMinBlockSize;
  auto& h = bins_[bin];
  const uint32_t i = b->heap_index;
  Block* last = h.back();
  h.pop_back();
  if (i < h.size()) {
    h[i] = last;
    last->heap_index = i;
    sift_down(h, i);
    sift_up(h, last->heap_index);
  }
  if (h.empty()) {
    words_[bin / 64] &= ~(uint64_t{1} << (bin % 64));
    if (words_[bin / 64] == 0) summary_[bin / 4096] &= ~(uint64_t{1} << ((bin / 64) % 64));
  }
}

[[gnu::always_inline]] inline size_t BlockPool::first_bin_from(size_t bin) const {
  if (bin >= kNumBins) return kNumBins;
  size_t w = bin / 64;
  if (uint64_t m = words_[w] & (~uint64_t{0} << (bin % 64))) return w * 64 + static_cast<size_t>(__builtin_ctzll(m));
  ++w;  // the next non-empty word after w, from the summary
  for (size_t s = w / 64; s < kSummaryWords; ++s) {
    uint64_t m = summary_[s];
    if (s == w / 64) m &= ~uint64_t{0} << (w % 64);
    if (m) {
      const size_t ww = s * 64 + static_cast<size_t>(__builtin_ctzll(m));
      return ww * 64 + static_cast<size_t>(__builtin_ctzll(words_[ww]));
    }
  }
  return kNumBins;
}

[[gnu::always_inline]] inline Block* BlockPool::lower_bound(size_t size) const {
  if (!is_small) {
    auto it = tree_.lower_bound(size);
    return it == tree_.end() ? nullptr : *it;
  }
  const size_t bin = first_bin_from((size + kMinBlockSize - 1) / kMinBlockSize);
  return bin < kNumBins ? bins_[bin][0] : nullptr;
}

/// The allocator's lock: a test-and-test-and-set spin lock that yields after a while. An
/// uncontended acquire+release is one atomic exchange and one store, which matters at a
/// budget of 50 ns per allocate+free pair; hold times are short except around raw calls.
class SpinLock {
 public:
  void lock() noexcept {
    int spins = 0;
    while (flag_.exchange(true, std::memory_order_acquire)) {
      while (flag_.load(std::memory_order_relaxed)) {
        if (++spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() noexcept { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

}  // namespace graft::alloc
