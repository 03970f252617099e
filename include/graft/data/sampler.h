#pragma once
/// Samplers: the order in which a DataLoader visits dataset indices (PyTorch's
/// torch.utils.data samplers). A sampler yields one whole epoch of indices per call; calling
/// it again starts the next epoch (a RandomSampler reshuffles).
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

namespace graft::data {

/// Yields the dataset indices of one epoch at a time. Subclass it for a custom order and pass
/// it as LoaderOptions::sampler.
class Sampler {
 public:
  virtual ~Sampler() = default;
  /// The indices of the next epoch; every call starts a new epoch.
  virtual std::vector<int64_t> next_epoch() = 0;
  /// How many indices one epoch yields (PyTorch's len(sampler)).
  virtual int64_t size() const = 0;
};

/// 0, 1, ..., size-1 every epoch.
class SequentialSampler : public Sampler {
 public:
  /// ValueError for a negative size.
  explicit SequentialSampler(int64_t size);
  std::vector<int64_t> next_epoch() override;
  int64_t size() const override { return size_; }

 private:
  int64_t size_;
};

/// Random indices into a data source of `data_size` samples (PyTorch's RandomSampler).
/// Without replacement an epoch is a random permutation (num_samples larger than data_size
/// gives whole permutations followed by the start of another, as PyTorch 2.x); with
/// replacement, num_samples independent uniform draws. num_samples defaults to data_size.
///
/// Seeding: with `seed`, the sampler owns a generator seeded once, so the same seed gives the
/// same sequence of epochs, each epoch a new order. Without it, every epoch draws a fresh seed
/// from graft's default generator (as PyTorch does), so graft::manual_seed makes it
/// reproducible.
class RandomSampler : public Sampler {
 public:
  /// ValueError "num_samples should be a positive integer value, but got num_samples=0" when
  /// num_samples (or data_size, its default) is not positive, as PyTorch; ValueError when
  /// data_size is negative, or zero with num_samples given.
  explicit RandomSampler(int64_t data_size, bool replacement = false, std::optional<int64_t> num_samples = std::nullopt,
                         std::optional<uint64_t> seed = std::nullopt);
  std::vector<int64_t> next_epoch() override;
  /// num_samples.
  int64_t size() const override { return num_samples_; }
  bool replacement() const { return replacement_; }

 private:
  int64_t data_size_;
  bool replacement_;
  int64_t num_samples_;
  std::optional<std::mt19937_64> generator_;  // set when seeded; else the default generator seeds each epoch
};

/// Yields one epoch of index batches at a time. Subclass it for custom batching and pass it
/// as LoaderOptions::batch_sampler.
class BatchSamplerBase {
 public:
  virtual ~BatchSamplerBase() = default;
  /// The index batches of the next epoch; every call starts a new epoch.
  virtual std::vector<std::vector<int64_t>> next_epoch() = 0;
  /// How many batches one epoch yields (what DataLoader::size() reports).
  virtual int64_t size() const = 0;
};

/// Groups a sampler's indices into batches of batch_size, in order; the last batch is
/// smaller unless drop_last drops it (PyTorch's BatchSampler).
class BatchSampler : public BatchSamplerBase {
 public:
  /// ValueError "batch_size should be a positive integer value, but got batch_size=0" as
  /// PyTorch; ValueError for a null sampler.
  BatchSampler(std::shared_ptr<Sampler> sampler, int64_t batch_size, bool drop_last);
  std::vector<std::vector<int64_t>> next_epoch() override;
  /// ceil(len(sampler) / batch_size), or floor with drop_last.
  int64_t size() const override;
  const std::shared_ptr<Sampler>& sampler() const { return sampler_; }
  int64_t batch_size() const { return batch_size_; }
  bool drop_last() const { return drop_last_; }

 private:
  std::shared_ptr<Sampler> sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

}  // namespace graft::data
