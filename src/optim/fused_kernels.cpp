// The fused update loops (see fused_kernels.h). Each update is written once as a body over a
// "lane" type L: T itself, or a 16-byte vector of T (GCC vector extension) where SSE2 is
// available. Vector lanes perform the same IEEE operations as scalar code (sqrtps/divps are
// correctly rounded like sqrtss/divss), so both give the scalar loop's bits; the vector form
// exists because GCC will not vectorize std::sqrt while it may set errno.
#include "fused_kernels.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace graft::optim::detail {
namespace {

#if defined(__SSE2__)
typedef float f32x4 __attribute__((vector_size(16)));
typedef double f64x2 __attribute__((vector_size(16)));
template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  using type = f32x4;
};
template <>
struct VecOf<double> {
  using type = f64x2;
};
inline f32x4 lane_sqrt(f32x4 x) { return reinterpret_cast<f32x4>(_mm_sqrt_ps(reinterpret_cast<__m128>(x))); }
inline f64x2 lane_sqrt(f64x2 x) { return reinterpret_cast<f64x2>(_mm_sqrt_pd(reinterpret_cast<__m128d>(x))); }
#endif
inline float lane_sqrt(float x) { return std::sqrt(x); }
inline double lane_sqrt(double x) { return std::sqrt(x); }

template <class L, class T>
inline L load(const T* p) {
  L v;
  std::memcpy(&v, p, sizeof(L));
  return v;
}
template <class T, class L>
inline void store(T* p, const L& v) {
  std::memcpy(p, &v, sizeof(L));
}

/// torch.maximum: NaN propagates.
template <class T, class L>
inline L lane_maximum(L a, L b) {
  if constexpr (std::is_floating_point_v<L>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    return a > b ? a : b;
  } else {
    const auto nan = (a != a) | (b != b);
    const L larger = a > b ? a : b;
    return nan ? L{} + std::numeric_limits<T>::quiet_NaN() : larger;
  }
}

/// PyTorch's lerp with the branch chosen once for the (scalar) weight.
template <class T, class L>
inline L lane_lerp(L self, L end, T w, bool small_weight) {
  return small_weight ? L(self + w * (end - self)) : L(end - (end - self) * (T(1) - w));
}

/// The update's gradient at lane i: -grad when maximizing, + weight_decay * param when `l2`
/// (grad.add(param, alpha=weight_decay)), with the parameter it read.
template <class L, class T>
inline std::pair<L, L> load_grad(const T* grad, const T* param, int64_t i, bool maximize, bool l2, T wd) {
  L g = load<L>(grad + i);
  if (maximize) g = -g;
  const L p = load<L>(param + i);
  if (l2) g = g + wd * p;
  return {g, p};
}

/// Calls body(L{}, i) for every element: 16-byte vectors first, then scalars for the tail.
template <class T, class Body>
inline void for_lanes(int64_t n, Body&& body) {
  int64_t i = 0;
#if defined(__SSE2__)
  using V = typename VecOf<T>::type;
  constexpr int64_t kWidth = sizeof(V) / sizeof(T);
  for (; i + kWidth <= n; i += kWidth) body(V{}, i);
#endif
  for (; i < n; ++i) body(T{}, i);
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
    for_lanes<T>(n, [&](auto lane, int64_t i) {
      using L = decltype(lane);
      auto [g, p] = load_grad<L>(grad, param, i, maximize, decay, wd);
      if constexpr (decltype(has_momentum)::value) {
        L b;
        if constexpr (decltype(first)::value) {
          b = g;  // clone(grad): no dampening on the first step
        } else {
          b = load<L>(buf + i) * mom;  // buf.mul_(momentum)
          b = b + one_minus_damp * g;  // .add_(grad, alpha=1 - dampening)
        }
        store(buf + i, b);
        g = nesterov ? L(g + mom * b) : b;  // grad.add(buf, alpha=momentum) or buf
      }
      store(param + i, L(p + neg_lr * g));  // param.add_(grad, alpha=-lr)
    });
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
  const bool small_w1 = w1 < T(0.5) && w1 > T(-0.5);
  const double bias_correction1 = 1 - std::pow(a.beta1, a.step);
  const double bias_correction2 = 1 - std::pow(a.beta2, a.step);
  const T neg_step_size = static_cast<T>(-(a.lr / bias_correction1));
  const T bc2_sqrt = static_cast<T>(std::sqrt(bias_correction2));
  const T eps = static_cast<T>(a.eps);
  auto run = [&](auto amsgrad) {
    for_lanes<T>(n, [&](auto lane, int64_t i) {
      using L = decltype(lane);
      auto [g, p] = load_grad<L>(grad, param, i, maximize, l2, wd);
      if (decoupled) p = p * decay_factor;                           // AdamW
      const L m = lane_lerp(load<L>(exp_avg + i), g, w1, small_w1);  // exp_avg.lerp_(grad, 1 - beta1)
      L v = load<L>(exp_avg_sq + i) * beta2;                         // exp_avg_sq.mul_(beta2)
      v = v + (w2 * g) * g;                                          // .addcmul_(grad, grad, value=1 - beta2)
      store(exp_avg + i, m);
      store(exp_avg_sq + i, v);
      L s = v;
      if constexpr (decltype(amsgrad)::value) {
        s = lane_maximum<T>(load<L>(max_exp_avg_sq + i), v);  // torch.maximum(..., out=max_exp_avg_sq)
        store(max_exp_avg_sq + i, s);
      }
      const L denom = lane_sqrt(s) / bc2_sqrt + eps;         // (sqrt() / bias_correction2_sqrt).add_(eps)
      store(param + i, L(p + (neg_step_size * m) / denom));  // param.addcdiv_(exp_avg, denom, value=-step_size)
    });
  };
  with_bool(a.amsgrad, run);
}

template <class T>
void rmsprop_fused(T* param, const T* grad, T* square_avg, T* grad_avg, T* buf, int64_t n, const RmspropArgs& a) {
  const bool maximize = a.maximize, decay = a.weight_decay != 0;
  const T wd = static_cast<T>(a.weight_decay), alpha = static_cast<T>(a.alpha), w = static_cast<T>(1 - a.alpha);
  const bool small_w = w < T(0.5) && w > T(-0.5);
  const T eps = static_cast<T>(a.eps), mom = static_cast<T>(a.momentum), neg_lr = static_cast<T>(-a.lr);
  auto run = [&](auto centered, auto has_momentum) {
    for_lanes<T>(n, [&](auto lane, int64_t i) {
      using L = decltype(lane);
      const auto [g, p] = load_grad<L>(grad, param, i, maximize, decay, wd);
      L sq = load<L>(square_avg + i) * alpha;  // square_avg.mul_(alpha)
      sq = sq + (w * g) * g;                   // .addcmul_(grad, grad, value=1 - alpha)
      store(square_avg + i, sq);
      L avg;
      if constexpr (decltype(centered)::value) {
        const L ga = lane_lerp(load<L>(grad_avg + i), g, w, small_w);  // grad_avg.lerp_(grad, 1 - alpha)
        store(grad_avg + i, ga);
        avg = lane_sqrt(L(sq - ga * ga));  // square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
      } else {
        avg = lane_sqrt(sq);
      }
      avg = avg + eps;  // avg.add_(eps)
      if constexpr (decltype(has_momentum)::value) {
        L b = load<L>(buf + i) * mom;  // buf.mul_(momentum)
        b = b + g / avg;               // .addcdiv_(grad, avg)
        store(buf + i, b);
        store(param + i, L(p + neg_lr * b));  // param.add_(buf, alpha=-lr)
      } else {
        store(param + i, L(p + (neg_lr * g) / avg));  // param.addcdiv_(grad, avg, value=-lr)
      }
    });
  };
  with_bool(a.centered,
            [&](auto centered) { with_bool(a.momentum > 0, [&](auto has_momentum) { run(centered, has_momentum); }); });
}

template <class T>
void adagrad_fused(T* param, const T* grad, T* sum, int64_t n, const AdagradArgs& a) {
  const bool maximize = a.maximize, decay = a.weight_decay != 0;
  const T wd = static_cast<T>(a.weight_decay), eps = static_cast<T>(a.eps), neg_clr = static_cast<T>(-a.clr);
  for_lanes<T>(n, [&](auto lane, int64_t i) {
    using L = decltype(lane);
    const auto [g, p] = load_grad<L>(grad, param, i, maximize, decay, wd);
    const L s = load<L>(sum + i) + g * g;  // state_sum.addcmul_(grad, grad, value=1)
    store(sum + i, s);
    const L std_ = lane_sqrt(s) + eps;              // state_sum.sqrt().add_(eps)
    store(param + i, L(p + (neg_clr * g) / std_));  // param.addcdiv_(grad, std, value=-clr)
  });
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
