#pragma once
/// libtorch's data transforms (torch::data::transforms), applied to a dataset's batches through
/// Dataset::map: a BatchTransform maps a whole batch; a Transform maps each example of a batch;
/// a TensorTransform maps each example's data tensor (Normalize); a Collation turns a batch of
/// examples into one (Stack: the data and the targets each stacked along a new dim 0).
#include <functional>
#include <utility>
#include <vector>

#include "graft/data/example.h"
#include "graft/ops/ops.h"

namespace graft::data::transforms {

/// Maps a whole batch.
template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

/// Maps each example of a batch (a vector of them).
template <typename Input, typename Output = Input>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  virtual Output apply(Input input) = 0;
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> output;
    output.reserve(input_batch.size());
    for (auto& input : input_batch) output.push_back(apply(std::move(input)));
    return output;
  }
};

/// A batch transform given as a function.
template <typename Input, typename Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  explicit BatchLambda(std::function<Output(Input)> function) : function_(std::move(function)) {}
  Output apply_batch(Input input_batch) override { return function_(std::move(input_batch)); }

 private:
  std::function<Output(Input)> function_;
};

/// An example transform given as a function.
template <typename Input, typename Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  explicit Lambda(std::function<Output(Input)> function) : function_(std::move(function)) {}
  Output apply(Input input) override { return function_(std::move(input)); }

 private:
  std::function<Output(Input)> function_;
};

/// Maps the data tensor of each example, keeping its target.
template <typename Target = Tensor>
class TensorTransform : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  using E = Example<Tensor, Target>;
  virtual Tensor operator()(Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

/// A tensor transform given as a function.
template <typename Target = Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  explicit TensorLambda(std::function<Tensor(Tensor)> function) : function_(std::move(function)) {}
  Tensor operator()(Tensor input) override { return function_(std::move(input)); }

 private:
  std::function<Tensor(Tensor)> function_;
};

/// (data - mean) / stddev per channel (dim 0 of each example's data; one number for every
/// channel), as libtorch's Normalize.
template <typename Target = Tensor>
struct Normalize : public TensorTransform<Target> {
  Normalize(std::vector<double> mean_, std::vector<double> stddev_)
      : mean(tensor(mean_).to(kFloat32).unsqueeze(1).unsqueeze(2)),
        stddev(tensor(stddev_).to(kFloat32).unsqueeze(1).unsqueeze(2)) {}
  Normalize(double mean_, double stddev_) : Normalize(std::vector<double>{mean_}, std::vector<double>{stddev_}) {}
  Tensor operator()(Tensor input) override { return input.sub(mean).div(stddev); }
  Tensor mean, stddev;
};

/// A batch of examples collated into one.
template <typename BatchType>
using Collation = BatchTransform<BatchType, typename BatchType::value_type>;

/// Stacks the data (and the targets) of a batch of examples along a new dim 0.
template <typename E = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public Collation<std::vector<Example<>>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    std::vector<Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {stack(data), stack(targets)};
  }
};

template <>
struct Stack<TensorExample> : public Collation<std::vector<TensorExample>> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    std::vector<Tensor> data;
    data.reserve(examples.size());
    for (auto& e : examples) data.push_back(std::move(e.data));
    return TensorExample(stack(data));
  }
};

}  // namespace graft::data::transforms
