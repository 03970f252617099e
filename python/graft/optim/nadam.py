"""graft.optim.NAdam: PyTorch 2.x's NAdam (Adam with Nesterov momentum and momentum decay;
L2 or, with decoupled_weight_decay, AdamW-style weight decay; maximize), updated in Python
with graft's tensor ops (PyTorch's single-tensor code path).

PyTorch 1.13's NAdam differs: it has neither decoupled_weight_decay nor maximize, and its
second step-size term divides by ``1 - mu_product * mu * mu_next`` (an extra ``mu``, fixed in
2.0); graft follows 2.x."""
from ._single_tensor import (SingleTensorOptimizer, addcdiv_, addcmul_, check_betas, check_tensor_lr, lerp_,
                             scalar_state, tensors_from_numbers, zeros_state)
from .optimizer import _check_nonnegative


class NAdam(SingleTensorOptimizer):
    """PyTorch's NAdam. State per parameter: ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_tensor_lr(lr)
        _check_nonnegative(("learning rate", lr), ("epsilon value", eps))
        check_betas(betas)
        _check_nonnegative(("weight_decay value", weight_decay), ("momentum_decay value", momentum_decay))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    _group_defaults = {"maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                       "decoupled_weight_decay": False}

    def __setstate__(self, state):
        super().__setstate__(state)
        for s in self.state.values():
            tensors_from_numbers(s, "mu_product")

    def _update(self, group, params, grads):
        beta1, beta2 = (float(b) for b in group["betas"])
        lr, eps, weight_decay = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        momentum_decay = float(group["momentum_decay"])
        for param, grad in zip(params, grads):
            state = self.state[param]
            if len(state) == 0:
                state["step"] = scalar_state(0)
                state["mu_product"] = scalar_state(1)
                state["exp_avg"] = zeros_state(param)
                state["exp_avg_sq"] = zeros_state(param)
            exp_avg, exp_avg_sq, mu_product = state["exp_avg"], state["exp_avg_sq"], state["mu_product"]
            if group["maximize"]:
                grad = grad.neg()
            step = state["step"].add_(1).item()
            bias_correction2 = 1 - beta2 ** step
            if weight_decay != 0:
                if group["decoupled_weight_decay"]:
                    param.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(param, alpha=weight_decay)
            # the momentum cache mu^t and mu^(t+1)
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
            mu_product.mul_(mu)
            lerp_(exp_avg, grad, 1 - beta1)
            addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
            denom = exp_avg_sq.div(bias_correction2).sqrt()
            mu_product_value = mu_product.item()
            mu_product_next = mu_product_value * mu_next
            denom.add_(eps)
            addcdiv_(param, grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_value)))
            addcdiv_(param, exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
