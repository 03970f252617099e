#pragma once
/// Datasets: where a DataLoader takes its samples from (PyTorch's torch.utils.data.Dataset,
/// map-style). A Sample is one sample's fields as tensors (input, target, ...). (libtorch's
/// templated datasets, with their Example<Data, Target>, are in graft/data/datasets/.)
#include <cstdint>
#include <vector>

#include "graft/core/tensor.h"

namespace graft::data {

/// The fields of one sample, in a fixed order (e.g. {input, target}).
using Sample = std::vector<Tensor>;
/// One collated batch: one tensor per field, the samples stacked along dim 0.
using Batch = std::vector<Tensor>;

/// A map-style dataset: size() samples, each fetched by index with get().
/// get() must be safe to call from several threads at once: a DataLoader with
/// num_workers > 0 calls it from its worker threads concurrently, on the same object.
/// A const get() that only reads members (as TensorDataset's) is safe.
class Dataset {
 public:
  virtual ~Dataset() = default;
  /// The sample at `index`, 0 <= index < size(). Thread-safe (see above).
  virtual Sample get(int64_t index) const = 0;
  /// How many samples there are.
  virtual int64_t size() const = 0;
};

/// Samples are rows of tensors that share their first dimension (PyTorch's TensorDataset):
/// get(i) returns {tensors[0][i], tensors[1][i], ...}, views of the given tensors.
class TensorDataset : public Dataset {
 public:
  /// ValueError "Size mismatch between tensors" when the first dimensions differ; ValueError
  /// for an empty list, an undefined tensor or a 0-d tensor.
  explicit TensorDataset(std::vector<Tensor> tensors);
  /// Row `index` of every tensor. A negative index counts from the end, as in Python;
  /// outside [-size(), size()) raises IndexError naming the index and the size.
  Sample get(int64_t index) const override;
  /// The shared first dimension.
  int64_t size() const override { return size_; }
  /// The tensors the samples are rows of.
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
  int64_t size_ = 0;
};

}  // namespace graft::data
