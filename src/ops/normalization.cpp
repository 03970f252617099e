// layer_norm, batch_norm, group_norm composed of differentiable reductions and arithmetic
// (so each differentiates twice). Variance is biased for normalizing; batch_norm's running
// variance is updated with the unbiased one, as PyTorch's.
#include "graft/core/checked_math.h"
#include "graft/ops/nn_ops.h"
#include "op_util.h"

namespace graft {

namespace {

// [1, C, 1, ...] view of a per-channel vector for an input of `ndim` dims.
Tensor channel_view(const Tensor& v, int64_t ndim) {
  Shape s(static_cast<size_t>(ndim), 1);
  s[1] = v.numel();
  return v.reshape(s);
}

Tensor affine(Tensor y, const Tensor& weight, const Tensor& bias, const std::function<Tensor(const Tensor&)>& shape) {
  if (weight.defined()) y = y * shape(weight);
  if (bias.defined()) y = y + shape(bias);
  return y;
}

void check_floating(const Tensor& t, const char* op) {
  GRAFT_CHECK(is_floating_point(t.dtype()), TypeError, op, ": expected a floating point input, but got ", t.dtype());
}

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  alloc::MemoryOpScope mem_scope("layer_norm");
  detail::check_tensor(input, "layer_norm");
  check_floating(input, "layer_norm");
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  GRAFT_CHECK(k >= 1, RuntimeError,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
              "least one element, but got normalized_shape = ",
              normalized_shape);
  bool match = input.dim() >= k;
  for (int64_t i = 0; match && i < k; ++i) match = input.size(input.dim() - k + i) == normalized_shape[i];
  GRAFT_CHECK(
      match, RuntimeError, "Given normalized_shape=", normalized_shape, ", expected input with shape [*",
      [&] {
        std::string s;
        for (auto v : normalized_shape) s += ", " + std::to_string(v);
        return s;
      }(),
      "], but got input of size", input.sizes());
  for (const Tensor* p : {&weight, &bias})
    GRAFT_CHECK(!p->defined() || p->sizes().equals(normalized_shape), RuntimeError, "Expected ",
                p == &weight ? "weight" : "bias", " to be of same shape as normalized_shape, but got ",
                p == &weight ? "weight" : "bias", " of shape ", p->sizes(),
                " and normalized_shape = ", normalized_shape);
  if (is_reduced_floating_point(input.dtype())) {  // 16 bits: computed in float32, rounded once (PyTorch's kernel)
    auto wide = [](const Tensor& t) { return t.defined() ? t.to(kFloat32) : t; };
    return layer_norm(input.to(kFloat32), normalized_shape, wide(weight), wide(bias), eps).to(input.dtype());
  }
  std::vector<int64_t> dims;
  for (int64_t i = input.dim() - k; i < input.dim(); ++i) dims.push_back(i);
  Tensor mu = mean(input, dims, true);
  Tensor centered = input - mu;
  Tensor var = mean(centered * centered, dims, true);
  Tensor y = centered * rsqrt(var + eps);
  return affine(y, weight, bias, [](const Tensor& t) { return t; });
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  alloc::MemoryOpScope mem_scope("batch_norm");
  detail::check_tensor(input, "batch_norm");
  GRAFT_CHECK(training || running_mean.defined(), RuntimeError, "running_mean must be defined in evaluation mode");
  GRAFT_CHECK(training || running_var.defined(), RuntimeError, "running_var must be defined in evaluation mode");
  check_floating(input, "batch_norm");
  GRAFT_CHECK(input.dim() >= 2, ValueError, "batch_norm: expected 2D or more input (got ", input.dim(), "D input)");
  const int64_t C = input.size(1);
  int64_t per_channel = input.size(0);  // values per channel: the batch times the spatial sizes
  for (int64_t d = 2; d < input.dim(); ++d) per_channel = checked_mul(per_channel, input.size(d));
  for (auto [t, name] : {std::pair{&running_mean, "running_mean"}, std::pair{&running_var, "running_var"},
                         std::pair{&weight, "weight"}, std::pair{&bias, "bias"}})
    GRAFT_CHECK(!t->defined() || t->numel() == C, RuntimeError, name, " should contain ", C, " elements not ",
                t->numel());
  if (input.numel() == 0) {      // PyTorch: a copy (kept in the graph through the affine's first
    Tensor out = input.clone();  // element) and running statistics left alone
    if (weight.defined() && C > 0) out = out * weight.reshape({-1})[0];
    if (bias.defined() && C > 0) out = out + bias.reshape({-1})[0];
    return out;
  }
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  Tensor mu, var;
  if (training) {
    GRAFT_CHECK(per_channel != 1, ValueError, "Expected more than 1 value per channel when training, got input size ",
                input.sizes());
    mu = mean(input, dims, true);
    Tensor centered = input - mu;
    var = mean(centered * centered, dims, true);
    if (running_mean.defined() || running_var.defined()) {
      NoGradGuard ng;
      const double n = static_cast<double>(per_channel);
      Tensor rm = running_mean, rv = running_var;  // handles to the caller's buffers
      // both new values first (in the buffers' own shapes), then the copies: no half update
      Tensor new_rm, new_rv;
      if (rm.defined()) new_rm = (mu.reshape(rm.sizes()) * momentum + rm * (1.0 - momentum)).to(rm.dtype());
      if (rv.defined())
        new_rv = (var.reshape(rv.sizes()) * (n / (n - 1.0)) * momentum + rv * (1.0 - momentum)).to(rv.dtype());
      // both buffers must take the write (an expanded one cannot) before either is written
      for (const Tensor* buf : {&rm, &rv})
        if (buf->defined()) detail::check_writable(*buf);
      if (rm.defined()) rm.copy_(new_rm);
      if (rv.defined()) rv.copy_(new_rv);
    }
    Tensor y = centered * rsqrt(var + eps);
    return affine(y, weight, bias, [&](const Tensor& t) { return channel_view(t, input.dim()); });
  }
  Tensor y = (input - channel_view(running_mean, input.dim())) * rsqrt(channel_view(running_var, input.dim()) + eps);
  return affine(y, weight, bias, [&](const Tensor& t) { return channel_view(t, input.dim()); });
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  alloc::MemoryOpScope mem_scope("group_norm");
  detail::check_tensor(input, "group_norm");
  check_floating(input, "group_norm");
  GRAFT_CHECK(input.dim() >= 2, RuntimeError, "group_norm: expected at least 2D input (got ", input.dim(), "D input)");
  GRAFT_CHECK(num_groups > 0, RuntimeError, "group_norm: num_groups must be positive, but got ", num_groups);
  const int64_t N = input.size(0), C = input.size(1);
  GRAFT_CHECK(C % num_groups == 0, RuntimeError,
              "Expected number of channels in input to be divisible by num_groups, "
              "but got input of shape ",
              input.sizes(), " and num_groups=", num_groups);
  for (auto [t, name] : {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}})
    GRAFT_CHECK(!t->defined() || (t->dim() == 1 && t->numel() == C), RuntimeError, "Expected ", name,
                " to be a vector of size equal to the number of channels in input, but got ", name, " of shape ",
                t->sizes(), " and input of shape ", input.sizes());
  const int64_t per_group = (C / num_groups) * (N * C == 0 ? 0 : input.numel() / (N * C));
  Tensor xg = input.reshape({N, num_groups, per_group});  // explicit: -1 is ambiguous when N == 0
  Tensor mu = mean(xg, {2}, true);
  Tensor centered = xg - mu;
  Tensor var = mean(centered * centered, {2}, true);
  Tensor y = (centered * rsqrt(var + eps)).reshape(input.sizes());
  return affine(y, weight, bias, [&](const Tensor& t) { return channel_view(t, input.dim()); });
}

}  // namespace graft
