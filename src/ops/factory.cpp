// Factories: empty, zeros, ones, full, arange, linspace, eye, random tensors, from_blob; and
// multinomial, categories drawn from weights.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <type_traits>

#include "op_util.h"

namespace graft {
using detail::new_empty;

namespace {
Tensor finish(Tensor t, const TensorOptions& o, const char* op) {
  if (o.requires_grad_) {
    GRAFT_CHECK(is_floating_point(t.dtype()), RuntimeError,
                "Only Tensors of floating point and complex dtype can require gradients");
    t.requires_grad_(true);  // also creates the autograd meta up front
  }
  (void)op;
  return t;
}
// The device a factory makes its tensor on: the one given, else the default device.
Device device_of(const TensorOptions& o) { return o.has_device_ ? o.device_ : default_device(); }
Tensor alloc_tensor(IntArrayRef sizes, const TensorOptions& o, const char* op) {
  alloc::MemoryOpScope mem_scope(op);
  const Device device = device_of(o);
  check_device_available(device, op);
  return new_empty(sizes, o.dtype_, device);
}
TensorOptions like(const Tensor& t, const std::optional<TensorOptions>& o, const char* op) {
  detail::check_tensor(t, op);
  if (!o) return TensorOptions(t.dtype()).device(t.device());
  TensorOptions r = *o;
  if (!r.has_dtype_) r = r.dtype(t.dtype());
  if (!r.has_device_) r = r.device(t.device());
  return r;
}
}  // namespace

Tensor empty(IntArrayRef sizes, TensorOptions o) { return finish(alloc_tensor(sizes, o, "empty"), o, "empty"); }

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions o) {
  GRAFT_CHECK(sizes.size() == strides.size(), ValueError, "empty_strided: sizes ", sizes, " and strides ", strides,
              " must have the same length");
  const Device device = device_of(o);
  check_device_available(device, "empty_strided");
  for (size_t i = 0; i < sizes.size(); ++i)
    GRAFT_CHECK(sizes[i] >= 0 && strides[i] >= 0, ValueError, "empty_strided: negative size or stride in ", sizes,
                " / ", strides);
  size_t nbytes = detail::storage_nbytes(detail::storage_extent(sizes, strides), o.dtype_, sizes, strides);
  auto storage = make_intrusive<StorageImpl>(allocator_for(device)->allocate(nbytes), nbytes);
  return finish(Tensor(make_intrusive<TensorImpl>(std::move(storage), o.dtype_, sizes, strides, 0)), o,
                "empty_strided");
}

Tensor full(IntArrayRef sizes, const Scalar& v, TensorOptions o) {
  if (!o.has_dtype_) o = o.dtype(v.natural_dtype());
  Tensor t = alloc_tensor(sizes, o, "full");
  kernel::fill(t, v);
  return finish(t, o, "full");
}
Tensor zeros(IntArrayRef sizes, TensorOptions o) {
  Tensor t = alloc_tensor(sizes, o, "zeros");
  if (t.numel() && detail::has_data(t)) std::memset(t.data_ptr(), 0, t.nbytes());
  return finish(t, o, "zeros");
}
Tensor ones(IntArrayRef sizes, TensorOptions o) {
  Tensor t = alloc_tensor(sizes, o, "ones");
  kernel::fill(t, 1);
  return finish(t, o, "ones");
}

Tensor arange(const Scalar& end, TensorOptions o) { return arange(0, end, 1, o); }
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions o) {
  // bools count as integers (PyTorch: arange(True) is int64)
  auto integral = [](const Scalar& x) { return x.is_integral() || x.is_bool(); };
  bool all_int = integral(start) && integral(end) && integral(step);
  if (!o.has_dtype_) o = o.dtype(all_int ? kInt64 : default_dtype());
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  // Float bounds with an integer dtype, as PyTorch: the values are trunc(start) + i * trunc(step)
  // (int64 arithmetic); the count uses the truncated bounds for int64, the float ones otherwise.
  const bool trunc_values = is_integral(o.dtype_, true) && !all_int;
  const double vs = trunc_values ? std::trunc(s) : s, vst = trunc_values ? std::trunc(st) : st;
  if (trunc_values && o.dtype_ == kInt64) s = std::trunc(s), e = std::trunc(e), st = std::trunc(st);
  GRAFT_CHECK(vst != 0, RuntimeError, "arange: step must be nonzero");
  GRAFT_CHECK(st != 0, RuntimeError, "arange: step must be nonzero");
  GRAFT_CHECK(std::isfinite(s) && std::isfinite(e), RuntimeError, "arange: unsupported range: ", s, " -> ", e);
  GRAFT_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), RuntimeError,
              "arange: upper bound and larger bound inconsistent with step sign");
  // the size in double first, so that huge integer ranges raise instead of overflowing
  const double approx = std::ceil((e - s) / st);
  GRAFT_CHECK(approx < 9.0e18, RuntimeError, "arange: the range [", s, ", ", e, ") with step ", st,
              " has too many elements");
  int64_t n = all_int ? static_cast<int64_t>((static_cast<__int128>(end.to_long()) - start.to_long() + step.to_long() +
                                              (st > 0 ? -1 : 1)) /
                                             step.to_long())
                      : static_cast<int64_t>(approx);
  if (n < 0) n = 0;
  Tensor t = alloc_tensor({n}, o, "arange");
  if (detail::has_data(t))  // meta: sizes only
    GRAFT_DISPATCH_ALL_AND_REDUCED(t.dtype(), "arange", [&] {
      auto* p = static_cast<scalar_t*>(t.data_ptr());
      for (int64_t i = 0; i < n; ++i) {
        if (all_int)
          p[i] = static_cast<scalar_t>(start.to_long() + i * step.to_long());
        else
          p[i] = static_cast<scalar_t>(vs + static_cast<double>(i) * vst);
      }
    });
  return finish(t, o, "arange");
}

Tensor linspace(double start, double end, int64_t steps, TensorOptions o) {
  GRAFT_CHECK(steps >= 0, RuntimeError, "linspace: number of steps must be non-negative, got ", steps);
  if (is_integral(o.dtype_, /*include_bool=*/false)) {  // the bounds are stored: checked as c10 converts them
    Scalar(start).check_fits(o.dtype_);
    Scalar(end).check_fits(o.dtype_);
  }
  Tensor t = alloc_tensor({steps}, o, "linspace");
  if (detail::has_data(t))  // meta: sizes only
    GRAFT_DISPATCH_ALL_AND_REDUCED(t.dtype(), "linspace", [&] {
      auto* p = static_cast<scalar_t*>(t.data_ptr());
      // float and double step in their own type, the rest in double, as PyTorch's kernel
      using step_t = std::conditional_t<std::is_same_v<scalar_t, float>, float, double>;
      const step_t first = static_cast<step_t>(start), last = static_cast<step_t>(end);
      const step_t step = steps > 1 ? (last - first) / static_cast<step_t>(steps - 1) : step_t(0);
      const int64_t half = steps / 2;
      if (steps == 1) {
        p[0] = static_cast<scalar_t>(start);
        return;
      }
      // symmetric evaluation, each a fused multiply-add, as PyTorch's vectorized kernel computes it
      for (int64_t i = 0; i < steps; ++i)
        p[i] = static_cast<scalar_t>(i < half ? std::fma(step, static_cast<step_t>(i), first)
                                              : std::fma(-step, static_cast<step_t>(steps - i - 1), last));
    });
  return finish(t, o, "linspace");
}

Tensor eye(int64_t n, std::optional<int64_t> m_opt, TensorOptions o) {
  int64_t m = m_opt.value_or(n);
  GRAFT_CHECK(n >= 0 && m >= 0, RuntimeError, "eye: n and m must be non-negative, got ", n, " and ", m);
  Tensor t = zeros({n, m}, TensorOptions(o.dtype_).device(device_of(o)));
  if (detail::has_data(t))  // meta: sizes only
    GRAFT_DISPATCH_ALL_AND_REDUCED(t.dtype(), "eye", [&] {
      auto* p = static_cast<scalar_t*>(t.data_ptr());
      for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = scalar_t(1);
    });
  return finish(t, o, "eye");
}

void detail::check_random_bounds(DType dtype, int64_t from, int64_t last) {
  if (!is_integral(dtype, /*include_bool=*/true)) return;  // PyTorch's random_ bounds for integer dtypes
  const int64_t lo = dtype == kBool ? 0 : dtype == kInt32 ? std::numeric_limits<int32_t>::min() : INT64_MIN;
  const int64_t hi = dtype == kBool ? 1 : dtype == kInt32 ? std::numeric_limits<int32_t>::max() : INT64_MAX;
  GRAFT_CHECK(from >= lo && from <= hi, RuntimeError, "from is out of bounds for ", dtype_cpp_name(dtype));
  GRAFT_CHECK(last >= lo && last <= hi, RuntimeError, "to - 1 is out of bounds for ", dtype_cpp_name(dtype));
}

namespace {
/// A floating tensor of `sizes` drawn from `kind` (`kernel` names PyTorch's kernel in the error
/// for an integral dtype).
Tensor random_floating(IntArrayRef sizes, const TensorOptions& o, const char* op, const char* kernel,
                       kernel::RandomFill kind, const kernel::RandomParams& p, const std::optional<Generator>& gen) {
  GRAFT_CHECK(is_floating_point(o.dtype_), RuntimeError, "\"", kernel, "\" not implemented for '",
              scalar_type_name(o.dtype_), "'");
  Tensor t = alloc_tensor(sizes, o, op);
  detail::draw(kind, t, p, gen);
  return finish(t, o, op);
}
}  // namespace

Tensor rand(IntArrayRef sizes, TensorOptions o) { return rand(sizes, std::nullopt, o); }
Tensor rand(IntArrayRef sizes, const std::optional<Generator>& gen, TensorOptions o) {
  return random_floating(sizes, o, "rand", "check_uniform_bounds", kernel::RandomFill::Uniform, {.a = 0, .b = 1}, gen);
}

Tensor randn(IntArrayRef sizes, TensorOptions o) { return randn(sizes, std::nullopt, o); }
Tensor randn(IntArrayRef sizes, const std::optional<Generator>& gen, TensorOptions o) {
  return random_floating(sizes, o, "randn", "normal_kernel_cpu", kernel::RandomFill::Normal, {.a = 0, .b = 1}, gen);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const std::optional<Generator>& gen, TensorOptions o) {
  GRAFT_CHECK(low < high, RuntimeError, "random_ expects 'from' to be less than 'to', but got from=", low,
              " >= to=", high);
  detail::check_random_bounds(o.dtype_, low, high - 1);
  Tensor t = alloc_tensor(sizes, o, "randint");
  detail::draw(kernel::RandomFill::Integers, t, {.from = low, .last = high - 1}, gen);
  return finish(t, o, "randint");
}
Tensor randint(int64_t high, IntArrayRef sizes, const std::optional<Generator>& gen, TensorOptions o) {
  return randint(0, high, sizes, gen, o);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions o) {
  return randint(low, high, sizes, std::nullopt, o);
}
Tensor randint(int64_t high, IntArrayRef sizes, TensorOptions o) { return randint(0, high, sizes, std::nullopt, o); }

Tensor randperm(int64_t n, TensorOptions o) { return randperm(n, std::nullopt, o); }
Tensor randperm(int64_t n, const std::optional<Generator>& gen, TensorOptions o) {
  GRAFT_CHECK(n >= 0, RuntimeError, "randperm: n must be non-negative, got", n);
  GRAFT_CHECK(o.dtype_ != kBool, TypeError, "randperm: unsupported dtype ", o.dtype_);
  // shuffled in place in a tensor from the caching allocator: a size beyond the memory (or the
  // cap) is an OutOfMemoryError before any work, not a host vector built outside it
  Tensor t = empty({n}, TensorOptions(kInt64).device(device_of(o)));
  if (!detail::has_data(t)) return finish(o.dtype_ == kInt64 ? t : t.to(o.dtype_), o, "randperm");
  int64_t* idx = t.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  {
    const Generator g = gen.value_or(default_generator());
    std::lock_guard<std::mutex> lock(g.mutex());
    for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
      std::uniform_int_distribution<int64_t> d(0, i);
      std::swap(idx[i], idx[d(g.engine())]);
    }
  }
  return finish(o.dtype_ == kInt64 ? t : t.to(o.dtype_), o, "randperm");
}

namespace {
// PyTorch's checks of multinomial's weights (values read only where there is data)
void check_multinomial(const Tensor& self, int64_t n, bool replacement) {
  GRAFT_CHECK(is_floating_point(self.dtype()), RuntimeError,
              "multinomial only supports floating-point dtypes for input, got: ", scalar_type_name(self.dtype()));
  GRAFT_CHECK(self.dim() == 1 || self.dim() == 2, RuntimeError, "prob_dist must be 1 or 2 dim");
  GRAFT_CHECK(n > 0, RuntimeError, "cannot sample n_sample <= 0 samples");
  const int64_t categories = self.size(-1);
  GRAFT_CHECK(replacement || n <= categories, RuntimeError,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  GRAFT_CHECK(categories <= (int64_t{1} << 24), RuntimeError, "number of categories cannot exceed 2^24");
}
// The weights' values, read from their contiguous copy `probs` [rows, C] (no temporaries, so a
// meta run takes the same memory)
void check_multinomial_weights(const Tensor& probs) {
  if (!detail::has_data(probs)) return;
  const int64_t rows = probs.size(0), categories = probs.size(1);
  GRAFT_DISPATCH_FLOATING(probs.dtype(), "multinomial", [&] {
    const auto* w = static_cast<const scalar_t*>(probs.data_ptr());
    for (int64_t r = 0; r < rows; ++r) {
      double total = 0;
      for (int64_t c = 0; c < categories; ++c) {
        const double v = static_cast<double>(w[r * categories + c]);
        GRAFT_CHECK(std::isfinite(v) && v >= 0, RuntimeError,
                    "probability tensor contains either `inf`, `nan` or element < 0");
        total += v;
      }
      GRAFT_CHECK(total > 0, RuntimeError, "invalid multinomial distribution (sum of probabilities <= 0)");
    }
  });
}
}  // namespace

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement, std::optional<Generator> generator) {
  detail::check_tensor(self, "multinomial");
  check_multinomial(self, num_samples, replacement);
  const int64_t rows = self.dim() == 1 ? 1 : self.size(0), categories = self.size(-1);
  Tensor probs = detail::new_empty({rows, categories}, self.dtype(), self.device());
  kernel::copy(kernel::raw_view(probs, self.sizes(), contiguous_strides(self.sizes()), 0), self);
  check_multinomial_weights(probs);
  Tensor out = detail::new_empty({rows, num_samples}, kInt64, self.device());
  if (out.numel() == 0) return self.dim() == 1 ? kernel::raw_view(out, {num_samples}, {1}, 0) : out;
  if (detail::has_data(out)) {
    const Generator g = generator.value_or(default_generator());
    std::lock_guard<std::mutex> lock(g.mutex());
    kernel::multinomial(out, probs, replacement, g.engine());
  } else {
    std::mt19937_64 unused;  // meta: the kernel takes its scratch only; the generator is untouched
    kernel::multinomial(out, probs, replacement, unused);
  }
  return self.dim() == 1 ? kernel::raw_view(out, {num_samples}, {1}, 0) : out;
}

Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o) {
  return empty(t.sizes(), like(t, o, "empty_like"));
}
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o) {
  return zeros(t.sizes(), like(t, o, "zeros_like"));
}
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o) { return ones(t.sizes(), like(t, o, "ones_like")); }
Tensor full_like(const Tensor& t, const Scalar& v, std::optional<TensorOptions> o) {
  const TensorOptions lo = like(t, o, "full_like");
  return full(t.sizes(), v, lo);
}
Tensor rand_like(const Tensor& t, std::optional<TensorOptions> o) { return rand(t.sizes(), like(t, o, "rand_like")); }
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> o) {
  return randn(t.sizes(), like(t, o, "randn_like"));
}
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, std::optional<TensorOptions> o) {
  const TensorOptions lo = like(t, o, "randint_like");
  return randint(low, high, t.sizes(), lo);
}

template <class T>
Tensor tensor(const std::vector<T>& values, TensorOptions o) {
  if (!o.has_dtype_) {
    if constexpr (std::is_floating_point_v<T>)
      o = o.dtype(default_dtype());
    else
      o = o.dtype(dtype_of<T>::value);
  }
  Tensor src(make_intrusive<TensorImpl>(
      make_intrusive<StorageImpl>(DataPtr(const_cast<T*>(values.data()), nullptr, nullptr, kCPU),
                                  values.size() * sizeof(T)),
      dtype_of<T>::value, IntArrayRef{static_cast<int64_t>(values.size())}, IntArrayRef{1}, 0));
  Tensor t = alloc_tensor({static_cast<int64_t>(values.size())}, o, "tensor");
  kernel::copy(t, src);
  return finish(t, o, "tensor");
}
template Tensor tensor<float>(const std::vector<float>&, TensorOptions);
template Tensor tensor<double>(const std::vector<double>&, TensorOptions);
template Tensor tensor<int64_t>(const std::vector<int64_t>&, TensorOptions);
template Tensor tensor<int32_t>(const std::vector<int32_t>&, TensorOptions);

Tensor tensor(std::initializer_list<double> values, TensorOptions o) {
  return tensor(std::vector<double>(values), o.has_dtype_ ? o : o.dtype(default_dtype()));
}

Tensor scalar_tensor(const Scalar& s, TensorOptions o) {
  if (!o.has_dtype_) o = o.dtype(s.natural_dtype());
  Tensor t = alloc_tensor({}, o, "scalar_tensor");
  kernel::fill(t, s);
  return finish(t, o, "scalar_tensor");
}

namespace {
struct BlobCtx {
  std::function<void(void*)> deleter;
  void* data;
};
void blob_delete(void* ctx) {
  auto* c = static_cast<BlobCtx*>(ctx);
  if (c->deleter) c->deleter(c->data);
  delete c;
}
}  // namespace

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, std::function<void(void*)> deleter,
                 TensorOptions o) {
  GRAFT_CHECK(sizes.size() == strides.size(), ValueError, "from_blob: sizes ", sizes, " and strides ", strides,
              " must have the same length");
  check_device_available(o.device_, "from_blob");
  GRAFT_CHECK(!o.device_.is_meta(), ValueError, "from_blob: a meta tensor has no data to wrap");
  for (size_t i = 0; i < sizes.size(); ++i)
    GRAFT_CHECK(sizes[i] >= 0 && strides[i] >= 0, ValueError, "from_blob: negative size or stride");
  const int64_t extent = detail::storage_extent(sizes, strides);
  GRAFT_CHECK(data != nullptr || extent == 0, ValueError, "from_blob: data is null");
  auto* ctx = new BlobCtx{std::move(deleter), data};
  auto storage = make_intrusive<StorageImpl>(DataPtr(data, ctx, &blob_delete, o.device_),
                                             detail::storage_nbytes(extent, o.dtype_, sizes, strides));
  return finish(Tensor(make_intrusive<TensorImpl>(std::move(storage), o.dtype_, sizes, strides, 0)), o, "from_blob");
}
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter, TensorOptions o) {
  return from_blob(data, sizes, contiguous_strides(sizes), std::move(deleter), o);
}

}  // namespace graft
