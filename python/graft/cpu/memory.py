"""Memory of graft's CPU caching allocator, under torch.cuda's names.

graft's CPU memory comes from a caching allocator with the policy and the statistics of
PyTorch's CUDA caching allocator (docs/memory.md), so torch.cuda.memory_allocated(),
memory_stats(), memory_summary(), empty_cache(), ... have the same meaning here, for the CPU.
graft's extra: memory_by_category() (who owns the bytes).
"""
import collections
import json
import sys

from .. import _C

__all__ = [
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_cache", "memory_stats",
    "memory_stats_as_nested_dict", "memory_summary", "memory_snapshot", "memory_by_category",
    "set_per_process_memory_fraction", "mem_get_info",
]

_CATEGORIES = ("parameter", "gradient", "saved_for_backward", "optimizer_state", "data_batch", "other")


def _device(device):
    """graft.cpu's device argument: None, "cpu", "cpu:0", graft.device("cpu") or 0."""
    if device is None:
        return "cpu"
    if isinstance(device, int) and not isinstance(device, bool):
        if device != 0:
            raise ValueError(f"Expected the CPU device index 0, but got: {device}")
        return "cpu"
    if isinstance(device, str):
        device = _C.device(device)
    if not isinstance(device, _C.device):
        raise TypeError(f"Expected a graft.device, a string or an int, but got: {type(device).__name__}")
    if device.type != "cpu":
        raise ValueError(f"Expected a cpu device, but got: {device}")
    return device


def memory_allocated(device=None):
    """Bytes of blocks handed out to live tensors (block sizes: a 4-byte tensor counts 512)."""
    return _C._memory_allocated(_device(device))


def max_memory_allocated(device=None):
    """The peak of memory_allocated() since the start or reset_peak_memory_stats()."""
    return _C._max_memory_allocated(_device(device))


def memory_reserved(device=None):
    """Bytes of the segments the allocator holds: allocated plus cached."""
    return _C._memory_reserved(_device(device))


def max_memory_reserved(device=None):
    """The peak of memory_reserved() since the start or reset_peak_memory_stats()."""
    return _C._max_memory_reserved(_device(device))


def reset_peak_memory_stats(device=None):
    """Sets every "peak" statistic to its current value."""
    _C._reset_peak_memory_stats(_device(device))


def reset_accumulated_memory_stats(device=None):
    """Zeroes every "allocated"/"freed" total and the num_* counters."""
    _C._reset_accumulated_memory_stats(_device(device))


def empty_cache():
    """Returns every cached whole segment to the system (never memory of live tensors)."""
    _C._empty_cache("cpu")


def memory_stats(device=None):
    """Every allocator statistic as an OrderedDict sorted by key, with torch.cuda.memory_stats()'s
    flat keys: "allocated_bytes.all.current", "segment.small_pool.peak", "num_ooms", ..."""
    return collections.OrderedDict(_C._memory_stats(_device(device)))


def memory_stats_as_nested_dict(device=None):
    """memory_stats() as a nested dict: stats["allocated_bytes"]["all"]["current"]."""
    nested = {}
    for key, value in _C._memory_stats(_device(device)).items():
        *path, last = key.split(".")
        node = nested
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return nested


def memory_summary(device=None, abbreviated=False):
    """PyTorch 2.x's memory_summary() table, titled "graft CPU memory summary, device ID 0"."""
    return _C._memory_summary(_device(device), abbreviated)


def memory_snapshot():
    """The segments in address order, shaped as torch.cuda.memory_snapshot(): each a dict with
    "address", "total_size", "allocated_size", "active_size", "requested_size", "segment_type",
    "blocks" (each with "address", "size", "requested_size", "state", "frames"), ...; graft adds
    "category" (None for free blocks) and "op" (recorded while history is on) to each block."""
    return _C._memory_snapshot("cpu")


def memory_by_category(device=None):
    """Live bytes per owner: parameter, gradient, saved_for_backward, optimizer_state,
    data_batch, other (graft's extra; the values sum to memory_allocated())."""
    by_name = _C._memory_by_category(_device(device))
    return {name: by_name[name] for name in _CATEGORIES}


def set_per_process_memory_fraction(fraction, device=None):
    """Caps reserved memory at `fraction` (a float in [0, 1]) of the device's total memory; an
    allocation beyond it raises graft.OutOfMemoryError. 1.0 lifts the cap to the whole memory."""
    device = _device(device)
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    _C._set_per_process_memory_fraction(fraction, device)


def mem_get_info(device=None):
    """(free, total) bytes of the device's memory (for the CPU: available and total RAM)."""
    return _C._mem_get_info(_device(device))


def _record_memory_history(enabled="all", *args, **kwargs):
    """Starts or stops recording allocator events (PyTorch's private API, both forms).

    2.x form: ``_record_memory_history(enabled="all", context="all", stacks="all",
    max_entries=sys.maxsize, device=None)``: `enabled` None stops, "state" keeps the op of live
    blocks (and a history of one event, as PyTorch), "all" also keeps the last `max_entries`
    events; `stacks="all"` adds C++ frames. graft records the op behind each event (e.g. "mul",
    "ExpBackward0"), not Python frames; `context` None records no C++ frames.
    Legacy form (1.13, 2.x): ``_record_memory_history(enabled: bool, record_context=True,
    trace_alloc_max_entries=1, trace_alloc_record_context=False, device=None,
    record_context_cpp=False)``.
    """
    if isinstance(enabled, bool):
        _record_memory_history_legacy(enabled, *args, **kwargs)
    else:
        _record_memory_history_impl(enabled, *args, **kwargs)


def _record_memory_history_legacy(enabled, record_context=True, trace_alloc_max_entries=1,
                                  trace_alloc_record_context=False, device=None, record_context_cpp=False):
    _C._record_memory_history(enabled, max(1, trace_alloc_max_entries), enabled and record_context_cpp,
                              _device(device))


def _record_memory_history_impl(enabled="all", context="all", stacks="all", max_entries=sys.maxsize,
                                device=None):
    if enabled is not None and enabled not in ("state", "all"):
        raise RuntimeError("expected state to be 'state', 'all', or None")
    if context is not None and context not in ("state", "alloc", "all"):
        raise RuntimeError("expected context to be 'state', 'alloc', 'all', or None")
    if stacks not in ("python", "all"):
        raise RuntimeError("expected stacks to be 'python', or 'all'")
    entries = max_entries if enabled == "all" else 1
    _C._record_memory_history(enabled is not None, entries, context is not None and stacks == "all",
                              _device(device))


def _snapshot(device=None):
    """graft's memory snapshot as a dict: schema "graft.memory_snapshot", version 1 (settings,
    stats, by_category, segments with blocks, history; docs/memory.md). Not PyTorch's layout:
    PyTorch's has "segments" and "device_traces"."""
    return json.loads(_C._memory_snapshot_json(_device(device)))


def _dump_snapshot(filename="dump_snapshot.pickle"):
    """Writes _snapshot() to `filename` as JSON (atomically). Unlike PyTorch, which pickles its
    own layout for pytorch.org/memory_viz, the file is graft's JSON whatever its name says."""
    _C._dump_snapshot(filename, "cpu")


def _set_allocator_settings(env):
    """Applies GRAFT_ALLOC_CONF-style settings ("key:value,...") at run time."""
    _C._set_allocator_settings(env, "cpu")
