"""Hook plumbing of graft.nn.Module: the wiring of full backward hooks around one forward call
(the handles register_*_hook returns are graft.utils.hooks.RemovableHandle)."""
import weakref

from ... import _C
from ...utils.hooks import RemovableHandle  # noqa: F401  (re-exported: nn.modules.module imports it from here)


def _hook_call(hook, *args):
    """Runs a module hook counted as one (graft.doctor sees attributes hooks set: LD005)."""
    from . import module as _module
    return _module._run_hook(hook, *args)



def _replaced_by_hooks(grads, hooks, what, name, call):
    """Runs call(hook, grads) for each hook in order; a hook's non-None result (a tensor, tuple or
    list of as many gradients) replaces ``grads`` for the next, as PyTorch's module hooks."""
    for hook in list(hooks.values()):
        result = call(hook, grads)
        if result is None:
            continue
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if len(result) != len(grads):
            raise RuntimeError(f"{what} returned an invalid number of {name}, got {len(result)}, but expected "
                               f"{len(grads)}")
        grads = result
    return grads

class _BackwardHooks:
    """Wires a module's full backward (pre-)hooks around one forward call: the positional
    tensor inputs and the output tensors each pass through one identity autograd node
    (BackwardHookFunctionBackward, see python/csrc/nn_functional.cpp). The output node sees
    grad_output first (backward pre-hooks may replace it); the input node then sees
    grad_input and calls the full backward hooks, whose result replaces grad_input."""

    def __init__(self, module):
        self.module = module
        self.n_inputs = self.n_outputs = 0
        self.input_index = None  # positions of the wrapped tensor inputs (None: no input needs a gradient)
        self.output_index = []  # positions of the wrapped output tensors
        self.grad_output = None

    def wrap_inputs(self, args):
        self.n_inputs = len(args)
        index = [i for i, a in enumerate(args) if isinstance(a, _C.Tensor)]
        if not _C.is_grad_enabled() or not any(args[i].requires_grad for i in index):
            return args
        self.input_index = index
        wrapped = _C._nn._backward_hook_identity([args[i] for i in index], self._on_grad_input)
        out = list(args)
        for i, t in zip(index, wrapped):
            out[i] = t
        return tuple(out)

    def wrap_outputs(self, result):
        single = isinstance(result, _C.Tensor)
        items = [result] if single else (list(result) if isinstance(result, (tuple, list)) else None)
        if items is None:
            return result
        index = [i for i, a in enumerate(items) if isinstance(a, _C.Tensor)]
        if not _C.is_grad_enabled() or not any(items[i].requires_grad for i in index):
            return result
        self.n_outputs = len(items)
        self.output_index = index
        wrapped = _C._nn._backward_hook_identity([items[i] for i in index], self._on_grad_output)
        for i, t in zip(index, wrapped):
            items[i] = t
        if single:
            return items[0]
        if hasattr(result, "_fields"):  # a named tuple
            return type(result)(*items)
        return type(result)(items)

    @staticmethod
    def _pack(index, values, n):
        out = [None] * n
        for i, v in zip(index, values):
            out[i] = v
        return tuple(out)

    def _on_grad_output(self, grads):
        module = self.module
        grad_output = _replaced_by_hooks(self._pack(self.output_index, grads, self.n_outputs),
                                         module._backward_pre_hooks, "Backward pre hook", "grad_output",
                                         lambda hook, g: _hook_call(hook, module, g))
        self.grad_output = grad_output
        if self.input_index is None:
            grad_input = (None,) * self.n_inputs
            for hook in list(module._backward_hooks.values()):
                result = _hook_call(hook, module, grad_input, grad_output)
                if result is not None and not all(r is None for r in result):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
        return tuple(grad_output[i] for i in self.output_index)

    def _on_grad_input(self, grads):
        module = self.module
        grad_input = _replaced_by_hooks(self._pack(self.input_index, grads, self.n_inputs), module._backward_hooks,
                                        "Backward hook", "grad_input",
                                        lambda hook, g: _hook_call(hook, module, g, self.grad_output))
        return tuple(grad_input[i] for i in self.input_index)
