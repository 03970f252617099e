"""Anomaly detection (torch.autograd.detect_anomaly / set_detect_anomaly): nodes remember the
Python stack of the forward call that made them; a NaN produced in backward raises
``Function 'XBackward0' returned nan values in its 0th output.`` and an error inside backward
first warns with that forward traceback."""
from .. import _C
from .grad_mode import _DecoratorContextManager


class detect_anomaly(_DecoratorContextManager):
    """Context manager and decorator that enables anomaly detection in its scope."""

    def __init__(self, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()

    def __enter__(self):
        _C._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)

    def clone(self):
        return self.__class__(self.check_nan)


class set_detect_anomaly:
    """Sets anomaly detection on or off: at once, and restored after a ``with`` block."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_check_nan = _C.is_anomaly_check_nan_enabled()
        _C._set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_check_nan)
