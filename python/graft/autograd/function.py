"""Custom autograd Functions (torch.autograd.Function): subclass Function, write static
``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``, call ``MyFunc.apply(*args)``.

The node the engine runs is graft's C++ custom-function node; its backward takes the GIL and
calls the Python ``backward``. The ``ctx`` object is the node itself (a
``BackwardCFunction``), as in PyTorch where ``y.grad_fn`` IS the ctx: ``y.grad_fn.k``,
``y.grad_fn.saved_tensors`` and ``y.grad_fn.next_functions`` work. Attributes set on ctx live
in the node and die with it; saved tensors are released after backward unless retain_graph.
"""
import functools
import warnings
import weakref

from .. import _C
from .grad_mode import no_grad

BackwardCFunction = _C.BackwardCFunction
#: The type of ``ctx`` (for annotations, as torch.autograd.function.FunctionCtx).
FunctionCtx = BackwardCFunction

_signatures = weakref.WeakKeyDictionary()  # forward -> inspect.Signature


def _bind(fn, args, kwargs, with_ctx):
    """Binds keyword arguments of ``forward`` to positions (defaults applied), so that tensors
    passed by keyword are inputs of the graph like positional ones."""
    sig = _signatures.get(fn)
    if sig is None:
        import inspect  # lazily, as in grad_mode: only keyword arguments and setup_context need it
        sig = _signatures[fn] = inspect.signature(fn)
    bound = sig.bind(None, *args, **kwargs) if with_ctx else sig.bind(*args, **kwargs)
    bound.apply_defaults()
    pos = bound.args[1:] if with_ctx else bound.args
    return tuple(pos), bound.kwargs


def _both_backward_and_vjp(ctx, *grad_outputs):
    raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                       "You should only implement one of them.")


class Function:
    """Base class of custom autograd Functions; see the module docstring."""

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so you "
            "should invoke them on the class itself. Instantiating an autograd function will raise an error in a "
            "future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        """Computes the outputs (runs without recording a graph)."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """2.x style: fills ctx after a ``forward(*args)`` that takes no ctx."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Returns one gradient (or None) per forward input, given one per forward output."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs forward and records the node (when an input requires grad and grad mode is on)."""
        has_setup_context = cls.setup_context is not Function.setup_context
        if has_setup_context or kwargs:
            args, kwargs = _bind(cls.forward, args, kwargs, with_ctx=not has_setup_context)
        backward = cls.backward
        if cls.vjp is not Function.vjp:
            backward = cls.vjp if backward is Function.backward else _both_backward_and_vjp
        return _C._function_apply(cls, backward, getattr(backward, "_graft_once_differentiable", False),
                                  cls.setup_context if has_setup_context else None, args, kwargs)


def once_differentiable(fn):
    """Decorates a backward that is not itself differentiable: it runs without recording, and
    differentiating its result raises "trying to differentiate twice a function that was marked
    with @once_differentiable" (when the incoming gradients require grad)."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    wrapper._graft_once_differentiable = True
    return wrapper
