#pragma once
/// libtorch's samplers (torch::data::samplers): what a libtorch-style data loader asks for the
/// next batch's indices. reset(new_size) starts an epoch; next(batch_size) gives up to
/// batch_size indices, nullopt when the epoch is over. (graft's own DataLoader takes the
/// Sampler classes of graft/data/sampler.h.)
#include <cstddef>
#include <optional>
#include <vector>

#include "graft/core/generator.h"

namespace graft::data::samplers {

/// The base of a libtorch-style sampler.
template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;
  virtual ~Sampler() = default;
  /// Starts a new epoch (over new_size samples when given).
  virtual void reset(std::optional<size_t> new_size) = 0;
  /// The next batch's indices, nullopt when the epoch is over.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
};

/// 0, 1, ..., size - 1 in order.
class SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  size_t size_, index_ = 0;
};

/// A new random permutation of 0 .. size - 1 every epoch, from graft's default generator (so
/// graft::manual_seed makes the order reproducible).
class RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(int64_t size);
  void reset(std::optional<size_t> new_size = std::nullopt) override;
  std::optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  std::vector<size_t> order_;
  size_t index_ = 0;
};

}  // namespace graft::data::samplers
