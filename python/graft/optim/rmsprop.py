"""graft.optim.RMSprop: RMSprop with alpha, eps, weight decay, momentum, centered and maximize
(PyTorch's formulas; the update runs in C++)."""
from .optimizer import Optimizer, _check_nonnegative, _optim


class RMSprop(Optimizer):
    """PyTorch's RMSprop."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_nonnegative(("learning rate", lr), ("epsilon value", eps), ("momentum value", momentum),
                           ("weight_decay value", weight_decay), ("alpha value", alpha))
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    _group_defaults = {"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                       "differentiable": False, "capturable": False}
    _tensor_step = True

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure()'s loss."""
        loss = self._closure_loss(closure)
        for group, params, grads in self._groups_to_step():
            momentum = float(group["momentum"])
            centered = bool(group["centered"])
            square_avgs, bufs, grad_avgs, steps = self._state_lists(params, ("square_avg",),
                                                                    momentum_buffer=momentum > 0, grad_avg=centered)
            _optim.rmsprop(params, grads, square_avgs, grad_avgs, bufs, steps, lr=float(group["lr"]),
                           alpha=float(group["alpha"]), eps=float(group["eps"]),
                           weight_decay=float(group["weight_decay"]), momentum=momentum, centered=centered,
                           maximize=bool(group["maximize"]))
        return loss
