"""graft.optim.RAdam: PyTorch 2.x's RAdam (rectified Adam; L2 or, with decoupled_weight_decay,
AdamW-style weight decay; maximize), updated in Python with graft's tensor ops (PyTorch's
single-tensor code path). PyTorch 1.13's RAdam has neither decoupled_weight_decay nor maximize;
its default path computes the same update."""
from ._single_tensor import SingleTensorOptimizer, addcmul_, check_betas, check_tensor_lr, lerp_, scalar_state, \
    zeros_state
from .optimizer import _check_nonnegative


class RAdam(SingleTensorOptimizer):
    """PyTorch's RAdam. State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_tensor_lr(lr)
        _check_nonnegative(("learning rate", lr), ("epsilon value", eps))
        check_betas(betas)
        _check_nonnegative(("weight_decay value", weight_decay))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "decoupled_weight_decay": False,
                       "capturable": False}

    def _update(self, group, params, grads):
        beta1, beta2 = (float(b) for b in group["betas"])
        lr, eps, weight_decay = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        # maximum length of the approximated SMA
        rho_inf = 2 / (1 - beta2) - 1
        for param, grad in zip(params, grads):
            state = self.state[param]
            if len(state) == 0:
                state["step"] = scalar_state(0)
                state["exp_avg"] = zeros_state(param)
                state["exp_avg_sq"] = zeros_state(param)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            if group["maximize"]:
                grad = grad.neg()
            step = state["step"].add_(1).item()
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    param.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            lerp_(exp_avg, grad, 1 - beta1)
            addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            bias_corrected_exp_avg = exp_avg.div(bias_correction1)
            # the length of the approximated SMA
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                # PyTorch's float / tensor is tensor.reciprocal() * float
                adaptive_lr = exp_avg_sq.sqrt().add_(eps).reciprocal_().mul_(bias_correction2 ** 0.5)
                param.add_(bias_corrected_exp_avg.mul_(lr).mul_(adaptive_lr).mul_(rect), alpha=-1.0)
            else:
                param.add_(bias_corrected_exp_avg.mul_(lr), alpha=-1.0)
