"""graft.optim.Adadelta: PyTorch 2.x's Adadelta (rho, eps, weight decay, maximize), updated in
Python with graft's tensor ops (PyTorch's single-tensor code path)."""
from ._single_tensor import SingleTensorOptimizer, addcmul_, check_tensor_lr, scalar_state, zeros_state
from .optimizer import _check_nonnegative


class Adadelta(SingleTensorOptimizer):
    """PyTorch's Adadelta. State per parameter: ``step``, ``square_avg``, ``acc_delta``."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_tensor_lr(lr)
        _check_nonnegative(("learning rate", lr))
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_nonnegative(("epsilon value", eps), ("weight_decay value", weight_decay))
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def _update(self, group, params, grads):
        lr, rho, eps = float(group["lr"]), float(group["rho"]), float(group["eps"])
        weight_decay = float(group["weight_decay"])
        for param, grad in zip(params, grads):
            state = self.state[param]
            if len(state) == 0:
                state["step"] = scalar_state(0)
                state["square_avg"] = zeros_state(param)
                state["acc_delta"] = zeros_state(param)
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            state["step"].add_(1)
            if group["maximize"]:
                grad = grad.neg()
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            addcmul_(square_avg.mul_(rho), grad, grad, value=1 - rho)
            std = square_avg.add(eps).sqrt_()
            delta = acc_delta.add(eps).sqrt_()
            delta.div_(std).mul_(grad)
            addcmul_(acc_delta.mul_(rho), delta, delta, value=1 - rho)
            param.add_(delta, alpha=-lr)
