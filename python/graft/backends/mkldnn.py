"""graft.backends.mkldnn: graft is not built with MKL-DNN (oneDNN). ``enabled`` has PyTorch's
default and can be set; it changes nothing here."""
import sys

from . import _flags

enabled = True


def is_available():
    """False: graft is not built with MKL-DNN."""
    return False


def set_flags(_enabled):
    """Sets ``enabled``; returns the previous value in a tuple, as PyTorch's."""
    orig = (enabled,)
    setattr(sys.modules[__name__], "enabled", _enabled)
    return orig


def flags(enabled=False):
    """A context manager that sets ``enabled`` for its block and restores it after."""
    return _flags.temporarily(sys.modules[__name__], enabled=enabled)


_flags.flag_module(__name__, {"enabled": "set_enabled_mkldnn"})
