#pragma once
/// libtorch's torch::indexing: the items of Tensor::index and Tensor::index_put_, Python's
/// `x[...]` written in C++ (`x.index({Slice(), 0})` is `x[:, 0]`, `x.index({"..."})` is not:
/// use Ellipsis; `x.index_put_({0, Slice(None, 2)}, 1.0)` is `x[0, :2] = 1.0`).
#include <cstdint>
#include <optional>
#include <type_traits>

#include "graft/core/tensor.h"

namespace graft::indexing {

/// A new dim of size 1 (Python's None); also the "not given" of a Slice bound, as libtorch's.
inline constexpr std::nullopt_t None = std::nullopt;
struct EllipsisIndexType {};
/// The dims an index does not name (Python's ...).
inline constexpr EllipsisIndexType Ellipsis{};

/// start:stop:step, each optional as in Python (a negative bound counts from the end; bounds
/// are clamped to the dim; the step must be positive).
struct Slice {
  Slice(std::optional<int64_t> start_ = std::nullopt, std::optional<int64_t> stop_ = std::nullopt,
        std::optional<int64_t> step_ = std::nullopt)
      : start(start_), stop(stop_), step(step_) {}
  std::optional<int64_t> start, stop, step;
};

/// One item of an index: None, Ellipsis, an integer (selects), a bool, a Slice or a tensor
/// (integer indices or a mask: advanced indexing, as PyTorch's).
class TensorIndex {
 public:
  enum class Kind { None, Ellipsis, Integer, Boolean, Slice, Tensor };
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}                  // NOLINT: implicit, as libtorch
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}           // NOLINT
  TensorIndex(bool b) : kind_(Kind::Boolean), integer_(b ? 1 : 0) {}  // NOLINT
  template <class Integer>
  requires(std::is_integral_v<Integer> && !std::is_same_v<Integer, bool>) TensorIndex(Integer i)  // NOLINT
      : kind_(Kind::Integer), integer_(static_cast<int64_t>(i)) {}
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}                // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT
  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return integer_ != 0; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace graft::indexing
