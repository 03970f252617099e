"""The base of graft.optim's optimizers written in Python (Adadelta, Adamax, NAdam, RAdam, Rprop,
ASGD, LBFGS): their updates are PyTorch 2.x's single-tensor code paths, run with graft's tensor
ops under no_grad. graft's tensors have no ``addcmul_`` / ``addcdiv_`` / ``lerp_`` methods yet,
so the helpers below perform them with the elementwise order of PyTorch's CPU kernels."""
from .. import _C
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _optim


def addcmul_(t, a, b, value=1.0):
    """``t.addcmul_(a, b, value=value)``: t + (value * a) * b, in place."""
    return t.add_(a.mul(value).mul_(b))


def addcdiv_(t, a, b, value=1.0):
    """``t.addcdiv_(a, b, value=value)``: t + (value * a) / b, in place."""
    return t.add_(a.mul(value).div_(b))


def lerp_(t, end, weight):
    """``t.lerp_(end, weight)`` for a Python float weight, with PyTorch's two formulas
    (``t + w * (end - t)`` below 0.5, ``end - (end - t) * (1 - w)`` from 0.5 on)."""
    if abs(weight) < 0.5:
        return t.add_(end.sub(t).mul_(weight))
    return t.copy_(end.sub(end.sub(t).mul_(1.0 - weight)))


def scalar_state(value):
    """A 0-d float32 tensor holding ``value``, tagged as optimizer state: PyTorch's per-parameter
    scalars (``step``, NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``), kept on the CPU."""
    t = _optim.new_step()
    if value != 0:
        t.fill_(float(value))
    return t


def zeros_state(p):
    """A zero-filled state tensor shaped like ``p``."""
    return _optim.zeros_state(p)


def check_tensor_lr(lr):
    """PyTorch 2.x's refusal of a learning-rate tensor with more than one element."""
    if isinstance(lr, _C.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check_betas(betas):
    """Adam-style ``betas`` checks: each in [0, 1)."""
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def tensors_from_numbers(state, *names):
    """Replaces the Python numbers under ``names`` in a per-parameter state dict (as an older
    PyTorch saved them) by 0-d float32 tensors, as PyTorch 2.x's ``__setstate__`` does."""
    for name in names:
        value = state.get(name)
        if value is not None and not isinstance(value, _C.Tensor):
            state[name] = scalar_state(float(value))


class SingleTensorOptimizer(Optimizer):
    """An optimizer whose ``_update(group, params, grads)`` runs PyTorch's single-tensor update
    for one parameter group; ``step`` evaluates the closure, then updates every group under
    no_grad (``foreach`` is accepted and ignored: both PyTorch paths compute the same values)."""

    _tensor_step = True

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure()'s loss."""
        loss = self._closure_loss(closure)
        with no_grad():
            for group, params, grads in self._groups_to_step():
                self._update(group, params, grads)
        return loss

    def _update(self, group, params, grads):
        raise NotImplementedError
