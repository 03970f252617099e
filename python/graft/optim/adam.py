"""graft.optim.Adam and AdamW: Adam with L2 weight decay, AdamW with decoupled weight decay,
both with amsgrad and maximize (PyTorch's formulas; the update runs in C++)."""
from .optimizer import Optimizer, _check_nonnegative, _optim
from .. import _C


def _check_adam_args(lr, eps, betas, weight_decay):
    if isinstance(lr, _C.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check_nonnegative(("learning rate", lr), ("epsilon value", eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    _check_nonnegative(("weight_decay value", weight_decay))


class Adam(Optimizer):
    """PyTorch's Adam (weight decay added to the gradient)."""

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    _group_defaults = {"amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                       "differentiable": False, "fused": None}
    _tensor_step = True

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure()'s loss."""
        loss = self._closure_loss(closure)
        for group, params, grads in self._groups_to_step():
            amsgrad = bool(group["amsgrad"])
            exp_avgs, exp_avg_sqs, max_sqs, steps = self._state_lists(params, ("exp_avg", "exp_avg_sq"),
                                                                      max_exp_avg_sq=amsgrad)
            beta1, beta2 = group["betas"]
            _optim.adam(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, amsgrad=amsgrad, beta1=float(beta1),
                        beta2=float(beta2), lr=float(group["lr"]), weight_decay=float(group["weight_decay"]),
                        eps=float(group["eps"]), maximize=bool(group["maximize"]), decoupled=self._decoupled)
        return loss


class AdamW(Adam):
    """PyTorch's AdamW: the weight decay shrinks the parameter (p *= 1 - lr * weight_decay)."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused)
