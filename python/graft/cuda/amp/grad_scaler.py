"""graft.cuda.amp.GradScaler: the deprecated CUDA spelling of graft.amp.GradScaler("cuda", ...)."""
import warnings

from ...amp.grad_scaler import GradScaler as _AmpGradScaler

__all__ = ["GradScaler"]

_DEPRECATION = ("`torch.cuda.amp.GradScaler(args...)` is deprecated. "
                "Please use `torch.amp.GradScaler('cuda', args...)` instead.")


class GradScaler(_AmpGradScaler):
    """``graft.amp.GradScaler("cuda", ...)``, constructed with a FutureWarning (deprecated spelling).

    graft has no CUDA, so an enabled instance also warns that CUDA is not available and disables
    itself, passing everything through.
    """

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn(_DEPRECATION, category=FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    __init__.__deprecated__ = _DEPRECATION
