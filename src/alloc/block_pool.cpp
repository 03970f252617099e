// BlockPool: best-fit search over free blocks (binned small pool, ordered large pool).
#include "block_pool.h"

#include <algorithm>

namespace graft::alloc {

BlockPool::BlockPool(bool small) : is_small(small) {
  if (small) bins_.resize(kNumBins);
}

void BlockPool::sift_up(std::vector<Block*>& h, uint32_t i) {
  while (i > 0) {
    const uint32_t parent = (i - 1) / 2;
    if (h[parent]->ptr <= h[i]->ptr) break;
    std::swap(h[parent], h[i]);
    h[parent]->heap_index = parent;
    h[i]->heap_index = i;
    i = parent;
  }
}

void BlockPool::sift_down(std::vector<Block*>& h, uint32_t i) {
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

void BlockPool::insert(Block* b) {
  b->gc_count_base = get_free_blocks_call_count;
  ++count_;
  if (!is_small) {
    tree_.insert(b);
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

void BlockPool::erase(Block* b) {
  --count_;
  if (!is_small) {
    tree_.erase(b);
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

size_t BlockPool::first_bin_from(size_t bin) const {
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

Block* BlockPool::lower_bound(size_t size) const {
  if (!is_small) {
    auto it = tree_.lower_bound(size);
    return it == tree_.end() ? nullptr : *it;
  }
  const size_t bin = first_bin_from((size + kMinBlockSize - 1) / kMinBlockSize);
  return bin < kNumBins ? bins_[bin][0] : nullptr;
}

std::vector<Block*> BlockPool::blocks() const {
  std::vector<Block*> out;
  out.reserve(count_);
  if (!is_small) {
    out.assign(tree_.begin(), tree_.end());
    return out;
  }
  for (size_t bin = first_bin_from(0); bin < kNumBins; bin = first_bin_from(bin + 1)) {
    const size_t first = out.size();
    out.insert(out.end(), bins_[bin].begin(), bins_[bin].end());
    std::sort(out.begin() + static_cast<ptrdiff_t>(first), out.end(),
              [](const Block* a, const Block* b) { return a->ptr < b->ptr; });
  }
  return out;
}

}  // namespace graft::alloc
