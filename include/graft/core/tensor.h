#pragma once
/// Tensor: a reference-counted handle to a TensorImpl. Copying a Tensor shares the data
/// (like PyTorch); use clone() for a copy. Most methods forward to the functional ops in
/// <graft/ops/ops.h>, where each is documented.
#include <functional>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "graft/core/error.h"
#include "graft/core/generator.h"
#include "graft/core/memory_format.h"
#include "graft/core/scalar.h"
#include "graft/core/tensor_impl.h"

namespace graft {

class Tensor;
using TensorList = std::vector<Tensor>;
namespace indexing {
class TensorIndex;  // graft/core/tensor_index.h
}

/// libtorch's tensor layouts: graft's tensors are all strided (no sparse layouts).
enum class Layout { Strided };
inline constexpr Layout kStrided = Layout::Strided;

/// Handle returned by register_hook; remove() unregisters the hook (idempotent).
class HookHandle {
 public:
  HookHandle() = default;
  explicit HookHandle(std::function<void()> remover) : remover_(std::move(remover)) {}
  void remove() {
    if (remover_) {
      auto r = std::move(remover_);
      remover_ = nullptr;
      r();
    }
  }

 private:
  std::function<void()> remover_;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata ----
  bool defined() const { return impl_.get() != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  /// Size of dimension `d` (negative counts from the end).
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  DType dtype() const { return impl_->dtype(); }
  DType scalar_type() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  /// Whether the elements lie in `memory_format`'s order (size-1 dims' strides ignored; a
  /// channels-last format asks for rank 4 or 5, Preserve for row-major), as PyTorch's.
  bool is_contiguous(MemoryFormat memory_format) const {
    return is_contiguous_as(impl_->sizes(), impl_->strides(), memory_format);
  }
  /// The elements fill one block of memory exactly once, in some order of the dims.
  bool is_non_overlapping_and_dense() const {
    return graft::is_non_overlapping_and_dense(impl_->sizes(), impl_->strides());
  }
  bool is_floating_point() const { return graft::is_floating_point(dtype()); }
  size_t element_size() const { return graft::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  void* data_ptr() const { return impl_->data(); }
  /// Typed pointer to element 0; throws TypeError if T does not match dtype().
  template <class T>
  T* data_ptr() const;
  /// The value of a one-element tensor.
  template <class T>
  T item() const;
  Scalar item() const;
  /// Values as a flat std::vector (any layout), converted to T.
  template <class T>
  std::vector<T> to_vector() const;
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  uint32_t use_count() const { return impl_.use_count(); }
  /// PyTorch's `_version`: bumped by every in-place op on this tensor or an alias.
  uint32_t _version() const { return impl_->version(); }
  bool is_inference() const { return impl_->is_inference; }
  std::string str() const;       ///< the repr PyTorch prints
  std::string toString() const;  ///< type string such as "CPUFloatType"

  // ---- autograd ----
  bool requires_grad() const;
  /// Sets requires_grad on a leaf (PyTorch's requires_grad_); returns *this.
  Tensor& requires_grad_(bool flag = true);
  Tensor& set_requires_grad(bool flag) { return requires_grad_(flag); }
  bool is_leaf() const;
  /// The accumulated gradient (undefined when none). Reading it on a non-leaf that does not
  /// retain grad prints PyTorch's warning.
  const Tensor& grad() const;
  Tensor& mutable_grad();
  /// Assigns `.grad` (validated like PyTorch: size and dtype must match).
  void set_grad(const Tensor& g);
  /// The node that produced this tensor (null for leaves). For a view whose base was modified
  /// in place, this regenerates the view's history first, as PyTorch does.
  const intrusive_ptr<Node>& grad_fn() const;
  uint32_t output_nr() const { return impl_->output_nr; }
  /// Runs backward from this tensor; see graft::autograd::backward.
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, const std::optional<TensorList>& inputs = std::nullopt) const;
  void retain_grad() const;
  bool retains_grad() const;
  /// Registers fn(grad) -> Tensor; an undefined return keeps the gradient, a defined one replaces it.
  HookHandle register_hook(std::function<Tensor(const Tensor&)> fn) const;
  Tensor detach() const;
  Tensor& detach_();
  /// Shares storage but not the version counter or history (PyTorch's `.data`).
  Tensor variable_data() const;
  /// Replaces this tensor's data (storage, dtype, sizes) with new_data's while keeping the
  /// tensor itself, its grad and requires_grad: PyTorch's `t.data = new_data`. Every handle
  /// (a module's member, an optimizer's param list) sees the change. Used by Module::to().
  void set_data(const Tensor& new_data);
  bool is_view() const;
  /// The base tensor this is a view of (undefined if not a view).
  const Tensor& _base() const;

  // ---- conversion ----
  Tensor to(DType dtype, bool copy = false) const;
  Tensor to(Device device, bool copy = false) const;
  Tensor to(Device device, DType dtype, bool copy = false) const;
  Tensor to(const Tensor& other, bool copy = false) const;
  Tensor float_() const { return to(kFloat32); }
  Tensor double_() const { return to(kFloat64); }
  Tensor long_() const { return to(kInt64); }

  // ---- views ----
  // view(), transpose(), t(), permute(), expand(), squeeze(), unsqueeze(), select(), slice():
  // reshape(), flatten(), narrow(), as_strided(): generated from src/ops/ops.yaml (below)
  Tensor expand_as(const Tensor& other) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  /// self[indices] with Python's rules (libtorch's Tensor::index): `x.index({Slice(), 0})` is
  /// `x[:, 0]` (graft/core/tensor_index.h). Basic items give views; tensors index as PyTorch's.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(std::span<const indexing::TensorIndex> indices) const;
  /// self[indices] = value, in place (libtorch's Tensor::index_put_ with index items).
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value);
  Tensor& index_put_(std::span<const indexing::TensorIndex> indices, const Tensor& value);
  /// Whether other has self's sizes and the same elements (libtorch's Tensor::equal, graft::equal).
  bool equal(const Tensor& other) const;
  /// libtorch's layout: graft's tensors are all strided.
  Layout layout() const { return Layout::Strided; }
  // split(split_size), split(split_sizes) (libtorch's split.sizes), chunk(), unbind():
  // generated from src/ops/ops.yaml (below)

  // ---- math (see ops.h) ----
  // exp(), tanh(), sigmoid(), ... and their in-place forms exp_(), ...; isnan(), isfinite(),
  // ...; maximum(o), eq(o), lt(o), ...: generated from src/ops/ops.yaml
#include "graft/core/tensor_generated_methods.inc"
  /// x.var(dims, 2), x.std(dims, 0.5): a number after the dims is the correction (libtorch
  /// would convert it to its `bool unbiased` overload); a bool there is `unbiased`.
  template <class Number>
  requires(std::is_arithmetic_v<Number> && !std::is_same_v<Number, bool>) Tensor
      var(IntArrayRef dim, Number correction, bool keepdim = false)
  const { return var(dim, std::optional<Scalar>(correction), keepdim); }
  template <class Number>
  requires(std::is_arithmetic_v<Number> && !std::is_same_v<Number, bool>) Tensor
      std(IntArrayRef dim, Number correction, bool keepdim = false)
  const { return this->std(dim, std::optional<Scalar>(correction), keepdim); }
  Tensor sum(std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;

  // ---- in-place ----
  // add_(), sub_(), mul_(), div_(), clamp_(), square_(), masked_fill_(), index_put_(), fill_(),
  // zero_(), copy_(): generated from src/ops/ops.yaml (above)

 private:
  intrusive_ptr<TensorImpl> impl_;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);
/// Bitwise (on bool: logical) and, or, xor and not of integer and bool tensors, as libtorch's
/// operators (bitwise_and, bitwise_or, bitwise_xor, bitwise_not).
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator~(const Tensor& a);
// ==, !=, <, <=, >, >= (a tensor or a number on the right): generated from src/ops/ops.yaml
#include "graft/core/tensor_generated_operators.inc"
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
/// Prints like PyTorch: `tensor([1., 2.], requires_grad=True)`.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace graft
