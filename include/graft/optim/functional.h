#pragma once
/// graft::optim::functional: one optimizer update over a list of parameters, their gradients
/// and their state tensors, as PyTorch's torch.optim._functional (sgd, adam, rmsprop, adagrad).
/// The Python optimizers (graft.optim) keep PyTorch's data structures and call these once per
/// parameter group; C++ code can use them to write its own optimizer. Every parameter is checked
/// first (a rejected call changes nothing); the updates then run the fused loops the C++
/// optimizers use, on the tensors themselves when they are contiguous and of the parameter's
/// dtype, else on copies written back. Version counters are bumped as in-place ops do. Meta
/// parameters take the same memory and no arithmetic (docs/notes/devices.md).
#include <optional>
#include <vector>

#include "graft/ops/ops.h"

namespace graft::optim::functional {

/// SGD over one group. `momentum_buffers[i]` empty: a new buffer is made (when momentum != 0).
/// Returns each parameter's buffer (undefined without momentum).
std::vector<Tensor> sgd(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        std::vector<std::optional<Tensor>> momentum_buffers, double lr, double momentum,
                        double dampening, double weight_decay, bool nesterov, bool maximize);
/// Adam (decoupled = false) or AdamW (decoupled = true) over one group; `state_steps` are the
/// 0-d step tensors, incremented here.
void adam(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
          const std::vector<Tensor>& exp_avg_sqs, const std::vector<std::optional<Tensor>>& max_exp_avg_sqs,
          std::vector<Tensor> state_steps, bool amsgrad, double beta1, double beta2, double lr, double weight_decay,
          double eps, bool maximize, bool decoupled);
/// RMSprop over one group (grad_avgs when centered, momentum_buffers when momentum > 0).
void rmsprop(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
             const std::vector<Tensor>& square_avgs, const std::vector<std::optional<Tensor>>& grad_avgs,
             const std::vector<std::optional<Tensor>>& momentum_buffers, std::vector<Tensor> state_steps, double lr,
             double alpha, double eps, double weight_decay, double momentum, bool centered, bool maximize);
/// Adagrad over one group.
void adagrad(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& state_sums,
             std::vector<Tensor> state_steps, double lr, double weight_decay, double lr_decay, double eps,
             bool maximize);

/// Zeros shaped like `param` (contiguous, its dtype and device), tagged optimizer_state.
Tensor zeros_state(const Tensor& param);
/// `value` shaped like `param`, tagged optimizer_state.
Tensor full_state(const Tensor& param, double value);
/// PyTorch's `step` state: a 0-d float32 zero on the CPU (on meta for meta parameters).
Tensor new_step(Device param_device = kCPU);

}  // namespace graft::optim::functional
