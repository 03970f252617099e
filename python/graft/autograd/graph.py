"""graft.autograd.graph: the graph node type (grad_fn objects) and saved-tensor hooks
(saved_tensors_hooks, save_on_cpu, disable_saved_tensors_hooks), as torch.autograd.graph."""
import threading

from .. import _C

Node = _C.Node

_state = threading.local()


def _disabled_message():
    stack = getattr(_state, "disabled", None)
    return stack[-1] if stack else None


class saved_tensors_hooks:
    """Context manager: tensors saved for backward in its scope go through ``pack_hook(tensor)``
    once, when saved (forward), and what it returns is kept instead; ``unpack_hook(packed)``
    turns it back into a tensor at every access (backward, ``ctx.saved_tensors``). Hooks are
    per thread and the innermost context wins. A pack hook must not modify its input in place."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        message = _disabled_message()
        if message is not None:
            raise RuntimeError(message)
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc):
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device when used. graft's
    tensors live on the CPU, so this keeps them as they are (as PyTorch does for CPU graphs)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        if pin_memory:
            raise NotImplementedError("graft.autograd.graph.save_on_cpu: pin_memory=True is not supported "
                                      "(graft has no pinned host memory)")

        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Context manager: entering ``saved_tensors_hooks`` in its scope raises RuntimeError with
    ``error_message`` (hooks entered before keep working)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if not hasattr(_state, "disabled"):
            _state.disabled = []
        _state.disabled.append(self.error_message)

    def __exit__(self, *exc):
        _state.disabled.pop()
