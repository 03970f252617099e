#pragma once
/// The functional op API. Every op here is listed once in src/ops/op_table.def, has a
/// backward written in these same ops (so double backward works), and an entry in the test
/// op registry (tests/ops/op_registry.cpp). Broadcasting and type promotion follow PyTorch.
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "graft/core/tensor.h"
#include "graft/ops/generated_ops.h"  // from src/ops/ops.yaml

namespace graft {

// ---- var and std: a number after the dims is the correction ----
/// var(x, {1}, 2) divides by N - 2: a non-bool number after the dims is the correction, where
/// libtorch converts it to its `bool unbiased` overload (var(x, {1}, 2) there is unbiased); a
/// bool there is `unbiased`, as in libtorch.
template <class Number>
requires(std::is_arithmetic_v<Number> && !std::is_same_v<Number, bool>) Tensor
    var(const Tensor& self, IntArrayRef dim, Number correction, bool keepdim = false) {
  return var(self, dim, std::optional<Scalar>(correction), keepdim);
}
/// std(x, {1}, 2): as var, the number is the correction.
template <class Number>
requires(std::is_arithmetic_v<Number> && !std::is_same_v<Number, bool>) Tensor
    std(const Tensor& self, IntArrayRef dim, Number correction, bool keepdim = false) {
  return graft::std(self, dim, std::optional<Scalar>(correction), keepdim);
}

// ---- factories (TensorOptions-like arguments) ----
/// Options for factories: dtype, device, requires_grad. Without a dtype, the default dtype at
/// the time the options are made (default_dtype()).
struct TensorOptions {
  DType dtype_ = default_dtype();
  Device device_ = kCPU;
  bool requires_grad_ = false;
  bool has_dtype_ = false;
  bool has_device_ = false;  ///< unset: default_device() for factories, the source's for *_like
  TensorOptions() = default;
  TensorOptions(DType d) : dtype_(d), has_dtype_(true) {}
  TensorOptions(Device d) : device_(d), has_device_(true) {}
  /// A device type (kCPU, kCUDA), as libtorch's zeros({2}, kCUDA).
  TensorOptions(DeviceType t) : TensorOptions(Device(t)) {}
  TensorOptions dtype(DType d) const {
    auto o = *this;
    o.dtype_ = d;
    o.has_dtype_ = true;
    return o;
  }
  TensorOptions device(Device d) const {
    auto o = *this;
    o.device_ = d;
    o.has_device_ = true;
    return o;
  }
  TensorOptions requires_grad(bool r = true) const {
    auto o = *this;
    o.requires_grad_ = r;
    return o;
  }
};
inline TensorOptions dtype(DType d) { return TensorOptions().dtype(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

Tensor empty(IntArrayRef sizes, TensorOptions opts = {});
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions opts = {});
Tensor zeros(IntArrayRef sizes, TensorOptions opts = {});
Tensor ones(IntArrayRef sizes, TensorOptions opts = {});
Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions opts = {});
/// Values start, start+step, ... below end; dtype int64 when all arguments are integers.
Tensor arange(const Scalar& end, TensorOptions opts = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, TensorOptions opts = {});
Tensor linspace(double start, double end, int64_t steps, TensorOptions opts = {});
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, TensorOptions opts = {});
/// Uniform in [0, 1). The overloads taking a generator draw from it (libtorch's order: sizes,
/// generator, options); the others from default_generator().
Tensor rand(IntArrayRef sizes, TensorOptions opts = {});
Tensor rand(IntArrayRef sizes, const std::optional<Generator>& generator, TensorOptions opts = {});
/// Standard normal.
Tensor randn(IntArrayRef sizes, TensorOptions opts = {});
Tensor randn(IntArrayRef sizes, const std::optional<Generator>& generator, TensorOptions opts = {});
/// Uniform integers in [low, high); int64 by default.
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions opts = kInt64);
Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions opts = kInt64);
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const std::optional<Generator>& generator,
               TensorOptions opts = kInt64);
Tensor randint(int64_t high, IntArrayRef sizes, const std::optional<Generator>& generator, TensorOptions opts = kInt64);
/// A random permutation of 0..n-1 (int64 by default).
Tensor randperm(int64_t n, TensorOptions opts = kInt64);
Tensor randperm(int64_t n, const std::optional<Generator>& generator, TensorOptions opts = kInt64);
Tensor empty_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);
Tensor full_like(const Tensor& t, const Scalar& v, std::optional<TensorOptions> opts = std::nullopt);
Tensor rand_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> opts = std::nullopt);
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, std::optional<TensorOptions> opts = std::nullopt);
/// A 1-D tensor holding a copy of `values` (dtype from T unless given).
template <class T>
Tensor tensor(const std::vector<T>& values, TensorOptions opts = {});
/// A 1-D tensor of braced numbers of mixed types ({1.0, INFINITY}), in the default dtype.
Tensor tensor(std::initializer_list<double> values, TensorOptions opts = {});
/// A 1-D tensor of the braced values, as libtorch's torch::tensor({...}): integers give int64,
/// floating values the default dtype, bools bool (unless opts gives a dtype).
template <class T>
Tensor tensor(std::initializer_list<T> values, TensorOptions opts = {}) {
  if constexpr (std::is_same_v<T, bool>)
    return tensor(std::vector<int64_t>(values.begin(), values.end()), opts.has_dtype_ ? opts : opts.dtype(kBool));
  else if constexpr (std::is_integral_v<T>)
    return tensor(std::vector<int64_t>(values.begin(), values.end()), opts);
  else
    return tensor(std::vector<double>(values.begin(), values.end()),
                  opts.has_dtype_ ? opts : opts.dtype(default_dtype()));
}
/// A 0-d tensor.
Tensor scalar_tensor(const Scalar& s, TensorOptions opts = {});
/// Wraps memory the caller owns; `deleter` (optional) runs when the last alias dies.
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter = nullptr, TensorOptions opts = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, std::function<void(void*)> deleter = nullptr,
                 TensorOptions opts = {});
/// Seeds the default generator (default_generator(): every random op given no generator).
void manual_seed(uint64_t seed);
/// The seed the default generator was last seeded with (by manual_seed or set_rng_state).
uint64_t initial_seed();
/// A copy of the default generator's whole state: a 1-D int64 tensor holding the initial seed
/// then the std::mt19937_64 state words (bit-cast to int64). set_rng_state() of it restores
/// the generator exactly, so the same draws follow. (PyTorch returns a uint8 ByteTensor.)
Tensor get_rng_state();
/// Restores a get_rng_state() result. TypeError unless a CPU int64 tensor; RuntimeError for
/// a non-contiguous one, a wrong number of elements, or words the engine does not accept.
void set_rng_state(const Tensor& state);

// ---- elementwise ----
// add, sub, mul, div, remainder, pow and clamp (their Tensor and number overloads),
// floor_divide and square are declared in src/ops/ops.yaml and generated: graft/ops/generated_ops.h.
/// In place: a = a * a.
// exp, log, sqrt, sin, tanh, sigmoid, erf and the other elementwise ops with a floating result,
// neg, abs, sign, relu, isnan, isfinite, isinf, ..., and the activations silu, softplus,
// leaky_relu, elu, ..., gelu are declared in src/ops/ops.yaml and generated: graft/ops/generated_ops.h.
// where(condition, self, other) and its overloads taking numbers are declared in src/ops/ops.yaml
// (generated_ops.h).
// maximum, minimum, fmax, atan2, ...; eq, lt, ..., logical_and, ...: generated (generated_ops.h)
// bitwise_and, bitwise_or, bitwise_xor: generated (generated_ops.h)
// bitwise_not is declared in src/ops/ops.yaml (generated_ops.h).
/// True when every element is within atol + rtol * |b| of b (both floating).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// True when sizes and all values are equal.
bool equal(const Tensor& a, const Tensor& b);

// ---- reductions ----
/// dims empty = all dims.
// sum, mean and prod (over all elements and along dims) are declared in src/ops/ops.yaml.
// max(self) and min(self) over all elements, and sum_to, are declared in src/ops/ops.yaml
// (generated_ops.h); here are max and min along a dim.
// amax and amin are declared in src/ops/ops.yaml (generated_ops.h).
// max and min, of all elements and along a dim ((values, indices)), are declared in
// src/ops/ops.yaml (generated_ops.h).
// argmax and argmin are declared in src/ops/ops.yaml (generated_ops.h).
// var, std, logsumexp, softmax and log_softmax are declared in src/ops/ops.yaml (generated_ops.h).
// dist is declared in src/ops/ops.yaml (generated_ops.h).

// ---- linear algebra ----
// mm, bmm, matmul and linear are declared in src/ops/ops.yaml (generated_ops.h).

// ---- shape and indexing ----
// cat, stack, split, split_with_sizes, chunk and unbind are declared in src/ops/ops.yaml
// (generated_ops.h).
// index_select, index_add, gather, scatter_add and masked_fill are declared in src/ops/ops.yaml
// (generated_ops.h).
// masked_select is declared in src/ops/ops.yaml (generated_ops.h).
// nonzero is declared in src/ops/ops.yaml (generated_ops.h).
// index and index_put are declared in src/ops/ops.yaml (generated_ops.h).
// clone, contiguous and repeat are declared in src/ops/ops.yaml (generated_ops.h).
// as_strided_scatter is declared in src/ops/ops.yaml (generated_ops.h).

}  // namespace graft
