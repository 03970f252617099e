"""graft.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov momentum,
weight decay and maximize (PyTorch's formulas; the update runs in C++)."""
from .optimizer import Optimizer, _optim


class SGD(Optimizer):
    """PyTorch's SGD. With momentum 0 no per-parameter state is kept."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    _group_defaults = {"nesterov": False, "maximize": False, "foreach": None, "differentiable": False, "fused": False}

    def step(self, closure=None):
        """One SGD update of every parameter that has a gradient; returns closure()'s loss."""
        loss = self._closure_loss(closure)
        for group, params, grads in self._groups_to_step():
            momentum = float(group["momentum"])
            bufs = [self.state[p].get("momentum_buffer") for p in params] if momentum != 0 else [None] * len(params)
            bufs = _optim.sgd(params, grads, bufs, lr=float(group["lr"]), momentum=momentum,
                              dampening=float(group["dampening"]), weight_decay=float(group["weight_decay"]),
                              nesterov=bool(group["nesterov"]), maximize=bool(group["maximize"]))
            if momentum != 0:
                for p, buf in zip(params, bufs):
                    self.state[p]["momentum_buffer"] = buf
        return loss
