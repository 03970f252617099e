"""clip_grad_norm_ and clip_grad_value_ (C++: graft::nn::utils), as torch.nn.utils."""
from ... import _C

_impl = _C._nn.utils


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients of ``parameters`` (a tensor or an iterable of tensors) in place so
    that their total ``norm_type``-norm is at most ``max_norm``; returns the total norm before
    clipping as a 0-d tensor. Parameters without a gradient are skipped. With
    error_if_nonfinite, a NaN/inf total norm raises and leaves the gradients unchanged."""
    if not isinstance(parameters, _C.Tensor):
        parameters = list(parameters)
    return _impl.clip_grad_norm_(parameters, float(max_norm), float(norm_type), error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient element of ``parameters`` into [-clip_value, clip_value]."""
    if not isinstance(parameters, _C.Tensor):
        parameters = list(parameters)
    _impl.clip_grad_value_(parameters, float(clip_value), foreach)
