// Random tensors of given probabilities and means, written in the factories (declared in
// src/ops/ops.yaml, the composite family): torch.bernoulli (0/1 draws with each element's
// probability, or one p) and torch.normal (means and standard deviations as tensors or numbers).
// Their results carry no graph: PyTorch records a node whose gradient is zero, graft none.
#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
namespace {

TensorOptions like(const Tensor& t) { return TensorOptions(t.dtype()).device(t.device()); }

// The checks build their temporaries on meta too (sizes only), so the meta estimate stays exact.
void check_std(const Tensor& std) {
  if (std.numel() == 0) return;
  const Tensor negative = any(lt(std, 0));
  if (detail::has_data(std))
    GRAFT_CHECK(!negative.item<bool>(), RuntimeError, "normal expects all elements of std >= 0.0");
}
void check_std(double std) { GRAFT_CHECK(std >= 0, RuntimeError, "normal expects std >= 0.0, but found std ", std); }

}  // namespace

Tensor bernoulli(const Tensor& self, std::optional<Generator> generator) {
  detail::check_tensor(self, "bernoulli");
  if (!is_floating_point(self.dtype())) detail::kernel_not_implemented("bernoulli_tensor_cpu_p_", self.dtype());
  // NaN is outside too
  const Tensor outside = self.numel() > 0 ? any(logical_not(logical_and(ge(self, 0), le(self, 1)))) : Tensor();
  if (detail::has_data(self) && outside.defined())
    GRAFT_CHECK(
        !outside.item<bool>(), RuntimeError,
        "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If "
        "so, please report an enhancement request to PyTorch.)");
  return lt(rand(self.sizes(), generator, like(self)), self.detach()).to(self.dtype());
}

Tensor bernoulli(const Tensor& self, double p, std::optional<Generator> generator) {
  detail::check_tensor(self, "bernoulli");
  GRAFT_CHECK(p >= 0 && p <= 1, RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  if (!is_floating_point(self.dtype())) detail::kernel_not_implemented("bernoulli_scalar_cpu_", self.dtype());
  return lt(rand(self.sizes(), generator, like(self)), p).to(self.dtype());
}

Tensor normal(const Tensor& mean, const Tensor& std, std::optional<Generator> generator) {
  detail::check_tensor(mean, "normal", "mean");
  detail::check_tensor(std, "normal", "std");
  check_std(std);
  const Shape shape = detail::broadcast_shapes(mean.sizes(), std.sizes());
  const DType dtype = promote_types(mean.dtype(), std.dtype());
  return add(mean.detach(), mul(std.detach(), randn(shape, generator, TensorOptions(dtype).device(mean.device()))));
}

Tensor normal(const Tensor& mean, double std, std::optional<Generator> generator) {
  detail::check_tensor(mean, "normal", "mean");
  check_std(std);
  return add(mean.detach(), mul(randn(mean.sizes(), generator, like(mean)), std));
}

Tensor normal(double mean, const Tensor& std, std::optional<Generator> generator) {
  detail::check_tensor(std, "normal", "std");
  check_std(std);
  return add(mul(std.detach(), randn(std.sizes(), generator, like(std))), mean);
}

Tensor normal(double mean, double std, IntArrayRef size, std::optional<Generator> generator,
              std::optional<DType> dtype) {
  check_std(std);
  return add(mul(randn(size, generator, TensorOptions(dtype.value_or(default_dtype()))), std), mean);
}

}  // namespace graft
