"""graft.jit: the part of torch.jit that eager programs use. graft has no TorchScript compiler:
the functions that would compile, trace, save or load TorchScript raise NotImplementedError,
and the decorators and helpers that PyTorch documents as no-ops outside scripting return what
they are given (``ignore``, ``unused``, ``export``, ``script_if_tracing``, ``annotate``)."""
import typing

__all__ = ["script", "trace", "trace_module", "save", "load", "freeze", "optimize_for_inference", "ignore", "unused",
           "export", "script_if_tracing", "annotate", "is_scripting", "is_tracing", "Final", "ScriptModule",
           "ScriptFunction"]

Final = typing.Final  # module attribute annotations (`x: torch.jit.Final[int]`)


def _no_compiler(name):
    return NotImplementedError(
        f"graft does not implement torch.jit.{name}: TorchScript needs PyTorch's compiler, and graft runs models "
        "eagerly (call the module or function itself instead)")


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Not available in graft: raises NotImplementedError (TorchScript needs PyTorch's compiler)."""
    raise _no_compiler("script")


def trace(func, example_inputs=None, *args, **kwargs):
    """Not available in graft: raises NotImplementedError (TorchScript needs PyTorch's compiler)."""
    raise _no_compiler("trace")


def trace_module(mod, inputs, *args, **kwargs):
    """Not available in graft: raises NotImplementedError (TorchScript needs PyTorch's compiler)."""
    raise _no_compiler("trace_module")


def save(m, f, _extra_files=None):
    """Not available in graft: raises NotImplementedError (there are no ScriptModules to save)."""
    raise _no_compiler("save")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Not available in graft: raises NotImplementedError (graft cannot run TorchScript archives)."""
    raise _no_compiler("load")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Not available in graft: raises NotImplementedError (it works on ScriptModules)."""
    raise _no_compiler("freeze")


def optimize_for_inference(mod, other_methods=None):
    """Not available in graft: raises NotImplementedError (it works on ScriptModules)."""
    raise _no_compiler("optimize_for_inference")


class ScriptModule:
    """TorchScript's module type: nothing in graft is one (isinstance checks are False), and
    making one raises NotImplementedError."""

    def __new__(cls, *args, **kwargs):
        raise _no_compiler("ScriptModule")


class ScriptFunction:
    """TorchScript's function type: nothing in graft is one (isinstance checks are False), and
    making one raises NotImplementedError."""

    def __new__(cls, *args, **kwargs):
        raise _no_compiler("ScriptFunction")


def is_scripting():
    """False: graft code never runs inside the TorchScript compiler."""
    return False


def is_tracing():
    """False: graft has no tracer."""
    return False


def ignore(drop=False, **kwargs):
    """@ignore or @ignore(drop=...): outside scripting PyTorch's decorator leaves the function as
    it is, and so does graft's. A `drop` that is neither a bool nor a function is PyTorch's
    RuntimeError."""
    if callable(drop):
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    return lambda fn: fn


def unused(fn):
    """@unused: the function (or property) unchanged, as PyTorch's outside scripting."""
    return fn


def export(fn):
    """@export: the method unchanged, as PyTorch's outside scripting."""
    return fn


def script_if_tracing(fn):
    """The function unchanged: graft never traces, so it is always called eagerly."""
    return fn


def annotate(the_type, the_value):
    """`the_value`: a type hint for the TorchScript compiler, a no-op when running eagerly."""
    return the_value
