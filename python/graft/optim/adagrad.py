"""graft.optim.Adagrad: Adagrad with lr_decay, weight decay, initial_accumulator_value, eps and
maximize (PyTorch's formulas; the update runs in C++)."""
from .optimizer import Optimizer, _check_nonnegative, _optim


class Adagrad(Optimizer):
    """PyTorch's Adagrad. As PyTorch's, the state (step, sum) of every parameter given to the
    constructor is created there, with the constructor's initial_accumulator_value."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_nonnegative(("learning rate", lr), ("lr_decay value", lr_decay), ("weight_decay value", weight_decay),
                           ("initial_accumulator_value value", initial_accumulator_value), ("epsilon value", eps))
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def _init_state(self, p, initial_accumulator_value):
        """p's state as PyTorch's Adagrad makes it: a step and a sum filled with the value."""
        state = self.state[p]
        state["step"] = _optim.new_step(p.device)
        state["sum"] = _optim.full_state(p, float(initial_accumulator_value))

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}
    _tensor_step = True

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure()'s loss."""
        loss = self._closure_loss(closure)
        for group, params, grads in self._groups_to_step():
            sums, steps = [], []
            for p in params:
                state = self.state[p]
                if "sum" not in state:  # a parameter added with add_param_group after construction
                    self._init_state(p, group["initial_accumulator_value"])
                sums.append(state["sum"])
                steps.append(state["step"])
            _optim.adagrad(params, grads, sums, steps, lr=float(group["lr"]),
                           weight_decay=float(group["weight_decay"]), lr_decay=float(group["lr_decay"]),
                           eps=float(group["eps"]), maximize=bool(group["maximize"]))
        return loss
