"""graft.autograd: backward(), grad(), grad modes, anomaly mode, custom Functions, gradcheck
and saved-tensor hooks, with torch.autograd's names and semantics. The engine is C++; it
runs with the GIL released and takes it back for Python hooks and Functions."""
from .. import _C
from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from . import graph, function  # noqa: F401
from .function import Function  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401  (the name gradcheck is the function, as in torch)
from . import functional  # noqa: F401  (torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp)

Variable = _C.Tensor


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _C.Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulates the gradients of ``tensors`` into the leaves' ``.grad``."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    _C._backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Returns the gradients of ``outputs`` with respect to ``inputs`` as a tuple, without
    touching ``.grad``."""
    if is_grads_batched:
        raise NotImplementedError("graft.autograd.grad: is_grads_batched=True is not supported")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    return _C._grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads)


def _is_checkpoint_valid():
    """False inside a backward pass that computes only some gradients (``grad()``, or
    ``backward(inputs=...)``), where reentrant checkpointing cannot work."""
    return _C._is_checkpoint_valid()
