// nn::init: PyTorch's initialisers, each writing its tensor in place (no temporary of the
// tensor's size): the random fills draw in double and convert, so every dtype gets the same
// draws for the same seed.
#include "graft/nn/init.h"

#include <cmath>
#include <limits>

#include "graft/core/grad_mode.h"
#include "graft/ops/forwards.h"
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
int64_t fan(const Tensor& t, const std::string& mode) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  GRAFT_CHECK(mode == "fan_in" || mode == "fan_out", ValueError, "Mode ", mode,
              " not supported, please use one of fan_in, fan_out");
  return mode == "fan_in" ? in : out;
}
}  // namespace

// Each draws into t in place (Tensor.uniform_ and friends: the kernel table's random fills),
// without recording, as torch.nn.init does under no_grad; the fills check their arguments as
// PyTorch's do.
Tensor uniform_(Tensor t, double a, double b, std::optional<Generator> generator) {
  GRAFT_CHECK(t.defined(), ValueError, "uniform_: argument 'input' is an undefined tensor");
  NoGradGuard ng;
  t.uniform_(a, b, generator);
  return t;
}
Tensor normal_(Tensor t, double mean, double std, std::optional<Generator> generator) {
  GRAFT_CHECK(t.defined(), ValueError, "normal_: argument 'input' is an undefined tensor");
  NoGradGuard ng;
  t.normal_(mean, std, generator);
  return t;
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
  NoGradGuard ng;
  t.zero_();
  // the diagonal as a view of t, filled in place
  t.as_strided({std::min(t.size(0), t.size(1))}, {t.stride(0) + t.stride(1)}, t.storage_offset()).fill_(1);
  return t;
}
Tensor xavier_uniform_(Tensor t, double gain, std::optional<Generator> generator) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  const double a = gain * std::sqrt(6.0 / static_cast<double>(in + out));
  return init::uniform_(t, -a, a, generator);
}
Tensor xavier_normal_(Tensor t, double gain, std::optional<Generator> generator) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  return init::normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(in + out)), generator);
}
Tensor kaiming_uniform_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity,
                        std::optional<Generator> generator) {
  if (t.numel() == 0) return t;
  const double bound = calculate_gain(nonlinearity, a) * std::sqrt(3.0 / static_cast<double>(fan(t, mode)));
  return init::uniform_(t, -bound, bound, generator);
}
Tensor kaiming_normal_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity,
                       std::optional<Generator> generator) {
  if (t.numel() == 0) return t;
  return init::normal_(t, 0.0, calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(t, mode))),
                       generator);
}
Tensor trunc_normal_(Tensor t, double mean, double std, double a, double b, std::optional<Generator> generator) {
  GRAFT_CHECK(a < b, ValueError, "trunc_normal_: expected a < b, but got a=", a, " and b=", b);
  detail::check_tensor(t, "trunc_normal_");
  detail::check_writable(t);
  GRAFT_CHECK(t.is_floating_point(), RuntimeError, "\"normal_kernel_cpu\" not implemented for '",
              scalar_type_name(t.dtype()), "'");
  // each value redrawn while outside [a, b] (at most 1000 draws, then clamped), in place
  detail::draw(kernel::RandomFill::TruncNormal, t, {.a = mean, .b = std, .lo = a, .hi = b}, generator);
  ++t.impl()->version();  // an in-place write, as PyTorch's (its version bump)
  return t;
}

}  // namespace graft::nn::init
