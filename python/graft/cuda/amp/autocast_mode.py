"""graft.cuda.amp.autocast: the deprecated cuda spelling of graft.amp.autocast("cuda", ...)."""
import warnings

from ... import _C
from ...amp.autocast_mode import autocast as _amp_autocast

__all__ = ["autocast"]

_DEPRECATION = ("`torch.cuda.amp.autocast(args...)` is deprecated. "
                "Please use `torch.amp.autocast('cuda', args...)` instead.")


class autocast(_amp_autocast):
    """``graft.amp.autocast("cuda", ...)``, constructed with a FutureWarning (deprecated spelling)."""

    def __init__(self, enabled=True, dtype=_C.float16, cache_enabled=True):
        warnings.warn(_DEPRECATION, category=FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
