// SequentialSampler, RandomSampler, BatchSampler: one epoch of indices per call.
#include <limits>
#include <numeric>

#include "graft/core/error.h"
#include "graft/data/sampler.h"
#include "graft/ops/ops.h"

namespace graft::data {

namespace {
// Uniform in [0, n) without modulo bias (rejection), the same on every standard library.
uint64_t uniform_below(std::mt19937_64& g, uint64_t n) {
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n: draws below it would bias the result
  for (;;) {
    const uint64_t r = g();
    if (r >= threshold) return r % n;
  }
}

// Fisher-Yates shuffle of 0..n-1.
std::vector<int64_t> permutation(std::mt19937_64& g, int64_t n) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), int64_t{0});
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(uniform_below(g, static_cast<uint64_t>(i) + 1));
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(j)]);
  }
  return p;
}

// A seed drawn from graft's default generator (what PyTorch's RandomSampler does without a
// generator), so graft::manual_seed makes unseeded shuffles reproducible.
uint64_t seed_from_default_generator() {
  return static_cast<uint64_t>(
      randint(0, std::numeric_limits<int64_t>::max(), {}, TensorOptions(kInt64).device(kCPU)).item<int64_t>());
}
}  // namespace

SequentialSampler::SequentialSampler(int64_t size) : size_(size) {
  GRAFT_CHECK(size >= 0, ValueError, "SequentialSampler: size must be non-negative, but got size=", size);
}

std::vector<int64_t> SequentialSampler::next_epoch() {
  std::vector<int64_t> indices(static_cast<size_t>(size_));
  std::iota(indices.begin(), indices.end(), int64_t{0});
  return indices;
}

RandomSampler::RandomSampler(int64_t data_size, bool replacement, std::optional<int64_t> num_samples,
                             std::optional<uint64_t> seed)
    : data_size_(data_size), replacement_(replacement), num_samples_(num_samples.value_or(data_size)) {
  GRAFT_CHECK(data_size >= 0, ValueError,
              "RandomSampler: data_size must be non-negative, but got data_size=", data_size);
  GRAFT_CHECK(num_samples_ > 0, ValueError,
              "num_samples should be a positive integer value, but got num_samples=", num_samples_);
  GRAFT_CHECK(data_size > 0, ValueError, "RandomSampler: cannot draw num_samples=", num_samples_,
              " from an empty data source");
  if (seed) generator_.emplace(*seed);
}

std::vector<int64_t> RandomSampler::next_epoch() {
  std::mt19937_64 unseeded;
  if (!generator_) unseeded.seed(seed_from_default_generator());
  std::mt19937_64& g = generator_ ? *generator_ : unseeded;
  std::vector<int64_t> indices;
  indices.reserve(static_cast<size_t>(num_samples_));
  if (replacement_) {
    for (int64_t i = 0; i < num_samples_; ++i)
      indices.push_back(static_cast<int64_t>(uniform_below(g, static_cast<uint64_t>(data_size_))));
    return indices;
  }
  // Whole permutations, then the start of one more (PyTorch 2.x for num_samples > data_size).
  while (static_cast<int64_t>(indices.size()) < num_samples_) {
    const std::vector<int64_t> p = permutation(g, data_size_);
    const auto take = std::min<int64_t>(data_size_, num_samples_ - static_cast<int64_t>(indices.size()));
    indices.insert(indices.end(), p.begin(), p.begin() + take);
  }
  return indices;
}

BatchSampler::BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  GRAFT_CHECK(batch_size > 0, ValueError,
              "batch_size should be a positive integer value, but got batch_size=", batch_size);
  GRAFT_CHECK(sampler_ != nullptr, ValueError, "BatchSampler: sampler is null");
}

std::vector<std::vector<int64_t>> BatchSampler::next_epoch() {
  const std::vector<int64_t> indices = sampler_->next_epoch();
  std::vector<std::vector<int64_t>> batches;
  batches.reserve(indices.size() / static_cast<size_t>(batch_size_) + 1);
  for (size_t start = 0; start < indices.size(); start += static_cast<size_t>(batch_size_)) {
    const size_t stop = std::min(indices.size(), start + static_cast<size_t>(batch_size_));
    if (drop_last_ && stop - start < static_cast<size_t>(batch_size_)) break;
    batches.emplace_back(indices.begin() + static_cast<std::ptrdiff_t>(start),
                         indices.begin() + static_cast<std::ptrdiff_t>(stop));
  }
  return batches;
}

int64_t BatchSampler::size() const {
  const int64_t n = sampler_->size();
  return n / batch_size_ + (!drop_last_ && n % batch_size_ != 0 ? 1 : 0);
}

}  // namespace graft::data
