// Loss functions composed of differentiable ops, with PyTorch's reductions, weights,
// ignore_index, label smoothing and numerically stable forms (log clamped at -100 in
// binary_cross_entropy, softplus in the logits form).
#include "graft/ops/autocast.h"
#include "graft/ops/derivatives.h"
#include "graft/ops/generated_forwards.h"
#include "graft/ops/nn_ops.h"
#include "op_util.h"

namespace graft {

namespace {

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::None:
      return loss;
    case Reduction::Sum:
      return loss.sum();
    case Reduction::Mean:
      return loss.mean();
  }
  return loss;
}

void check_pair(const Tensor& input, const Tensor& target, const char* op) {
  detail::check_tensor(input, op);
  detail::check_tensor(target, op, "target");
  GRAFT_CHECK(is_floating_point(input.dtype()), TypeError, op, ": expected a floating point input, but got ",
              input.dtype());
}

// Moves the class dim (1) last and flattens: [N, C, d...] -> [N*d..., C]; [C] -> [1, C].
Tensor classes_last(const Tensor& input) {
  if (input.dim() == 1) return input.unsqueeze(0);
  if (input.dim() == 2) return input;
  std::vector<int64_t> perm{0};
  for (int64_t d = 2; d < input.dim(); ++d) perm.push_back(d);
  perm.push_back(1);
  return input.permute(perm).reshape({-1, input.size(1)});
}

// Checks a class-index target against input [N, C, d...] / [C] and returns it flattened.
Tensor flat_class_target(const Tensor& input, const Tensor& target, const char* op) {
  GRAFT_CHECK(target.dtype() == kInt64, RuntimeError, "expected scalar type Long but found ",
              scalar_type_name(target.dtype()));
  GRAFT_CHECK(input.dim() >= 1, ValueError, op, ": input must have at least 1 dimension (the classes), got ",
              input.sizes());
  if (input.dim() == 1) {
    GRAFT_CHECK(target.dim() == 0, RuntimeError, op, ": 1D input (", input.sizes(),
                ") expects a 0D target, but got target of size ", target.sizes());
    return target.reshape({1});
  }
  GRAFT_CHECK(target.dim() >= 1 && input.size(0) == target.size(0), ValueError, "Expected input batch_size (",
              input.size(0), ") to match target batch_size (", target.dim() ? target.size(0) : 0, ").");
  bool match = target.dim() == input.dim() - 1;
  for (int64_t d = 2; match && d < input.dim(); ++d) match = target.size(d - 1) == input.size(d);
  GRAFT_CHECK(
      match, RuntimeError, op, ": expected target of size ",
      [&] {
        Shape s{input.size(0)};
        for (int64_t d = 2; d < input.dim(); ++d) s.push_back(input.size(d));
        return detail::shape_str(s);
      }(),
      " for input of size ", input.sizes(), ", but got target of size ", target.sizes());
  return target.reshape({-1});
}

void check_class_weight(const Tensor& weight, int64_t C, const char* op) {
  GRAFT_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C), RuntimeError, op,
              ": weight tensor should be defined either for all ", C,
              " classes or no classes but got weight tensor of shape: ", weight.sizes());
}

// Per-element NLL terms and their weights (0 where ignored), flattened.
std::pair<Tensor, Tensor> nll_terms(const Tensor& logp2, const Tensor& tgt, const Tensor& weight,
                                    int64_t ignore_index) {
  const int64_t C = logp2.size(1);
  Tensor valid = ne(tgt, ignore_index);
  {
    NoGradGuard ng;
    Tensor bad = logical_and(valid, logical_or(lt(tgt, 0), ge(tgt, C)));
    if (detail::has_data(bad) && bad.to(kInt64).sum().item<int64_t>() > 0) {
      auto tv = tgt.to_vector<int64_t>();
      auto bv = bad.to(kInt64).to_vector<int64_t>();
      for (size_t i = 0; i < tv.size(); ++i)
        if (bv[i]) throw IndexError(detail::str("Target ", tv[i], " is out of bounds."));
    }
  }
  Tensor safe = where(valid, tgt, scalar_tensor(0, TensorOptions(kInt64).device(tgt.device())));
  Tensor picked = gather(logp2, 1, safe.unsqueeze(1)).squeeze(1);
  Tensor w = weight.defined() ? index_select(weight, 0, safe)
                              : ones({safe.numel()}, TensorOptions(logp2.dtype()).device(logp2.device()));
  w = where(valid, w, scalar_tensor(0.0, TensorOptions(w.dtype()).device(w.device())));
  return {-(picked * w), w};
}

Tensor target_shaped(const Tensor& flat, const Tensor& input, const Tensor& target) {
  return input.dim() == 1 ? flat.reshape({}) : flat.reshape(target.sizes());
}

// nll's reduction: 'mean' divides by the summed weights of the non-ignored targets.
Tensor reduce_nll(const Tensor& terms, const Tensor& w, Reduction reduction, const Tensor& input,
                  const Tensor& target) {
  switch (reduction) {
    case Reduction::None:
      return target_shaped(terms, input, target);
    case Reduction::Sum:
      return terms.sum();
    case Reduction::Mean:
      return terms.sum() / w.sum();
  }
  return terms;
}

}  // namespace

Reduction reduction_from_string(const std::string& s) {
  if (s == "none") return Reduction::None;
  if (s == "mean") return Reduction::Mean;
  if (s == "sum") return Reduction::Sum;
  throw ValueError(detail::str(s, " is not a valid value for reduction"));
}

Tensor detail::mse_loss_forward(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_pair(input, target, "mse_loss");
  NoGradGuard ng;  // MseLossBackward0 records it (its gradient: derivatives::mse_loss_backward)
  Tensor d = input - target;
  return reduce(d * d, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (autocast::active()) [[unlikely]]
    return autocast::run(
        autocast::CastPolicy::Float32, [&](const Tensor& i, const Tensor& t) { return l1_loss(i, t, reduction); },
        input, target);
  alloc::MemoryOpScope mem_scope("l1_loss");
  check_pair(input, target, "l1_loss");
  return reduce(abs(input - target), reduction);
}

Tensor detail::smooth_l1_loss_forward(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_pair(input, target, "smooth_l1_loss");
  GRAFT_CHECK(beta >= 0, RuntimeError, "smooth_l1_loss does not support negative values for beta.");
  NoGradGuard ng;  // SmoothL1LossBackward0 records it (derivatives::smooth_l1_loss_backward)
  Tensor d = abs(input - target);
  if (beta == 0.0) return reduce(d, reduction);
  // the quadratic branch squares only the small differences (an infinite one squared is of no use)
  Tensor small = lt(d, beta);
  Tensor dq = where(small, d, 0.0);
  Tensor loss = where(small, dq * dq * (0.5 / beta), d - 0.5 * beta);
  return reduce(loss, reduction);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                int64_t ignore_index) {
  if (autocast::active()) [[unlikely]]
    return autocast::run(
        autocast::CastPolicy::Float32,
        [&](const Tensor& i, const Tensor& w) { return nll_loss(i, target, w, reduction, ignore_index); }, input,
        weight);
  alloc::MemoryOpScope mem_scope("nll_loss");
  check_pair(input, target, "nll_loss");
  Tensor tgt = flat_class_target(input, target, "nll_loss");
  const int64_t C = input.dim() == 1 ? input.size(0) : input.size(1);
  check_class_weight(weight, C, "nll_loss");
  auto [terms, w] = nll_terms(classes_last(input), tgt, weight, ignore_index);
  return reduce_nll(terms, w, reduction, input, target);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                     int64_t ignore_index, double label_smoothing) {
  if (autocast::active()) [[unlikely]]
    return autocast::run(
        autocast::CastPolicy::Float32,
        [&](const Tensor& i, const Tensor& t, const Tensor& w) {
          return cross_entropy(i, t, w, reduction, ignore_index, label_smoothing);
        },
        input, target, weight);
  alloc::MemoryOpScope mem_scope("cross_entropy");
  check_pair(input, target, "cross_entropy");
  GRAFT_CHECK(!(label_smoothing < 0.0 || label_smoothing > 1.0), RuntimeError,  // NaN passes, as in PyTorch
              "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  GRAFT_CHECK(input.dim() >= 1, ValueError, "cross_entropy: input must have at least 1 dimension (the classes)");
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t C = input.size(class_dim);
  check_class_weight(weight, C, "cross_entropy");
  Tensor logp = log_softmax(input, class_dim);
  Tensor wb;  // weight broadcast along the class dim
  if (weight.defined()) {
    Shape s(static_cast<size_t>(input.dim()), 1);
    s[static_cast<size_t>(class_dim)] = C;
    wb = weight.reshape(s);
  }
  if (is_floating_point(target.dtype())) {
    GRAFT_CHECK(ignore_index < 0, RuntimeError, "ignore_index is not supported for floating point target");
    // Class probabilities: -sum_c w_c t_c log p_c per element; 'mean' divides by the number
    // of elements (not by the weights).
    GRAFT_CHECK(target.sizes().equals(input.sizes()), RuntimeError,
                "cross_entropy: expected a probability target of the input's size ", input.sizes(),
                ", but got target of size ", target.sizes());
    Tensor t =
        label_smoothing > 0 ? target * (1.0 - label_smoothing) + label_smoothing / static_cast<double>(C) : target;
    Tensor prod = wb.defined() ? logp * t * wb : logp * t;
    Tensor per = -prod.sum({class_dim});
    if (reduction == Reduction::Mean) return per.sum() / static_cast<double>(C == 0 ? 0 : input.numel() / C);
    return reduce(per, reduction);
  }
  Tensor tgt = flat_class_target(input, target, "cross_entropy");
  auto [terms, w] = nll_terms(classes_last(logp), tgt, weight, ignore_index);
  Tensor nll = reduce_nll(terms, w, reduction, input, target);
  if (!(label_smoothing > 0.0)) return nll;  // as PyTorch: a NaN smoothing smooths nothing
  // Smoothing term: -sum_c w_c log p_c per element, ignored targets masked, reduced like nll
  // (its 'mean' divides by the same summed target weights, or the non-ignored count).
  Tensor per = -(wb.defined() ? logp * wb : logp).sum({class_dim}).reshape({-1});
  per = where(ne(tgt, ignore_index), per, scalar_tensor(0.0, TensorOptions(per.dtype()).device(per.device())));
  Tensor smooth = reduce_nll(per, w, reduction, input, target);
  return nll * (1.0 - label_smoothing) + smooth * (label_smoothing / static_cast<double>(C));
}

namespace {
// A weight multiplies the loss in the input's dtype (PyTorch multiplies in place). The weights
// stay differentiable here (gradchecked in the op registry): PyTorch has no formula for them and
// refuses a weight that requires grad; graft computes it.
Tensor weight_as_input(const Tensor& weight, const Tensor& input) {
  return weight.defined() && weight.dtype() != input.dtype() ? weight.to(input.dtype()) : weight;
}
}  // namespace

// -(y log x + (1 - y) log(1 - x)), the logs clamped at -100 as PyTorch's: its node
// (BinaryCrossEntropyBackward0, generated from src/ops/ops.yaml) has PyTorch's gradient formulas,
// which the composed form would make 0/0 at x = 0 or 1 where the clamp is active
Tensor detail::binary_cross_entropy_forward(const Tensor& input, const Tensor& target, const Tensor& weight_arg,
                                            Reduction reduction) {
  check_pair(input, target, "binary_cross_entropy");
  const Tensor weight = weight_as_input(weight_arg, input);
  GRAFT_CHECK(target.sizes().equals(input.sizes()), ValueError, "Using a target size (", target.sizes(),
              ") that is different to the input size (", input.sizes(),
              ") is deprecated. Please ensure they have the same size.");
  NoGradGuard ng;
  if (input.numel() > 0 && detail::has_data(input)) {
    bool in_range = logical_and(ge(input, 0.0), le(input, 1.0)).to(kInt64).sum().item<int64_t>() == input.numel();
    GRAFT_CHECK(in_range, RuntimeError, "all elements of input should be between 0 and 1");
  }
  GRAFT_CHECK(
      !weight.defined() || IntArrayRef(detail::broadcast_shapes(weight.sizes(), input.sizes())).equals(input.sizes()),
      RuntimeError, "binary_cross_entropy: weight of size ", weight.sizes(), " does not broadcast to the input's size ",
      input.sizes());
  Tensor loss = derivatives::binary_cross_entropy_terms(input, target);
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  if (autocast::active()) [[unlikely]]
    return autocast::run(
        autocast::CastPolicy::Float32,
        [&](const Tensor& i, const Tensor& t, const Tensor& w, const Tensor& pw) {
          return binary_cross_entropy_with_logits(i, t, w, pw, reduction);
        },
        input, target, weight, pos_weight);
  alloc::MemoryOpScope mem_scope("binary_cross_entropy_with_logits");
  check_pair(input, target, "binary_cross_entropy_with_logits");
  GRAFT_CHECK(target.sizes().equals(input.sizes()), ValueError, "Target size (", target.sizes(),
              ") must be the same as input size (", input.sizes(), ")");
  // (1 - y) x + lw * softplus(-x), lw = 1 + (pos_weight - 1) y: log(1 + e^-x) without overflow.
  Tensor sp = softplus(-input);
  const Tensor pw = weight_as_input(pos_weight, input);
  Tensor loss = pw.defined() ? (1.0 - target) * input + ((pw - 1.0) * target + 1.0) * sp : (1.0 - target) * input + sp;
  if (weight.defined()) loss = loss * weight_as_input(weight, loss);
  return reduce(loss, reduction);
}

}  // namespace graft
