#pragma once
/// libtorch's data::Example: one sample of a libtorch-style dataset, its data and its target
/// (Example<Tensor, NoTarget>, a TensorExample, has data alone).
#include "graft/core/tensor.h"

namespace graft::data {

namespace example {
/// The target type of an example without a target.
using NoTarget = void;
}  // namespace example

/// A sample's data and target (libtorch's torch::data::Example).
template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Example() = default;
  Example(Data data_, Target target_) : data(std::move(data_)), target(std::move(target_)) {}
  Data data;
  Target target;
};

/// An example of data alone.
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;
  Example() = default;
  Example(Data data_) : data(std::move(data_)) {}  // NOLINT: implicit, as libtorch's
  operator Data&() { return data; }                // NOLINT
  operator const Data&() const { return data; }    // NOLINT
  Data data;
};
using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace graft::data
