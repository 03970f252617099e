"""graft.cpu.amp.autocast: the deprecated cpu spelling of graft.amp.autocast("cpu", ...)."""
import warnings

from ... import _C
from ...amp.autocast_mode import autocast as _amp_autocast

__all__ = ["autocast"]

_DEPRECATION = ("`torch.cpu.amp.autocast(args...)` is deprecated. "
                "Please use `torch.amp.autocast('cpu', args...)` instead.")


class autocast(_amp_autocast):
    """``graft.amp.autocast("cpu", ...)``, constructed with a FutureWarning (deprecated spelling)."""

    def __init__(self, enabled=True, dtype=_C.bfloat16, cache_enabled=True):
        warnings.warn(_DEPRECATION, category=FutureWarning, stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
