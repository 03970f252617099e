// Helpers of the derivative formulas in src/ops/ops.yaml (include/graft/ops/derivatives.h).
#include "graft/ops/derivatives.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "graft/core/grad_mode.h"
#include "ops/op_util.h"

namespace graft::derivatives {

namespace {
Tensor zeros_for(IntArrayRef sizes, const Tensor& like) {
  return zeros(sizes, TensorOptions(like.dtype()).device(like.device()));
}
}  // namespace

Tensor maybe_multiply(const Tensor& grad, const Scalar& alpha) {
  return alpha.to_double() == 1.0 ? grad : grad * alpha;
}

Tensor pow_backward(const Tensor& grad, const Tensor& self, const Scalar& exponent) {
  if (exponent.to_double() == 0.0) return zeros_like(self, TensorOptions(grad.dtype()).device(grad.device()));
  // exponent - 1 in double, as PyTorch's pow_backward: an integer exponent of -2**63 minus one
  // would wrap around to 2**63 - 1 in int64 (and swap the gradient's zeros and infinities)
  const double exp = exponent.to_double();
  return grad * Scalar(exp) * pow(self, Scalar(exp - 1));
}

Tensor pow_backward_self(const Tensor& grad, const Tensor& self, const Tensor& exponent) {
  return where(exponent == 0, 0, grad * exponent * pow(self, exponent - 1));
}

Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result) {
  Tensor d = grad * result * log(self);
  return where(logical_and(self == 0, exponent >= 0), zeros_like(d), d);
}

Tensor pow_backward_exponent(const Tensor& grad, const Scalar& self, const Tensor& result) {
  const double base = self.to_double();
  if (base == 0.0) return zeros_like(grad);  // d/de 0**e is 0 for e >= 0 (PyTorch's convention)
  return grad * result * std::log(base);
}

Tensor sum_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef dims, bool keepdim) {
  const uint64_t mask = detail::dim_mask(dims, static_cast<int64_t>(self_sizes.size()), "sum");
  return detail::unsqueeze_reduced(grad, self_sizes, mask, keepdim).expand(self_sizes);
}

Tensor mean_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef dims, bool keepdim) {
  const uint64_t mask = detail::dim_mask(dims, static_cast<int64_t>(self_sizes.size()), "mean");
  const auto count = static_cast<double>(detail::reduced_count(self_sizes, mask));
  return detail::unsqueeze_reduced(grad, self_sizes, mask, keepdim).expand(self_sizes) / count;
}

Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim, bool keepdim) {
  if (self.dim() == 0) return prod_backward(grad, self, result);
  const int64_t d = detail::wrap_dim(dim, self.dim(), "prod");
  const uint64_t mask = uint64_t{1} << d;
  const Tensor g = detail::unsqueeze_reduced(grad, self.sizes(), mask, keepdim);
  bool has_zero;
  {
    NoGradGuard no_grad;
    // meta: no values; the zero-free formula (a real run with zeros takes other memory)
    has_zero = detail::has_data(self) && eq(self, 0).to(kInt64).sum().item<int64_t>() > 0;
  }
  if (!has_zero) return g * detail::unsqueeze_reduced(result, self.sizes(), mask, keepdim) / self;
  // the product of all other elements, one slice at a time (O(n^2); only when zeros occur)
  const int64_t n = self.size(d);
  TensorList others;
  for (int64_t i = 0; i < n; ++i)
    others.push_back(prod(cat({self.narrow(d, 0, i), self.narrow(d, i + 1, n - i - 1)}, d), d, true));
  return g * cat(others, d);
}

Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  return prod_backward(grad.reshape({1}), self.reshape({-1}), result.reshape({1}), 0, true).reshape(self.sizes());
}

Tensor repeat_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef repeats) {
  const size_t lead = repeats.size() - self_sizes.size();
  Shape interleaved;
  std::vector<int64_t> repeat_dims;
  for (size_t i = 0; i < repeats.size(); ++i) {
    repeat_dims.push_back(static_cast<int64_t>(interleaved.size()));
    interleaved.push_back(repeats[i]);
    interleaved.push_back(i < lead ? 1 : self_sizes[i - lead]);
  }
  return sum(grad.reshape(interleaved), repeat_dims).reshape(self_sizes);
}

Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices,
                                          IntArrayRef self_sizes, bool keepdim) {
  if (self_sizes.empty()) return grad;  // a 0-d self: its one element was selected
  const int64_t d = detail::wrap_dim(dim, static_cast<int64_t>(self_sizes.size()), "max");
  const uint64_t mask = uint64_t{1} << d;
  Tensor g = detail::unsqueeze_reduced(grad, self_sizes, mask, keepdim);
  Tensor i = detail::unsqueeze_reduced(indices, self_sizes, mask, keepdim);
  return scatter_add(zeros(self_sizes, TensorOptions(grad.dtype()).device(grad.device())), d, i, g);
}

namespace {
// The running sum of t along dim from the end of each lane.
Tensor reversed_cumsum(const Tensor& t, int64_t dim) {
  const std::vector<int64_t> d{dim};
  return flip(cumsum(flip(t, d), dim), d);
}
}  // namespace

Tensor cumsum_backward(const Tensor& grad, int64_t dim) {
  if (grad.dim() == 0 || grad.numel() == 0) return grad;
  return reversed_cumsum(grad, dim);
}

namespace {
// cumprod's gradient as a function PyTorch's double backward can differentiate: for each k,
// the sum over j >= k of grad_j times the product of self up to j without self_k (n steps of
// O(n): used only while the backward is itself recorded, create_graph=True).
Tensor cumprod_backward_recorded(const Tensor& grad, const Tensor& self, int64_t dim) {
  const int64_t n = self.size(dim);
  std::vector<Tensor> parts;
  Shape one = self.sizes().shape();
  one[static_cast<size_t>(dim)] = 1;
  const Tensor ones_lane = ones(one, TensorOptions(self.dtype()).device(self.device()));
  for (int64_t k = 0; k < n; ++k) {
    const Tensor prefix = k == 0 ? ones_lane : prod(self.narrow(dim, 0, k), dim, true);
    Tensor omitted = ones_lane;  // the products of self_(k+1..j), j from k on
    if (k + 1 < n) omitted = cat({ones_lane, cumprod(self.narrow(dim, k + 1, n - k - 1), dim)}, dim);
    parts.push_back(mul(grad.narrow(dim, k, n - k), omitted).sum({dim}, true) * prefix);
  }
  return cat(parts, dim);
}
}  // namespace

Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result) {
  if (self.dim() == 0 || self.numel() == 0) return grad.to(self.dtype());
  const int64_t d = detail::wrap_dim(dim, self.dim(), "cumprod");
  if (self.size(d) == 1) return grad.to(self.dtype());  // each result is its input
  if (GradMode::is_enabled()) {
    const Tensor g = cumprod_backward_recorded(grad, self, d);
    return g.dtype() == self.dtype() ? g : g.to(self.dtype());
  }
  const Tensor is_zero = eq(self, 0);
  const Tensor zeros_so_far = cumsum(is_zero, d);
  const Tensor before = eq(zeros_so_far, 0);  // ahead of the lane's first zero
  const Tensor first_zero = logical_and(is_zero, eq(zeros_so_far, 1));
  const Tensor none = zeros({}, TensorOptions(grad.dtype()).device(grad.device()));
  // before the first zero: d result_j / d self_k = result_j / self_k, for j ahead of that zero
  const Tensor safe = where(before, self, ones({}, TensorOptions(self.dtype()).device(self.device())));
  const Tensor ahead = reversed_cumsum(where(before, grad * result, none), d) / safe;
  // at it: the products of self with the zero left out, from the zero on; after it, 0
  const Tensor skipping = cumprod(where(first_zero, ones_like(self), self), d);
  const Tensor at = reversed_cumsum(where(before, none, grad * skipping), d);
  const Tensor g = where(before, ahead, where(first_zero, at, none));
  return g.dtype() == self.dtype() ? g : g.to(self.dtype());  // cumprod(dtype=) computed in another
}

Tensor cummaxmin_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& indices, int64_t dim) {
  if (self_sizes.empty()) return grad;
  return scatter_add(zeros_for(self_sizes, grad), dim, indices, grad);
}

Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim) {
  if (self.dim() == 0 || self.numel() == 0) return grad;
  const std::vector<int64_t> d{dim};
  auto reversed_logcumsumexp = [&](const Tensor& t) { return flip(logcumsumexp(flip(t, d), dim), d); };
  const Tensor lowest =
      full({}, -detail::largest_finite(grad.dtype()), TensorOptions(grad.dtype()).device(grad.device()));
  const Tensor log_abs = log(abs(grad));
  const Tensor positive = exp(reversed_logcumsumexp(where(gt(grad, 0), log_abs, lowest) - result) + self);
  const Tensor negative = exp(reversed_logcumsumexp(where(lt(grad, 0), log_abs, lowest) - result) + self);
  return positive - negative;
}

Tensor linalg_vector_norm_backward(const Tensor& grad, const Tensor& self, const Scalar& ord, const Tensor& result,
                                   IntArrayRef dim, bool keepdim) {
  const double p = ord.to_double();
  if (p == 0) return Tensor();  // a count: no gradient (PyTorch leaves .grad unset too)
  const uint64_t mask = detail::dim_mask(dim, self.dim(), "linalg.vector_norm");
  const Tensor g = detail::unsqueeze_reduced(grad, self.sizes(), mask, keepdim);
  const Tensor norm = detail::unsqueeze_reduced(result, self.sizes(), mask, keepdim);
  if (std::isinf(p)) {  // shared evenly by the elements at the extreme
    const Tensor at = eq(abs(self), norm);
    return sign(self) * at * g / sum(at, dim, true);
  }
  if (p == 1) return sign(self) * g;
  if (p == 2) return self * masked_fill(g / norm, eq(norm, 0), 0);
  Tensor powered = pow(abs(self), p - 1);
  if (p < 1) powered = masked_fill(powered, eq(self, 0), 0);  // 0^(negative) is inf: zeros give none
  return sign(self) * powered * masked_fill(g / pow(norm, p - 1), eq(norm, 0), 0);
}

Tensor roll_backward(const Tensor& grad, IntArrayRef shifts, IntArrayRef dims) {
  std::vector<int64_t> back;
  for (int64_t s : shifts) back.push_back(-s);
  return roll(grad, back, dims);
}

TensorList cat_tensors_backward(const Tensor& grad, const std::vector<Shape>& tensors_sizes, int64_t dim) {
  const int64_t d = detail::wrap_dim(dim, grad.dim(), "cat");
  TensorList out;
  int64_t offset = 0;
  for (const Shape& sizes : tensors_sizes) {
    if (sizes.size() == 1 && sizes[0] == 0) {  // skipped by cat's legacy rule
      out.push_back(zeros({0}, TensorOptions(grad.dtype()).device(grad.device())));
      continue;
    }
    out.push_back(grad.narrow(d, offset, sizes[d]));
    offset += sizes[d];
  }
  return out;
}

TensorList stack_tensors_backward(const Tensor& grad, int64_t dim) {
  const int64_t d = detail::wrap_dim(dim, grad.dim(), "stack");
  TensorList out;
  for (int64_t i = 0; i < grad.size(d); ++i) out.push_back(grad.select(d, i));
  return out;
}

namespace {
// The gradients of a multi-output view op's outputs, zeros of `sizes_of(i)` for those that
// got none (the engine leaves them undefined).
template <class SizesOf>
TensorList filled_grads(const TensorList& grads, size_t count, DType dtype, Device device, SizesOf sizes_of) {
  TensorList out;
  for (size_t i = 0; i < count; ++i)
    out.push_back(i < grads.size() && grads[i].defined() ? grads[i]
                                                         : zeros(sizes_of(i), TensorOptions(dtype).device(device)));
  return out;
}
}  // namespace

Tensor split_with_sizes_backward(const TensorList& grads, IntArrayRef split_sizes, int64_t dim, IntArrayRef self_sizes,
                                 DType self_dtype, Device self_device) {
  const int64_t d = detail::wrap_dim(dim, static_cast<int64_t>(self_sizes.size()), "split");
  return cat(filled_grads(grads, split_sizes.size(), self_dtype, self_device,
                          [&](size_t i) {
                            Shape s = self_sizes.shape();
                            s[d] = split_sizes[i];
                            return s;
                          }),
             d);
}

Tensor split_backward(const TensorList& grads, int64_t split_size, int64_t dim, IntArrayRef self_sizes,
                      DType self_dtype, Device self_device) {
  const int64_t d = detail::wrap_dim(dim, static_cast<int64_t>(self_sizes.size()), "split");
  return split_with_sizes_backward(grads, detail::split_piece_sizes(self_sizes[d], split_size), d, self_sizes,
                                   self_dtype, self_device);
}

Tensor unbind_backward(const TensorList& grads, int64_t dim, IntArrayRef self_sizes, DType self_dtype,
                       Device self_device) {
  const int64_t d = detail::wrap_dim(dim, static_cast<int64_t>(self_sizes.size()), "unbind");
  Shape slice = self_sizes.shape();
  slice.erase(slice.begin() + d);
  return stack(
      filled_grads(grads, static_cast<size_t>(self_sizes[d]), self_dtype, self_device, [&](size_t) { return slice; }),
      d);
}

Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max) {
  Tensor keep = ones_like(self, TensorOptions(kBool));
  if (min) keep = logical_and(keep, self >= *min);
  if (max) keep = logical_and(keep, self <= *max);
  return where(keep, grad, 0);
}

Tensor clamp_backward_self(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max) {
  Tensor pass = min.defined() ? ge(self, min) : Tensor();
  if (max.defined()) pass = pass.defined() ? logical_and(pass, le(self, max)) : le(self, max);
  return where(pass, grad, 0.0);
}

Tensor clamp_backward_min(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max) {
  return where(max.defined() ? logical_and(lt(self, min), lt(min, max)) : lt(self, min), grad, 0.0);
}

Tensor clamp_backward_max(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max) {
  return where(min.defined() ? logical_or(gt(self, max), lt(max, min)) : gt(self, max), grad, 0.0);
}

Tensor silu_backward(const Tensor& grad, const Tensor& self) {
  Tensor s = sigmoid(self);
  return grad * s * (1 + self * (1 - s));
}

Tensor mish_backward(const Tensor& grad, const Tensor& self) {
  Tensor t = tanh(softplus(self));
  return grad * (t + self * sigmoid(self) * (1 - t * t));
}

Tensor leaky_relu_result_backward(const Tensor& grad, const Tensor& result, double negative_slope) {
  GRAFT_CHECK(negative_slope >= 0.0, RuntimeError,
              "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
              "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
              "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
              "in-place leakRelu backward calculation with negative slope");
  return where(result > 0, grad, grad * negative_slope);
}

Tensor elu_result_backward(const Tensor& grad, const Tensor& result, double alpha, double scale, double input_scale) {
  GRAFT_CHECK(alpha >= 0.0, RuntimeError,
              "In-place elu backward calculation is triggered with a negative slope which is not supported. This is "
              "caused by calling in-place forward function with a negative slope, please call out-of-place version "
              "instead.");
  // where result <= 0, result = scale * alpha * (exp(input_scale * x) - 1), whose derivative is
  // input_scale * (result + alpha * scale)
  return where(result > 0, grad * scale, grad * input_scale * (result + alpha * scale));
}

Tensor masked_fill_value_backward(const Tensor& grad, const Tensor& mask) { return where(mask, grad, 0.0).sum(); }

Tensor index_select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index) {
  if (self_sizes.empty())  // a 0-d self: its one element, as a [1] tensor, gets the gradient
    return index_add(zeros_for(Shape{1}, grad), dim, index.reshape({-1}), grad.reshape({1})).reshape({});
  return index_add(zeros_for(self_sizes, grad), dim, index.reshape({-1}), grad);
}

Tensor index_add_source_backward(const Tensor& grad, int64_t dim, const Tensor& index, IntArrayRef source_sizes) {
  Tensor g = grad.dim() == 0 ? grad.reshape({1}) : grad;
  return index_select(g, dim, index.reshape({-1})).reshape(source_sizes);
}

Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims,
                          bool keepdim) {
  const uint64_t mask = detail::dim_mask(dims, self.dim(), "logsumexp");
  Tensor g = detail::unsqueeze_reduced(grad, self.sizes(), mask, keepdim);
  Tensor y = detail::unsqueeze_reduced(result, self.sizes(), mask, keepdim);
  return g * exp(self - y);
}

Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index) {
  return scatter_add(zeros_for(self_sizes, grad), dim, index, grad);
}

Tensor gelu_backward(const Tensor& grad, const Tensor& self, const std::string& approximate) {
  const Tensor& x = self;
  if (approximate != "tanh") {
    Tensor cdf = (erf(x * M_SQRT1_2) + 1) * 0.5;
    Tensor pdf = exp(x * x * -0.5) * (M_2_SQRTPI * M_SQRT1_2 * 0.5);
    return grad * (cdf + x * pdf);
  }
  const double k = M_2_SQRTPI * M_SQRT1_2, c = 0.044715;
  Tensor x2 = x * x;
  Tensor t = tanh((x + x2 * x * c) * k);
  return grad * ((t + 1) * 0.5 + x * (1 - t * t) * ((x2 * (3 * c) + 1) * (0.5 * k)));
}

namespace {
// the reduced dims of a reduction over `dim` (all when empty), their mask and element count
struct Reduced {
  uint64_t mask = 0;
  SmallVector<int64_t, 5> dims;
  int64_t count = 1;
};
Reduced reduced(const Tensor& self, IntArrayRef dim, const char* op) {
  Reduced r;
  r.mask = detail::dim_mask(dim, self.dim(), op);
  for (int64_t d = 0; d < self.dim(); ++d)
    if (r.mask >> d & 1) {
      r.dims.push_back(d);
      r.count *= self.size(d);
    }
  return r;
}
}  // namespace

Tensor amax_amin_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim) {
  const Reduced r = reduced(self, dim, "amax");
  Tensor y = detail::unsqueeze_reduced(result, self.sizes(), r.mask, keepdim);
  Tensor g = detail::unsqueeze_reduced(grad, self.sizes(), r.mask, keepdim);
  Tensor tie = eq(self, y).to(g.dtype());
  Tensor count = r.dims.empty() ? tie : sum(tie, r.dims, true);
  return g / count * tie;
}

Tensor var_backward(const Tensor& grad, const Tensor& self, IntArrayRef dim, const std::optional<Scalar>& correction,
                    bool keepdim) {
  const Reduced r = reduced(self, dim, "var");
  Tensor g = detail::unsqueeze_reduced(grad, self.sizes(), r.mask, keepdim);
  const double denom = std::max(static_cast<double>(r.count) - detail::var_correction(correction), 0.0);
  return g * (self - mean(self, r.dims, true)) * (2.0 / denom);
}

Tensor std_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim,
                    const std::optional<Scalar>& correction, bool keepdim) {
  // d std = d var / (2 std), in the reduced shape, then var's gradient
  Tensor zero = result == 0;
  return var_backward(where(zero, 0, grad / where(zero, 1, result * 2)), self, dim, correction, keepdim);
}

Tensor masked_select_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& mask) {
  const Shape bs = detail::broadcast_shapes(self_sizes, mask.sizes());
  Tensor m = mask.sizes().equals(bs) ? mask : mask.expand(bs);
  Tensor z = zeros_for(bs, grad);
  index_put_(z, {m}, grad);
  return sum_to(z, self_sizes);
}

Tensor embedding_backward(const Tensor& grad, IntArrayRef weight_sizes, const Tensor& indices,
                          std::optional<int64_t> padding_idx, bool scale_grad_by_freq) {
  const int64_t V = weight_sizes[0], D = weight_sizes[1];
  Tensor idx = indices.reshape({-1});
  if (idx.dtype() != kInt64) idx = idx.to(kInt64);
  const int64_t n = idx.numel();
  Tensor g = grad.reshape({n, D});
  Tensor scale;  // per lookup: 1 / its index's count, 0 at the padding row
  if (scale_grad_by_freq) {
    Tensor counts =
        index_add(zeros_for(Shape{V}, grad), 0, idx, ones({n}, TensorOptions(grad.dtype()).device(grad.device())));
    scale = pow(index_select(counts, 0, idx), -1.0);
  }
  if (padding_idx) {
    Tensor keep = ne(idx, *padding_idx < 0 ? *padding_idx + V : *padding_idx).to(grad.dtype());
    scale = scale.defined() ? scale * keep : keep;
  }
  if (scale.defined()) g = g * scale.unsqueeze(1);
  return index_add(zeros_for(weight_sizes, grad), 0, idx, g);
}

namespace {
// a loss's per-element gradient: grad brought back through `reduction` to `like`'s shape
Tensor unreduced(const Tensor& grad, const Tensor& like, Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return grad;
    case Reduction::Sum:
      return grad.expand(like.sizes());
    case Reduction::Mean:
      return grad.expand(like.sizes()) / static_cast<double>(like.numel());
  }
  return grad;
}
// the per-element gradient times the weight (cast to the input's dtype, as the forward)
Tensor weighted(const Tensor& grad, const Tensor& input, const Tensor& weight, Reduction reduction) {
  Tensor g = unreduced(grad, input, reduction);
  if (!weight.defined()) return g;
  return g * (weight.dtype() == input.dtype() ? weight : weight.to(input.dtype()));
}
}  // namespace

Tensor mse_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, Reduction reduction) {
  Tensor d = input - target;
  return unreduced(grad, d, reduction) * d * 2.0;
}

Tensor smooth_l1_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, Reduction reduction,
                               double beta) {
  Tensor x = input - target;
  // x / beta is selected only strictly between the bounds (and for NaN); with beta 0 never but
  // for NaN, so x itself serves, and no 0 / 0 reaches the unselected branch's gradient
  Tensor inner = beta == 0.0 ? x : x / beta;
  Tensor g = where(le(x, -beta), -1.0, where(ge(x, beta), 1.0, inner));
  return unreduced(grad, x, reduction) * g;
}

Tensor binary_cross_entropy_terms(const Tensor& input, const Tensor& target) {
  return -(target * clamp(log(input), -100.0) + (1.0 - target) * clamp(log(1.0 - input), -100.0));
}

Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                     const Tensor& weight, Reduction reduction) {
  return weighted(grad, input, weight, reduction) * (input - target) / clamp(input * (1.0 - input), 1e-12);
}

Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                            const Tensor& weight, Reduction reduction) {
  // -logit(x) as PyTorch's, the logs not clamped: +-inf at x = 0 or 1 (where the forward's clamp
  // is active), as PyTorch 1.13 gives
  return weighted(grad, input, weight, reduction) * (log(1.0 - input) - log(input));
}

Tensor binary_cross_entropy_weight_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                            const Tensor& weight, Reduction reduction) {
  Tensor g = sum_to(unreduced(grad, input, reduction) * binary_cross_entropy_terms(input, target), weight.sizes());
  return g.dtype() == weight.dtype() ? g : g.to(weight.dtype());
}

Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  Tensor mask = logical_or(eq(self, result), logical_and(isnan(self), isnan(result)));
  Tensor count = mask.sum().to(grad.dtype());
  return where(mask, grad / count, 0);
}

Shape last_two(IntArrayRef sizes) {
  GRAFT_CHECK(sizes.size() >= 2, RuntimeError, "last_two: expected at least 2 sizes, got ", sizes.size());
  return {sizes[sizes.size() - 2], sizes[sizes.size() - 1]};
}

}  // namespace graft::derivatives
