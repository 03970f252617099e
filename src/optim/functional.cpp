// graft::optim::functional (include/graft/optim/functional.h): the update of one parameter
// group over lists of tensors, for graft.optim's Python optimizers and for C++ users. Checks
// everything first, then runs the fused loops of src/optim/fused_kernels.h.
#include "graft/optim/functional.h"

#include <array>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "fused_kernels.h"
#include "graft/core/grad_mode.h"
#include "update_util.h"

namespace graft::optim::functional {
namespace {

using detail::AdagradArgs;
using detail::AdamArgs;
using detail::RmspropArgs;
using detail::SgdArgs;
using OptTensor = std::optional<Tensor>;

/// Checks one parameter, its gradient and its state tensors before any update (PyTorch would
/// fail inside the arithmetic; graft fails before touching anything).
void check_param(const char* opt, size_t i, const Tensor& param, const Tensor& grad,
                 std::initializer_list<const OptTensor*> state) {
  GRAFT_CHECK(!param.device().is_cuda(), NotImplementedError, opt, ".step: parameter ", i, " is on ",
              param.device().str(), "; graft.optim updates CPU (and meta) tensors only");
  GRAFT_CHECK(param.is_floating_point(), TypeError, opt, ".step: parameter ", i, " has dtype ", param.dtype(),
              "; graft.optim updates floating-point parameters");
  GRAFT_CHECK(grad.sizes().equals(param.sizes()), RuntimeError, opt, ".step: parameter ", i,
              " has a gradient of shape ", grad.sizes(), " but the parameter's shape is ", param.sizes());
  GRAFT_CHECK(grad.dtype() == param.dtype(), TypeError, opt, ".step: parameter ", i, " (", param.dtype(),
              ") has a gradient of dtype ", grad.dtype());
  detail::check_writable(param);
  for (const OptTensor* s : state) {
    if (!s->has_value()) continue;
    const Tensor& t = **s;
    GRAFT_CHECK(t.sizes().equals(param.sizes()), RuntimeError, opt, ".step: the state of parameter ", i, " has shape ",
                t.sizes(), " but the parameter's shape is ", param.sizes());
    GRAFT_CHECK(t.is_floating_point(), TypeError, opt, ".step: the state of parameter ", i, " has dtype ", t.dtype());
  }
}

/// The tensor itself when contiguous and of dtype `dt`, else a contiguous copy of that dtype.
Tensor working_copy(const Tensor& t, DType dt) {
  if (!t.defined() || (t.is_contiguous() && t.dtype() == dt)) return t;
  return t.to(dt).contiguous();
}

/// Runs the fused loop `kernel` (detail::call_fused) on contiguous operands of the parameter's
/// dtype (float32 for a float16 or bfloat16 parameter: its update is computed in float32 and
/// rounded once): the tensors themselves when they already are, else copies written back
/// afterwards (the loops give the tensor-op results bit for bit, so both paths agree); on meta
/// the working copies are what the step costs. Bumps the version counters of everything
/// written, as in-place ops do.
template <class Kernel, class... State>
void run_fused(const Tensor& param, const Tensor& grad, const Kernel& kernel, const State&... state) {
  const DType dt = is_reduced_floating_point(param.dtype()) ? kFloat32 : param.dtype();
  const Tensor p = working_copy(param, dt);
  const Tensor g = working_copy(grad, dt);
  const std::array<Tensor, sizeof...(State)> work{working_copy(state, dt)...};
  std::apply([&](const auto&... w) { detail::call_fused(kernel, p, g, w...); }, work);
  auto write_back = [](const Tensor& target, const Tensor& result) {
    if (!target.defined()) return;
    if (result.impl() == target.impl()) {
      ++target.impl()->version();
    } else {
      Tensor t = target;
      t.copy_(result);
    }
  };
  write_back(param, p);
  size_t i = 0;
  (write_back(state, work[i++]), ...);
}

Tensor value_or_undefined(const OptTensor& t) { return t ? *t : Tensor(); }

/// step += 1 on each distinct step tensor; returns each parameter's new step count.
std::vector<double> increment_steps(std::vector<Tensor>& steps) {
  std::vector<double> counts;
  counts.reserve(steps.size());
  for (Tensor& s : steps) counts.push_back(detail::increment_step(s));
  return counts;
}

void check_lists(const char* opt, size_t n, std::initializer_list<size_t> sizes) {
  for (size_t s : sizes)
    GRAFT_CHECK(s == n, ValueError, opt, ".step: ", n, " parameters but ", s, " entries in a state list");
}

void check_steps(const char* opt, const std::vector<Tensor>& steps) {
  for (size_t i = 0; i < steps.size(); ++i)
    GRAFT_CHECK(steps[i].numel() == 1 && steps[i].is_floating_point(), TypeError, opt,
                ".step: the 'step' state of parameter ", i, " must be a one-element floating-point tensor, got ",
                steps[i].dtype(), " of shape ", steps[i].sizes());
}

}  // namespace

std::vector<Tensor> sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        std::vector<std::optional<Tensor>> bufs, double lr, double momentum, double dampening,
                        double weight_decay, bool nesterov, bool maximize) {
  const size_t n = params.size();
  check_lists("SGD", n, {grads.size(), bufs.size()});
  for (size_t i = 0; i < n; ++i) check_param("SGD", i, params[i], grads[i], {&bufs[i]});
  std::vector<Tensor> out(n);
  {
    NoGradGuard no_grad;
    for (size_t i = 0; i < n; ++i) {
      SgdArgs a{lr, momentum, dampening, weight_decay, nesterov, maximize, false};
      if (momentum != 0) {
        a.first_step = !bufs[i].has_value();
        out[i] = a.first_step ? detail::empty_state(params[i]) : *bufs[i];
      }
      run_fused(
          params[i], grads[i], [&](auto... p) { detail::sgd_fused(p..., a); }, out[i]);
    }
  }
  return out;
}

void adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
          const std::vector<Tensor>& exp_avg_sqs, const std::vector<OptTensor>& max_exp_avg_sqs,
          std::vector<Tensor> steps, bool amsgrad, double beta1, double beta2, double lr, double weight_decay,
          double eps, bool maximize, bool decoupled) {
  const char* opt = decoupled ? "AdamW" : "Adam";
  const size_t n = params.size();
  check_lists(opt, n, {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), max_exp_avg_sqs.size(), steps.size()});
  check_steps(opt, steps);
  for (size_t i = 0; i < n; ++i) {
    GRAFT_CHECK(!amsgrad || max_exp_avg_sqs[i].has_value(), ValueError, opt, ".step: amsgrad needs max_exp_avg_sq");
    const OptTensor m = exp_avgs[i], v = exp_avg_sqs[i];
    check_param(opt, i, params[i], grads[i], {&m, &v, &max_exp_avg_sqs[i]});
  }
  NoGradGuard no_grad;
  const std::vector<double> counts = increment_steps(steps);
  for (size_t i = 0; i < n; ++i) {
    const AdamArgs a{lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled, counts[i]};
    const Tensor max_sq = amsgrad ? value_or_undefined(max_exp_avg_sqs[i]) : Tensor();
    run_fused(
        params[i], grads[i], [&](auto... p) { detail::adam_fused(p..., a); }, exp_avgs[i], exp_avg_sqs[i], max_sq);
  }
}

void rmsprop(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& square_avgs, const std::vector<OptTensor>& grad_avgs,
             const std::vector<OptTensor>& bufs, std::vector<Tensor> steps, double lr, double alpha, double eps,
             double weight_decay, double momentum, bool centered, bool maximize) {
  const size_t n = params.size();
  check_lists("RMSprop", n, {grads.size(), square_avgs.size(), grad_avgs.size(), bufs.size(), steps.size()});
  check_steps("RMSprop", steps);
  for (size_t i = 0; i < n; ++i) {
    GRAFT_CHECK(!centered || grad_avgs[i].has_value(), ValueError, "RMSprop.step: centered needs grad_avg");
    GRAFT_CHECK(!(momentum > 0) || bufs[i].has_value(), ValueError, "RMSprop.step: momentum needs momentum_buffer");
    const OptTensor sq = square_avgs[i];
    check_param("RMSprop", i, params[i], grads[i], {&sq, &grad_avgs[i], &bufs[i]});
  }
  NoGradGuard no_grad;
  increment_steps(steps);
  const RmspropArgs a{lr, alpha, eps, weight_decay, momentum, centered, maximize};
  for (size_t i = 0; i < n; ++i) {
    const Tensor grad_avg = centered ? value_or_undefined(grad_avgs[i]) : Tensor();
    const Tensor buf = momentum > 0 ? value_or_undefined(bufs[i]) : Tensor();
    run_fused(
        params[i], grads[i], [&](auto... p) { detail::rmsprop_fused(p..., a); }, square_avgs[i], grad_avg, buf);
  }
}

void adagrad(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& sums,
             std::vector<Tensor> steps, double lr, double weight_decay, double lr_decay, double eps, bool maximize) {
  const size_t n = params.size();
  check_lists("Adagrad", n, {grads.size(), sums.size(), steps.size()});
  check_steps("Adagrad", steps);
  for (size_t i = 0; i < n; ++i) {
    const OptTensor s = sums[i];
    check_param("Adagrad", i, params[i], grads[i], {&s});
  }
  NoGradGuard no_grad;
  const std::vector<double> counts = increment_steps(steps);
  for (size_t i = 0; i < n; ++i) {
    const AdagradArgs a{lr / (1 + (counts[i] - 1) * lr_decay), weight_decay, eps, maximize};
    run_fused(
        params[i], grads[i], [&](auto... p) { detail::adagrad_fused(p..., a); }, sums[i]);
  }
}

Tensor zeros_state(const Tensor& param) { return detail::zeros_state(param); }
Tensor full_state(const Tensor& param, double value) { return detail::full_state(param, value); }
Tensor new_step(Device param_device) { return detail::new_step(param_device); }

}  // namespace graft::optim::functional
