// The writes of the in-place-only ops (ops.yaml's inplace_only family): fill_, zero_, copy_
// and the random fills. No autograd here: the generated forms (src/autograd/
// generated_functions.cpp) check PyTorch's in-place rules first, and bump self's version (and
// record) after. (The in-place forms of the other ops pass self as their forward's `into`.)
#include <limits>

#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {

// ---- the in-place-only ops' writes (ops.yaml's inplace_only family) ----
void detail::fill_write(Tensor& self, const Scalar& value) {
  value.check_fits(self.dtype());
  kernel::fill(self, value);
}
void detail::fill_write(Tensor& self, const Tensor& value) {
  detail::check_tensor(value, "fill_", "value");
  GRAFT_CHECK(value.dim() == 0, RuntimeError, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  if (detail::has_data(self)) fill_write(self, value.item());  // a meta self has nothing to write
}
void detail::zero_write(Tensor& self) { kernel::fill(self, 0); }

// non_blocking: CPU copies are synchronous (an asynchronous one is a device's)
void detail::copy_write(Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  detail::check_tensor(src, "copy_", "src");
  GRAFT_CHECK(IntArrayRef(detail::broadcast_shapes(self.sizes(), src.sizes())).equals(self.sizes()), RuntimeError,
              "copy_: the source of shape ", src.sizes(), " cannot be broadcast to the destination of shape ",
              self.sizes());
  if (src.impl()->storage().get() == self.impl()->storage().get() && !src.is_same(self)) {
    Tensor tmp = detail::new_empty(src.sizes(), src.dtype(), src.device());  // read before any write
    kernel::copy(tmp, src);
    kernel::copy(self, tmp);
  } else {
    kernel::copy(self, src);
  }
}

// ---- the random fills: PyTorch's argument checks, then the kernel table's random_fill ----
namespace {
using kernel::RandomFill;
void check_floating(const Tensor& self, const char* kernel_name) {
  if (!is_floating_point(self.dtype())) detail::kernel_not_implemented(kernel_name, self.dtype());
}
// The largest integer self's dtype holds exactly (random_'s default upper bound, included).
int64_t random_max(DType dtype) {
  switch (dtype) {
    case kBool:
      return 1;
    case kInt32:
      return std::numeric_limits<int32_t>::max();
    case kFloat32:
      return int64_t{1} << std::numeric_limits<float>::digits;
    case kFloat64:
      return int64_t{1} << std::numeric_limits<double>::digits;
    case kFloat16:
      return int64_t{1} << std::numeric_limits<Half>::digits;
    case kBFloat16:
      return int64_t{1} << std::numeric_limits<BFloat16>::digits;
    default:
      return std::numeric_limits<int64_t>::max();
  }
}
}  // namespace

void detail::uniform_write(Tensor& self, double from, double to, std::optional<Generator> gen) {
  // PyTorch's checks: floating tensors only, bounds inside the dtype's range, from <= to; NaN
  // fails every comparison
  check_floating(self, "check_uniform_bounds");
  const double hi = GRAFT_DISPATCH_FLOATING_AND_REDUCED(
      self.dtype(), "check_uniform_bounds", [&] { return static_cast<double>(std::numeric_limits<scalar_t>::max()); });
  const double lo = -hi;
  GRAFT_CHECK(from >= lo && from <= hi, RuntimeError, "from is out of bounds for ", dtype_cpp_name(self.dtype()));
  GRAFT_CHECK(to >= lo && to <= hi, RuntimeError, "to is out of bounds for ", dtype_cpp_name(self.dtype()));
  GRAFT_CHECK(from <= to, RuntimeError, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  GRAFT_CHECK(to - from <= hi, RuntimeError, "uniform_ expects to-from <= std::numeric_limits<",
              scalar_type_name(self.dtype()), ">::max(), but found to=", to, " and from=", from,
              " which result in to-from to exceed the limit");
  detail::draw(RandomFill::Uniform, self, {.a = from, .b = to}, gen);
}
void detail::normal_write(Tensor& self, double mean, double std, std::optional<Generator> gen) {
  GRAFT_CHECK(std >= 0.0, RuntimeError, "normal expects std >= 0.0, but found std ", std);
  check_floating(self, "normal_kernel_cpu");
  detail::draw(RandomFill::Normal, self, {.a = mean, .b = std}, gen);
}
void detail::bernoulli_write(Tensor& self, double p, std::optional<Generator> gen) {
  GRAFT_CHECK(p >= 0.0 && p <= 1.0, RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  detail::draw(RandomFill::Bernoulli, self, {.a = p}, gen);
}
void detail::random_write(Tensor& self, int64_t from, std::optional<int64_t> to, std::optional<Generator> gen) {
  const int64_t last = to ? *to - 1 : random_max(self.dtype());
  GRAFT_CHECK(!to || from < *to, RuntimeError, "random_ expects 'from' to be less than 'to', but got from=", from,
              " >= to=", *to);
  detail::check_random_bounds(self.dtype(), from, last);
  detail::draw(RandomFill::Integers, self, {.from = from, .last = last}, gen);
}
void detail::random_write(Tensor& self, int64_t to, std::optional<Generator> gen) { random_write(self, 0, to, gen); }
void detail::random_write(Tensor& self, std::optional<Generator> gen) { random_write(self, 0, std::nullopt, gen); }
void detail::exponential_write(Tensor& self, double lambd, std::optional<Generator> gen) {
  GRAFT_CHECK(lambd >= 0.0, RuntimeError, "exponential_ expects lambda >= 0.0, but found lambda=", lambd);
  check_floating(self, "exponential_cpu");
  detail::draw(RandomFill::Exponential, self, {.a = lambd}, gen);
}
void detail::geometric_write(Tensor& self, double p, std::optional<Generator> gen) {
  GRAFT_CHECK(p > 0.0 && p < 1.0, RuntimeError, "geometric_ expects p to be in (0, 1), but got p=", p);
  if (self.dtype() == kBool) detail::kernel_not_implemented("geometric_cpu", kBool);
  detail::draw(RandomFill::Geometric, self, {.a = p}, gen);
}
void detail::log_normal_write(Tensor& self, double mean, double std, std::optional<Generator> gen) {
  GRAFT_CHECK(std > 0.0, RuntimeError, "log_normal_ expects std > 0.0, but found std=", std);
  check_floating(self, "log_normal_cpu");
  detail::draw(RandomFill::LogNormal, self, {.a = mean, .b = std}, gen);
}
void detail::cauchy_write(Tensor& self, double median, double sigma, std::optional<Generator> gen) {
  check_floating(self, "cauchy_cpu");
  detail::draw(RandomFill::Cauchy, self, {.a = median, .b = sigma}, gen);
}

}  // namespace graft
