"""What the backend modules share: boolean flags checked as PyTorch's C++ setters check them."""
import contextlib
import sys
import types


def check_bool(setter_name, value):
    """PyTorch's RuntimeError for a flag set to something other than a bool."""
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter_name} expects a bool, but got {type(value).__name__}")
    return value


def flag_module(module_name, setters):
    """Gives the module `module_name` checked boolean attributes: `setters` maps an attribute
    name to the name PyTorch's error gives its setter. Module attributes stay plain values."""
    module = sys.modules[module_name]

    class FlagModule(types.ModuleType):
        def __setattr__(self, name, value):
            if name in setters:
                check_bool(setters[name], value)
            super().__setattr__(name, value)

    FlagModule.__name__ = FlagModule.__qualname__ = type(module).__name__
    module.__class__ = FlagModule
    return module


@contextlib.contextmanager
def temporarily(module, **values):
    """Sets the module's flags (those not None) for the with-block, then restores them."""
    saved = {name: getattr(module, name) for name, value in values.items() if value is not None}
    for name, value in values.items():
        if value is not None:
            setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
