"""graft.optim.Adamax: PyTorch 2.x's Adamax (Adam over the infinity norm) with weight decay and
maximize, updated in Python with graft's tensor ops (PyTorch's single-tensor code path)."""
from ._single_tensor import SingleTensorOptimizer, addcdiv_, check_betas, lerp_, scalar_state, zeros_state
from .optimizer import _check_nonnegative


class Adamax(SingleTensorOptimizer):
    """PyTorch's Adamax. State per parameter: ``step``, ``exp_avg``, ``exp_inf``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_nonnegative(("learning rate", lr), ("epsilon value", eps))
        check_betas(betas)
        _check_nonnegative(("weight_decay value", weight_decay))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def _update(self, group, params, grads):
        beta1, beta2 = (float(b) for b in group["betas"])
        lr, eps, weight_decay = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        for param, grad in zip(params, grads):
            state = self.state[param]
            if len(state) == 0:
                state["step"] = scalar_state(0)
                state["exp_avg"] = zeros_state(param)
                state["exp_inf"] = zeros_state(param)
            exp_avg, exp_inf, step_t = state["exp_avg"], state["exp_inf"], state["step"]
            if group["maximize"]:
                grad = grad.neg()
            step_t.add_(1)
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            lerp_(exp_avg, grad, 1 - beta1)
            exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(eps)))
            bias_correction = 1 - beta1 ** step_t.item()
            addcdiv_(param, exp_avg, exp_inf, value=-(lr / bias_correction))
