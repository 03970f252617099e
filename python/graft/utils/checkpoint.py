"""graft.utils.checkpoint: activation checkpointing, with torch.utils.checkpoint's names and
semantics (PyTorch 2.x).

``checkpoint(function, *args, use_reentrant=False)`` trades compute for memory: the tensors
that the ops inside ``function`` save for backward are not kept. While ``function`` runs, a
saved-tensor pack hook replaces each of them with a small ``_Holder``; the inputs of
``function`` are kept (as saved tensors, so modifying one in place is caught at backward).
The first time a backward pass unpacks one of the holders, ``function`` runs again on those
inputs, under grad mode and with the RNG state it saw in the forward, and a second pack hook
collects the tensors it saves, in the same order; each is handed out once and dropped after
use. Recomputation stops as soon as every saved tensor is back (early stop). Because the
recomputed values are given the original graph's history when unpacked, gradients are those of
the un-checkpointed program, ``autograd.grad`` works as well as ``backward``, and so does
double backward (``create_graph=True``: the second pass recomputes again).

``use_reentrant=True`` is the older variant: a custom Function that runs ``function`` under
``no_grad`` and, in its backward, runs it again under ``enable_grad`` and calls ``backward``
inside the backward (graft's engine runs such a nested pass on the same thread). It refuses
``autograd.grad`` and ``backward(inputs=...)``, keyword arguments and double backward, as
PyTorch's does.
"""
import contextlib
import itertools
import traceback
import warnings
import weakref
from collections import defaultdict

from .. import _C
from .. import random as _random
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "check_backward_validity",
           "detach_variable", "noop_context_fn", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled"]

_Tensor = _C.Tensor
_DEFAULT_DETERMINISM_MODE = "default"

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")
_SEQUENTIAL_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. In "
    "version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but "
    "if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")
_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint-debug mode globally.
"""

_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


class CheckpointError(RuntimeError):
    """Raised when the recomputation does not save what the forward saved (a different
    number of tensors, or different shapes, dtypes or devices), or a tensor is unpacked twice."""


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Overrides the ``debug`` argument of every checkpoint run in the block (None: defer to it)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether non-reentrant checkpoints whose forward runs in the block stop recomputing as
    soon as every saved tensor is back (default True)."""
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def detach_variable(inputs):
    """The tensors of the tuple ``inputs`` detached, keeping their requires_grad flags."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, _Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, _Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def noop_context_fn():
    """The default ``context_fn``: no context around the forward nor the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


# ---- use_reentrant=True ----

class CheckpointFunction(Function):
    """The reentrant checkpoint: forward under no_grad; backward recomputes under enable_grad and
    runs a nested backward through the recomputed graph."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = _random.get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, _Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        if not _C._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
                "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
                ".backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = tensor
        with _random.fork_rng(devices=[], enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                _random.set_rng_state(ctx.fwd_cpu_state)
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, _Tensor):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for out, grad in zip(outputs, args):
            if isinstance(out, _Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                args_with_grad.append(grad)
        if not outputs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        from ..autograd import backward
        backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, _Tensor) else None for inp in detached_inputs)
        return (None, None) + grads


# ---- use_reentrant=False ----

class _Handle:
    """The key of one recomputed tensor in its frame (dropped once the tensor is handed out)."""
    __slots__ = ("__weakref__",)


class _Holder:
    """What the graph keeps for one saved tensor: per backward pass (graph task id), the handle
    of its recomputed value, or None once that value was unpacked."""
    __slots__ = ("handles", "__weakref__")

    def __init__(self):
        self.handles = {}


class _StopRecomputationError(Exception):
    pass


def _default_meta(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_determinism_checks = {_DEFAULT_DETERMINISM_MODE: _default_meta, "none": lambda _: None}

# ids for unpacks outside a backward pass (each one recomputes); graph task ids are >= 0
_temporary_ids = itertools.count(-2, -1)


def _internal_assert(cond):
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. Please report this bug.")


def _save_site():
    """Where the tensor being packed was saved: the innermost stack frames outside this file."""
    frames = [f for f in traceback.extract_stack()[:-2] if f.filename != __file__]
    return "".join(traceback.format_list(frames[-3:]))


class _CheckpointFrame:
    """The state of one checkpointed call: its saved inputs, a weak reference to each holder
    the forward packed (in order), and per backward pass the recomputed tensors."""

    def __init__(self, recompute_fn, early_stop, metadata_fn, debug):
        self.recompute_fn = recompute_fn
        self.saved_args = []
        self.weak_holders = []
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)  # gid -> {_Handle: tensor}
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.x_metadatas = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        self.debug = debug
        self.forward_sites = []
        self.recompute_sites = defaultdict(list)

    def save_inputs(self, args):
        self.saved_args = [_C._make_saved_tensor(a) if isinstance(a, _Tensor) else a for a in args]

    def get_inputs(self):
        return [a.unpack() if isinstance(a, _C._SavedTensor) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid):
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise self.error(gid, (
                "torch.utils.checkpoint: A different number of tensors was saved during the original forward and "
                "recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n{_DEBUG_TIP}"))
        mismatched = ""
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(holder.handles.get(gid) is not None)
            recomputed = self.recomputed[gid][holder.handles[gid]]
            meta = self.metadata_fn(recomputed)
            if self.x_metadatas[idx] != meta:
                mismatched += (f"tensor at position {idx}:\nsaved metadata: {self.x_metadatas[idx]}\n"
                               f"recomputed metadata: {meta}\n")
        if mismatched:
            raise self.error(gid, (
                "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata than "
                f"during the forward pass.\n{mismatched}{_DEBUG_TIP}"))

    def error(self, gid, message):
        if not self.debug:
            return CheckpointError(message)
        # graft has no operator log (PyTorch's debug mode traces ops with a dispatch mode): the
        # report lists where each tensor was saved in the forward and in the recomputation.
        lines = [message, "Tensors saved during the original forward (position, metadata, saved at):"]
        for i, (meta, site) in enumerate(self.forward_sites):
            lines.append(f"[{i}] {meta}\n{site}")
        lines.append("Tensors saved during recomputation:")
        for i, (meta, site) in enumerate(self.recompute_sites[gid]):
            lines.append(f"[{i}] {meta}\n{site}")
        return CheckpointError("\n".join(lines))


class _recomputation_hook(saved_tensors_hooks):
    """Active while a frame recomputes: routes each saved tensor, in order, to the holder the
    forward created for it (and keeps it in the recomputed graph, which is usually dropped)."""

    def __init__(self, frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            _internal_assert(frame is not None)
            idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if frame.debug:
                frame.recompute_sites[gid].append((frame.metadata_fn(x), _save_site()))
            if idx >= len(frame.weak_holders):
                if not frame.forward_completed:
                    # backward inside the checkpointed function while its forward still runs
                    frame.ignore_saved_mismatch = True
                    return x
                raise frame.error(gid, "torch.utils.checkpoint: trying to save more tensors during recomputation "
                                       f"than during the original forward pass.\n{_DEBUG_TIP}")
            holder = frame.weak_holders[idx]()
            if holder is not None:  # None: its node already ran and released it
                _internal_assert(holder.handles.get(gid) is None)
                handle = _Handle()
                holder.handles[gid] = handle
                frame.recomputed[gid][handle] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return x

        def unpack_hook(x):
            return x

        super().__init__(pack_hook, unpack_hook)


class _checkpoint_hook(saved_tensors_hooks):
    """Active while the checkpointed function runs forward: saved tensors become holders."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            if frame.debug:
                frame.forward_sites.append((frame.metadata_fn(x), _save_site()))
            return holder

        def unpack_hook(holder):
            gid = _C._current_graph_task_id()
            if gid == -1:
                gid = next(_temporary_ids)
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                del args
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            handle = holder.handles[gid]
            if handle is None:
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once. "
                    "If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please "
                    "open an issue with details on your use case.")
            _internal_assert(handle in frame.recomputed[gid])
            ret = frame.recomputed[gid][handle]
            holder.handles[gid] = None  # the recomputed value goes once it has been used
            return ret

        super().__init__(pack_hook, unpack_hook)


def _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn, determinism_check, debug,
                                  early_stop):
    debug = _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in _determinism_checks:
        raise ValueError(f"determinism_check should be one of {list(_determinism_checks.keys())}, "
                         f"but got {determinism_check}")
    metadata_fn = _determinism_checks[determinism_check]
    forward_context, recompute_context = context_fn()
    fwd_cpu_state = _random.get_rng_state() if preserve_rng_state else None

    def recompute_fn(*inputs):
        with _random.fork_rng(devices=[], enabled=preserve_rng_state):
            if preserve_rng_state:
                _random.set_rng_state(fwd_cpu_state)
            with recompute_context:
                function(*inputs, **kwargs)

    early_stop = _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop
    frame = _CheckpointFrame(recompute_fn, early_stop, metadata_fn, debug)
    if not _C.is_grad_enabled():
        return function(*args, **kwargs)  # nothing will be saved: just a call
    frame.save_inputs(args)
    returned = False
    with _checkpoint_hook(frame), forward_context:
        ret = function(*args, **kwargs)
        returned = True
    if not returned:
        raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
                           "exception raised during the checkpointed forward. This is not supported because "
                           "checkpoint cannot return a value for a failed forward.")
    frame.forward_completed = True
    return ret


# ---- public entry points ----

def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False, preserve_rng_state=True, early_stop=True,
               **kwargs):
    """Runs ``function(*args, **kwargs)`` without keeping the tensors its ops save for
    backward; the backward pass recomputes them (see the module docstring). Pass
    ``use_reentrant=False`` (recommended); without it, this warns and uses the reentrant
    variant, as PyTorch 2.x. ``context_fn`` returns two context managers, entered around the
    forward and around the recomputation; ``determinism_check`` is "default" (compare shapes,
    dtypes and devices of recomputed tensors) or "none"; ``debug=True`` adds where each tensor
    was saved to the errors; ``preserve_rng_state`` replays the forward's RNG state (dropout);
    ``early_stop`` stops the recomputation once everything needed is back."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, args, kwargs, preserve_rng_state, context_fn, determinism_check,
                                         debug, early_stop)


def _segment(functions, start, end):
    def forward(input):
        for j in range(start, end + 1):
            input = functions[j](input)
        return input
    return forward


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a sequential model (an nn.Sequential or a list of modules/functions) in
    ``segments`` chunks, each but the last checkpointed: only the chunks' inputs are kept, and
    each chunk is recomputed during backward. ``preserve_rng_state`` may be passed too."""
    if use_reentrant is None:
        warnings.warn(_SEQUENTIAL_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(_segment(functions, start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _segment(functions, end + 1, len(functions) - 1)(input)
