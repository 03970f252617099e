// The fused update loops (see fused_kernels.h). Options that only change arithmetic are
// selects inside the loop (so it stays one vectorizable pass); options that add buffers are
// template parameters (no null-pointer stores to predicate).
#include "fused_kernels.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace graft::optim::detail {
namespace {

template <class T>
inline T maximum(T a, T b) {  // torch.maximum: NaN propagates
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return a > b ? a : b;
}

// Calls f(std::bool_constant<b>{}) for a runtime bool.
template <class F>
inline void with_bool(bool b, F&& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

}  // namespace

template <class T>
void sgd_fused(T* param, const T* grad, T* buf, int64_t n, const SgdArgs& a) {
  const bool maximize = a.maximize, decay = a.weight_decay != 0, nesterov = a.nesterov;
  const T wd = static_cast<T>(a.weight_decay), mom = static_cast<T>(a.momentum);
  const T one_minus_damp = static_cast<T>(1 - a.dampening), neg_lr = static_cast<T>(-a.lr);
  auto run = [&](auto has_momentum, auto first) {
    for (int64_t i = 0; i < n; ++i) {
      T g = maximize ? static_cast<T>(-grad[i]) : grad[i];
      const T p = param[i];
      g = decay ? static_cast<T>(g + wd * p) : g;  // grad.add(param, alpha=weight_decay)
      if constexpr (decltype(has_momentum)::value) {
        T b;
        if constexpr (decltype(first)::value) {
          b = g;  // clone(grad): no dampening on the first step
        } else {
          b = static_cast<T>(buf[i] * mom);            // buf.mul_(momentum)
          b = static_cast<T>(b + one_minus_damp * g);  // .add_(grad, alpha=1 - dampening)
        }
        buf[i] = b;
        g = nesterov ? static_cast<T>(g + mom * b) : b;  // grad.add(buf, alpha=momentum) or buf
      }
      param[i] = static_cast<T>(p + neg_lr * g);  // param.add_(grad, alpha=-lr)
    }
  };
  with_bool(a.momentum != 0,
            [&](auto has_momentum) { with_bool(a.first_step, [&](auto first) { run(has_momentum, first); }); });
}

template <class T>
void adam_fused(T* param, const T* grad, T* exp_avg, T* exp_avg_sq, T* max_exp_avg_sq, int64_t n, const AdamArgs& a) {
  const bool maximize = a.maximize, l2 = !a.decoupled && a.weight_decay != 0, decoupled = a.decoupled;
  const T wd = static_cast<T>(a.weight_decay);
  const T decay_factor = static_cast<T>(1 - a.lr * a.weight_decay);  // param.mul_(1 - lr * weight_decay)
  const T w1 = static_cast<T>(1 - a.beta1), beta2 = static_cast<T>(a.beta2), w2 = static_cast<T>(1 - a.beta2);
  const double bias_correction1 = 1 - std::pow(a.beta1, a.step);
  const double bias_correction2 = 1 - std::pow(a.beta2, a.step);
  const T neg_step_size = static_cast<T>(-(a.lr / bias_correction1));
  const T bc2_sqrt = static_cast<T>(std::sqrt(bias_correction2));
  const T eps = static_cast<T>(a.eps);
  auto run = [&](auto amsgrad) {
    for (int64_t i = 0; i < n; ++i) {
      T g = maximize ? static_cast<T>(-grad[i]) : grad[i];
      T p = param[i];
      g = l2 ? static_cast<T>(g + wd * p) : g;               // grad.add(param, alpha=weight_decay)
      p = decoupled ? static_cast<T>(p * decay_factor) : p;  // AdamW
      const T m = lerp(exp_avg[i], g, w1);                   // exp_avg.lerp_(grad, 1 - beta1)
      T v = static_cast<T>(exp_avg_sq[i] * beta2);           // exp_avg_sq.mul_(beta2)
      v = static_cast<T>(v + static_cast<T>(w2 * g) * g);    // .addcmul_(grad, grad, value=1 - beta2)
      exp_avg[i] = m;
      exp_avg_sq[i] = v;
      T s = v;
      if constexpr (decltype(amsgrad)::value) {
        s = maximum(max_exp_avg_sq[i], v);  // torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        max_exp_avg_sq[i] = s;
      }
      const T denom = static_cast<T>(static_cast<T>(std::sqrt(s) / bc2_sqrt) + eps);  // (sqrt / bc2_sqrt).add_(eps)
      param[i] = static_cast<T>(p + static_cast<T>(neg_step_size * m) / denom);       // addcdiv_(value=-step_size)
    }
  };
  with_bool(a.amsgrad, run);
}

template <class T>
void rmsprop_fused(T* param, const T* grad, T* square_avg, T* grad_avg, T* buf, int64_t n, const RmspropArgs& a) {
  const bool maximize = a.maximize, decay = a.weight_decay != 0;
  const T wd = static_cast<T>(a.weight_decay), alpha = static_cast<T>(a.alpha), w = static_cast<T>(1 - a.alpha);
  const T eps = static_cast<T>(a.eps), mom = static_cast<T>(a.momentum), neg_lr = static_cast<T>(-a.lr);
  auto run = [&](auto centered, auto has_momentum) {
    for (int64_t i = 0; i < n; ++i) {
      T g = maximize ? static_cast<T>(-grad[i]) : grad[i];
      const T p = param[i];
      g = decay ? static_cast<T>(g + wd * p) : g;
      T sq = static_cast<T>(square_avg[i] * alpha);         // square_avg.mul_(alpha)
      sq = static_cast<T>(sq + static_cast<T>(w * g) * g);  // .addcmul_(grad, grad, value=1 - alpha)
      square_avg[i] = sq;
      T avg;
      if constexpr (decltype(centered)::value) {
        const T ga = lerp(grad_avg[i], g, w);  // grad_avg.lerp_(grad, 1 - alpha)
        grad_avg[i] = ga;
        avg = std::sqrt(static_cast<T>(sq - ga * ga));  // square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
      } else {
        avg = std::sqrt(sq);
      }
      avg = static_cast<T>(avg + eps);  // avg.add_(eps)
      if constexpr (decltype(has_momentum)::value) {
        T b = static_cast<T>(buf[i] * mom);  // buf.mul_(momentum)
        b = static_cast<T>(b + g / avg);     // .addcdiv_(grad, avg)
        buf[i] = b;
        param[i] = static_cast<T>(p + neg_lr * b);  // param.add_(buf, alpha=-lr)
      } else {
        param[i] = static_cast<T>(p + static_cast<T>(neg_lr * g) / avg);  // param.addcdiv_(grad, avg, value=-lr)
      }
    }
  };
  with_bool(a.centered,
            [&](auto centered) { with_bool(a.momentum > 0, [&](auto has_momentum) { run(centered, has_momentum); }); });
}

template <class T>
void adagrad_fused(T* param, const T* grad, T* sum, int64_t n, const AdagradArgs& a) {
  const bool maximize = a.maximize, decay = a.weight_decay != 0;
  const T wd = static_cast<T>(a.weight_decay), eps = static_cast<T>(a.eps), neg_clr = static_cast<T>(-a.clr);
  for (int64_t i = 0; i < n; ++i) {
    T g = maximize ? static_cast<T>(-grad[i]) : grad[i];
    const T p = param[i];
    g = decay ? static_cast<T>(g + wd * p) : g;
    const T s = static_cast<T>(sum[i] + g * g);  // state_sum.addcmul_(grad, grad, value=1)
    sum[i] = s;
    const T std_ = static_cast<T>(std::sqrt(s) + eps);                  // state_sum.sqrt().add_(eps)
    param[i] = static_cast<T>(p + static_cast<T>(neg_clr * g) / std_);  // param.addcdiv_(grad, std, value=-clr)
  }
}

template void sgd_fused<float>(float*, const float*, float*, int64_t, const SgdArgs&);
template void sgd_fused<double>(double*, const double*, double*, int64_t, const SgdArgs&);
template void adam_fused<float>(float*, const float*, float*, float*, float*, int64_t, const AdamArgs&);
template void adam_fused<double>(double*, const double*, double*, double*, double*, int64_t, const AdamArgs&);
template void rmsprop_fused<float>(float*, const float*, float*, float*, float*, int64_t, const RmspropArgs&);
template void rmsprop_fused<double>(double*, const double*, double*, double*, double*, int64_t, const RmspropArgs&);
template void adagrad_fused<float>(float*, const float*, float*, int64_t, const AdagradArgs&);
template void adagrad_fused<double>(double*, const double*, double*, int64_t, const AdagradArgs&);

}  // namespace graft::optim::detail
