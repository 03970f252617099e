#pragma once
/// libtorch's dataset templates (torch::data::datasets): a BatchDataset answers a batch request
/// (a list of indices) with a batch; a Dataset<Self, Example> answers one index with one example
/// and builds its batches as vectors of them; map(transform) wraps a dataset in a MapDataset.
/// Derive from Dataset<Self> as a libtorch program does (`struct MyData : Dataset<MyData> {
/// Example<> get(size_t) override; std::optional<size_t> size() const override; }`).
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "graft/data/example.h"

namespace graft::data::datasets {

template <typename Source, typename Transform>
class MapDataset;

/// A dataset of batches: get_batch(request) and its size (nullopt: unknown).
template <typename Self, typename Batch = std::vector<Example<>>, typename BatchRequest = std::span<const size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  virtual ~BatchDataset() = default;
  /// The batch of the requested indices.
  virtual Batch get_batch(BatchRequest request) = 0;
  /// How many samples there are, when known.
  virtual std::optional<size_t> size() const = 0;
  /// This dataset with `transform` applied to each of its batches (a copy of it, or it moved).
  template <typename Transform>
  MapDataset<Self, Transform> map(Transform transform) & {
    return MapDataset<Self, Transform>(static_cast<Self&>(*this), std::move(transform));
  }
  template <typename Transform>
  MapDataset<Self, Transform> map(Transform transform) && {
    return MapDataset<Self, Transform>(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

/// A dataset of single examples: get(index); its batches are the vectors of their examples.
template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;
  /// The example at `index`.
  virtual ExampleType get(size_t index) = 0;
  std::vector<ExampleType> get_batch(std::span<const size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

/// A source dataset whose batches go through a transform's apply_batch.
template <typename Source, typename Transform>
class MapDataset : public BatchDataset<MapDataset<Source, Transform>, typename Transform::OutputBatchType,
                                       typename Source::BatchRequestType> {
 public:
  using DatasetType = Source;
  using TransformType = Transform;
  using BatchRequestType = typename Source::BatchRequestType;
  using OutputBatchType = typename Transform::OutputBatchType;
  MapDataset(Source dataset, Transform transform) : dataset_(std::move(dataset)), transform_(std::move(transform)) {}
  OutputBatchType get_batch(BatchRequestType request) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(request)));
  }
  std::optional<size_t> size() const override { return dataset_.size(); }
  const Source& dataset() const { return dataset_; }
  const Transform& transform() const { return transform_; }

 private:
  Source dataset_;
  Transform transform_;
};

}  // namespace graft::data::datasets
