// nn::init: PyTorch's initialisers. Values are drawn in float64 and copied in, so every
// dtype gets the same draws for the same seed.
#include "graft/nn/init.h"

#include <cmath>
#include <limits>

#include "graft/core/grad_mode.h"
#include "graft/ops/ops.h"

namespace graft::nn::init {

double calculate_gain(const std::string& nl, double param) {
  if (nl == "linear" || nl == "conv1d" || nl == "conv2d" || nl == "conv3d" || nl == "conv_transpose1d" ||
      nl == "conv_transpose2d" || nl == "conv_transpose3d" || nl == "sigmoid")
    return 1.0;
  if (nl == "tanh") return 5.0 / 3.0;
  if (nl == "relu") return std::sqrt(2.0);
  if (nl == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  if (nl == "selu") return 3.0 / 4.0;
  throw ValueError(detail::str("Unsupported nonlinearity ", nl));
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  GRAFT_CHECK(t.dim() >= 2, ValueError,
              "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

namespace {
Tensor fill_from(Tensor t, const Tensor& values) {
  NoGradGuard ng;
  t.copy_(values);
  return t;
}
int64_t fan(const Tensor& t, const std::string& mode) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  GRAFT_CHECK(mode == "fan_in" || mode == "fan_out", ValueError, "Mode ", mode,
              " not supported, please use one of fan_in, fan_out");
  return mode == "fan_in" ? in : out;
}
}  // namespace

// PyTorch's checks of Tensor.uniform_ / normal_ (which torch.nn.init calls): floating tensors
// only, bounds inside the dtype's range, from <= to, std >= 0; NaN fails every comparison.
Tensor uniform_(Tensor t, double a, double b) {
  GRAFT_CHECK(t.defined(), ValueError, "uniform_: argument 'input' is an undefined tensor");
  GRAFT_CHECK(t.is_floating_point(), RuntimeError, "\"check_uniform_bounds\" not implemented for '",
              scalar_type_name(t.dtype()), "'");
  const bool f32 = t.dtype() == kFloat32;
  const double lo = f32 ? std::numeric_limits<float>::lowest() : std::numeric_limits<double>::lowest();
  const double hi = f32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
  GRAFT_CHECK(a >= lo && a <= hi, RuntimeError, "from is out of bounds for ", dtype_cpp_name(t.dtype()));
  GRAFT_CHECK(b >= lo && b <= hi, RuntimeError, "to is out of bounds for ", dtype_cpp_name(t.dtype()));
  GRAFT_CHECK(a <= b, RuntimeError, "uniform_ expects to return a [from, to) range, but found from=", a, " > to=", b);
  GRAFT_CHECK(b - a <= hi, RuntimeError, "uniform_ expects to-from <= std::numeric_limits<",
              scalar_type_name(t.dtype()), ">::max(), but found to=", b, " and from=", a,
              " which result in to-from to exceed the limit");
  if (t.device().is_meta()) return t;  // no values to draw (and no host memory to spend)
  return fill_from(t, rand(t.sizes(), kFloat64) * (b - a) + a);
}
Tensor normal_(Tensor t, double mean, double std) {
  GRAFT_CHECK(t.defined(), ValueError, "normal_: argument 'input' is an undefined tensor");
  GRAFT_CHECK(std >= 0.0, RuntimeError, "normal expects std >= 0.0, but found std ", std);
  GRAFT_CHECK(t.is_floating_point(), RuntimeError, "\"normal_kernel_cpu\" not implemented for '",
              scalar_type_name(t.dtype()), "'");
  if (t.device().is_meta()) return t;  // no values to draw (and no host memory to spend)
  return fill_from(t, randn(t.sizes(), kFloat64) * std + mean);
}
Tensor constant_(Tensor t, double value) {
  NoGradGuard ng;
  t.fill_(value);
  return t;
}
Tensor ones_(Tensor t) { return constant_(t, 1.0); }
Tensor zeros_(Tensor t) { return constant_(t, 0.0); }
Tensor eye_(Tensor t) {
  GRAFT_CHECK(t.dim() == 2, ValueError, "Only tensors with 2 dimensions are supported");
  if (t.device().is_meta()) return t;
  return fill_from(t, eye(t.size(0), t.size(1), kFloat64));
}
Tensor xavier_uniform_(Tensor t, double gain) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  const double a = gain * std::sqrt(6.0 / static_cast<double>(in + out));
  return uniform_(t, -a, a);
}
Tensor xavier_normal_(Tensor t, double gain) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  return normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(in + out)));
}
Tensor kaiming_uniform_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity) {
  if (t.numel() == 0) return t;
  const double bound = calculate_gain(nonlinearity, a) * std::sqrt(3.0 / static_cast<double>(fan(t, mode)));
  return uniform_(t, -bound, bound);
}
Tensor kaiming_normal_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity) {
  if (t.numel() == 0) return t;
  return normal_(t, 0.0, calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(t, mode))));
}
Tensor trunc_normal_(Tensor t, double mean, double std, double a, double b) {
  GRAFT_CHECK(a < b, ValueError, "trunc_normal_: expected a < b, but got a=", a, " and b=", b);
  if (t.device().is_meta()) return t;
  Tensor v = randn(t.sizes(), kFloat64) * std + mean;
  Tensor out = v;
  // redraw the values outside [a, b] until none is left
  for (int round = 0; round < 1000; ++round) {
    Tensor bad = logical_or(lt(out, a), gt(out, b));
    if (bad.to(kInt64).sum().item<int64_t>() == 0) break;
    out = where(bad, randn(t.sizes(), kFloat64) * std + mean, out);
  }
  return fill_from(t, clamp(out, a, b));
}

}  // namespace graft::nn::init
