"""graft.optim.Rprop: PyTorch 2.x's resilient backpropagation (etas, step-size bounds, maximize),
updated in Python with graft's tensor ops (PyTorch's single-tensor code path)."""
from ._single_tensor import SingleTensorOptimizer, addcmul_, check_tensor_lr, scalar_state, zeros_state
from .optimizer import _check_nonnegative, _optim


class Rprop(SingleTensorOptimizer):
    """PyTorch's Rprop. State per parameter: ``step``, ``prev`` (the last gradient used) and
    ``step_size`` (per element, starting at the group's lr)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_tensor_lr(lr)
        _check_nonnegative(("learning rate", lr))
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def _update(self, group, params, grads):
        etaminus, etaplus = (float(e) for e in group["etas"])
        step_size_min, step_size_max = group["step_sizes"]
        for param, grad in zip(params, grads):
            state = self.state[param]
            if len(state) == 0:
                state["step"] = scalar_state(0)
                state["prev"] = zeros_state(param)
                state["step_size"] = _optim.full_state(param, float(group["lr"]))
            prev, step_size = state["prev"], state["step_size"]
            if group["maximize"]:
                grad = grad.neg()
            state["step"].add_(1)
            sign = grad.mul(prev).sign()
            sign[sign.gt(0)] = etaplus
            sign[sign.lt(0)] = etaminus
            sign[sign.eq(0)] = 1
            # update the step sizes with the step-size factors
            step_size.mul_(sign).clamp_(step_size_min, step_size_max)
            # where the gradient changed sign, no step and the next step sees no sign change
            grad = grad.clone()
            grad[sign.eq(etaminus)] = 0
            addcmul_(param, grad.sign(), step_size, value=-1)
            prev.copy_(grad)
