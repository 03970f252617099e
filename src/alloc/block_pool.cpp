// BlockPool: best-fit search over free blocks (binned small pool, ordered large pool).
#include "block_pool.h"

#include <algorithm>

namespace graft::alloc {

BlockPool::BlockPool(bool small) : is_small(small) {
  if (small)
    bins_.resize(kNumBins);
  else
    spare_nodes_.reserve(kSpareNodes);
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
