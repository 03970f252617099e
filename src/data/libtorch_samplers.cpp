// libtorch's SequentialSampler and RandomSampler (graft/data/samplers.h).
#include <algorithm>

#include "graft/data/samplers.h"
#include "graft/ops/ops.h"

namespace graft::data::samplers {

namespace {
// The next up to batch_size entries of `order` from `index` (advanced), nullopt at the end.
std::optional<std::vector<size_t>> take(const std::vector<size_t>* order, size_t size, size_t& index,
                                        size_t batch_size) {
  if (index >= size) return std::nullopt;
  const size_t n = std::min(batch_size, size - index);
  std::vector<size_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = order ? (*order)[index + i] : index + i;
  index += n;
  return out;
}
}  // namespace

void SequentialSampler::reset(std::optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}
std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  return take(nullptr, size_, index_, batch_size);
}

RandomSampler::RandomSampler(int64_t size) { reset(static_cast<size_t>(size)); }
void RandomSampler::reset(std::optional<size_t> new_size) {
  const int64_t n = static_cast<int64_t>(new_size ? *new_size : order_.size());
  Tensor permutation = randperm(n);
  const auto* p = static_cast<const int64_t*>(permutation.data_ptr());
  order_.assign(p, p + n);
  index_ = 0;
}
std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  return take(&order_, order_.size(), index_, batch_size);
}

}  // namespace graft::data::samplers
