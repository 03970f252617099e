#pragma once
// Fused update loops for contiguous float32/float64 parameters: one pass over the elements per
// step, no temporaries. Each loop performs the operations of PyTorch's single-tensor
// implementation in the same order, rounding to T after each as the tensor ops would (scalars
// are converted to T once, as PyTorch converts a Python float for a float32 tensor). The
// fallback paths (tensor ops, any layout) in the optimizer files give the same numbers.
#include <cstdint>

namespace graft::optim::detail {

/// PyTorch's lerp: self + w * (end - self) for |w| < 0.5, else end - (end - self) * (1 - w).
template <class T>
inline T lerp(T self, T end, T w) {
  return (w < T(0.5) && w > T(-0.5)) ? static_cast<T>(self + w * (end - self))
                                     : static_cast<T>(end - (end - self) * (T(1) - w));
}

struct SgdArgs {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize;
  bool first_step;  ///< the momentum buffer is new: it becomes a copy of the gradient
};
/// buf may be null when momentum == 0.
template <class T>
void sgd_fused(T* param, const T* grad, T* buf, int64_t n, const SgdArgs& a);

struct AdamArgs {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize, decoupled;  ///< decoupled: AdamW's weight decay
  double step;                        ///< the step count after this step's increment
};
/// max_exp_avg_sq may be null unless amsgrad.
template <class T>
void adam_fused(T* param, const T* grad, T* exp_avg, T* exp_avg_sq, T* max_exp_avg_sq, int64_t n, const AdamArgs& a);

struct RmspropArgs {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered, maximize;
};
/// grad_avg null unless centered; buf null unless momentum > 0.
template <class T>
void rmsprop_fused(T* param, const T* grad, T* square_avg, T* grad_avg, T* buf, int64_t n, const RmspropArgs& a);

struct AdagradArgs {
  double clr, weight_decay, eps;  ///< clr: lr / (1 + (step - 1) * lr_decay)
  bool maximize;
};
template <class T>
void adagrad_fused(T* param, const T* grad, T* sum, int64_t n, const AdagradArgs& a);

}  // namespace graft::optim::detail
