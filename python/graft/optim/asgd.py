"""graft.optim.ASGD: PyTorch 2.x's averaged stochastic gradient descent (lambd, alpha, t0, weight
decay, maximize), updated in Python with graft's tensor ops (PyTorch's single-tensor code path)."""
from ._single_tensor import SingleTensorOptimizer, check_tensor_lr, scalar_state, tensors_from_numbers, zeros_state
from .optimizer import _check_nonnegative


class ASGD(SingleTensorOptimizer):
    """PyTorch's ASGD. State per parameter: ``step``, ``eta`` (the current step size), ``mu`` (the
    averaging weight) as 0-d float32 tensors, and ``ax`` (the averaged parameter)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_tensor_lr(lr)
        _check_nonnegative(("learning rate", lr), ("weight_decay value", weight_decay))
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def __setstate__(self, state):
        super().__setstate__(state)
        for s in self.state.values():
            tensors_from_numbers(s, "eta", "mu")

    def _update(self, group, params, grads):
        lr, lambd, alpha = float(group["lr"]), float(group["lambd"]), float(group["alpha"])
        t0, weight_decay = float(group["t0"]), float(group["weight_decay"])
        for param, grad in zip(params, grads):
            state = self.state[param]
            if len(state) == 0:
                state["step"] = scalar_state(0)
                state["eta"] = scalar_state(lr)
                state["mu"] = scalar_state(1)
                state["ax"] = zeros_state(param)
            eta, mu, ax = state["eta"], state["mu"], state["ax"]
            if group["maximize"]:
                grad = grad.neg()
            step = state["step"].add_(1).item()
            if weight_decay != 0:
                grad = grad.add(param, alpha=weight_decay)
            eta_value = eta.item()
            param.mul_(1 - lambd * eta_value)  # decay term
            param.add_(grad, alpha=-eta_value)  # update parameter
            # averaging
            if mu.item() != 1:
                ax.add_(param.sub(ax).mul_(mu))
            else:
                ax.copy_(param)
            eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
            mu.fill_(1 / max(1, step - t0))
