"""graft.cpu.amp.GradScaler: the deprecated CPU spelling of graft.amp.GradScaler("cpu", ...)."""
import warnings

from ...amp.grad_scaler import GradScaler as _AmpGradScaler

__all__ = ["GradScaler"]

_DEPRECATION = ("`torch.cpu.amp.GradScaler(args...)` is deprecated. "
                "Please use `torch.amp.GradScaler('cpu', args...)` instead.")


class GradScaler(_AmpGradScaler):
    """``graft.amp.GradScaler("cpu", ...)``, constructed with a FutureWarning (deprecated spelling)."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn(_DEPRECATION, category=FutureWarning, stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    __init__.__deprecated__ = _DEPRECATION
