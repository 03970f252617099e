"""The two in-place tensor operations behind graft.amp.GradScaler.

``_non_finite_check_and_unscale_`` multiplies gradients by the inverse scale and flags inf/nan;
``_update_scale_`` moves the loss scale and its growth tracker one step along the dynamic
loss-scaling schedule. Both have the semantics of PyTorch's CPU kernels
``torch._amp_foreach_non_finite_check_and_unscale_`` and ``torch._amp_update_scale_``.
"""
from .. import _C


def _non_finite_check_and_unscale_(grads, found_inf, inv_scale):
    """Multiply every tensor of ``grads`` in place by the 1-element ``inv_scale`` and set the
    1-element ``found_inf`` to 1.0 when any of them holds an inf or a nan.

    The product is taken in each gradient's own dtype (float32 gradients: float32 times float32).
    An ``inv_scale`` of exactly 1.0 leaves the gradients untouched and only checks them.
    """
    unscale = inv_scale.item() != 1.0
    for grad in grads:
        if not _C.isfinite(grad).all().item():
            found_inf.fill_(1.0)
        if unscale:
            grad.mul_(inv_scale)


def _update_scale_(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """Advance the dynamic loss scale in place and return ``scale``.

    With ``found_inf`` non-zero the scale is multiplied by ``backoff_factor`` and the count of
    successful steps (``growth_tracker``) goes back to 0. Otherwise the count goes up by one; when it
    reaches ``growth_interval`` the scale is multiplied by ``growth_factor`` (kept only if the
    float32 result is finite) and the count goes back to 0. Products are formed in float64 and
    rounded to float32, as a float32 scale times a double factor is.
    """
    if found_inf.item():
        scale.copy_(scale.double().mul_(backoff_factor).float())
        growth_tracker.fill_(0)
        return scale
    successful = int(growth_tracker.item()) + 1
    if successful == growth_interval:
        grown = scale.double().mul_(growth_factor).float()
        if _C.isfinite(grown).item():
            scale.copy_(grown)
        growth_tracker.fill_(0)
    else:
        growth_tracker.fill_(successful)
    return scale
