"""gradcheck / gradgradcheck (torch.autograd.gradcheck): analytical gradients (the engine)
against central finite differences, computed by graft's C++ graft::autograd::gradcheck. Use
float64 inputs; float32 ones warn, as PyTorch does."""
from .. import _C

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when the check fails."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _check_supported(**flags):
    for name, (value, supported) in flags.items():
        if value != supported:
            raise NotImplementedError(f"graft.autograd.gradcheck: {name}={value!r} is not supported")


def _result(message, raise_exception):
    if message is None:
        return True
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Checks the gradients of ``func(*inputs)`` with respect to the inputs that require grad.
    Returns True, or raises GradcheckError (returns False with ``raise_exception=False``).
    Non-tensor entries of ``inputs`` are passed through unchanged. The undefined-gradient check
    (``check_undefined_grad``) is not run."""
    _check_supported(check_grad_dtypes=(check_grad_dtypes, False), check_batched_grad=(check_batched_grad, False),
                     check_batched_forward_grad=(check_batched_forward_grad, False),
                     check_forward_ad=(check_forward_ad, False), check_backward_ad=(check_backward_ad, True),
                     masked=(masked, None))
    message = _C._gradcheck(func, _as_tuple(inputs), eps, atol, rtol, fast_mode, nondet_tol)
    return _result(message, raise_exception)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False):
    """Checks second derivatives: gradcheck of ``(inputs, grad_outputs) -> grad(func(inputs),
    inputs, grad_outputs, create_graph=True)``. Random ``grad_outputs`` in [-1, 1] are drawn when
    none are given; ``gen_non_contig_grad_outputs`` is ignored."""
    _check_supported(check_grad_dtypes=(check_grad_dtypes, False), check_batched_grad=(check_batched_grad, False),
                     check_fwd_over_rev=(check_fwd_over_rev, False), check_rev_over_rev=(check_rev_over_rev, True),
                     masked=(bool(masked), False))
    if grad_outputs is not None:
        grad_outputs = _as_tuple(grad_outputs)
    message = _C._gradgradcheck(func, _as_tuple(inputs), grad_outputs, eps, atol, rtol, fast_mode, nondet_tol)
    return _result(message, raise_exception)


gradcheck.GradcheckError = GradcheckError
