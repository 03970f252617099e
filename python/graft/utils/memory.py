"""graft.utils.memory: how much memory a training step needs, found without the memory.

``estimate(step_fn, *args)`` runs the step on graft's ``meta`` device: tensors there have sizes,
strides and dtypes but no data, every op computes only its outputs' metadata, and autograd and
the optimizers run as usual. The meta device's memory comes from the same caching allocator as
the CPU's (512-byte rounding, small and large pools, splitting, the same settings), over
addresses with nothing behind them, so its statistics are those a real run of the step would
show. See docs/memory.md ("Estimating a step") and docs/notes/devices.md.

    with graft.device("meta"):                     # build the model and data without memory
        model = nn.Sequential(nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 10))
        opt = graft.optim.Adam(model.parameters())
        x, y = graft.randn(512, 4096), graft.randint(0, 10, (512,))

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    print(graft.utils.memory.estimate(step, steps=2))
"""
from .. import _C

__all__ = ["estimate", "MemoryEstimate"]

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _human(n):
    x = float(n)
    for unit in _UNITS:
        if abs(x) < 1024 or unit == _UNITS[-1]:
            return f"{x:.0f} {unit}" if unit == "B" else f"{x:.2f} {unit}"
        x /= 1024


class MemoryEstimate:
    """What estimate() measured on the meta device, in bytes.

    peak_allocated  the most bytes live tensors held at once during the steps (blocks as the
                    allocator hands them out: a 4-byte tensor takes 512), counting what was
                    live before: max_memory_allocated() a real run would report
    peak_reserved   the most bytes of segments the allocator held: what the device must have
    allocated_before, allocated_after
                    live bytes when the steps began and ended (a growing difference across
                    steps is memory the step keeps: see graft.doctor)
    by_category     live bytes per owner at the end (parameter, gradient, optimizer_state, ...)
    """

    __slots__ = ("peak_allocated", "peak_reserved", "allocated_before", "allocated_after", "by_category", "steps")

    def __init__(self, **fields):  # every field of __slots__, as graft::estimate_memory reports them
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        return (f"MemoryEstimate(peak_allocated={self.peak_allocated}, peak_reserved={self.peak_reserved}, "
                f"allocated_before={self.allocated_before}, allocated_after={self.allocated_after}, "
                f"steps={self.steps})")

    def __str__(self):
        lines = [f"memory estimate over {self.steps} step{'s' if self.steps != 1 else ''} (meta device):",
                 f"  peak allocated  {_human(self.peak_allocated):>12}",
                 f"  peak reserved   {_human(self.peak_reserved):>12}",
                 f"  live before     {_human(self.allocated_before):>12}",
                 f"  live after      {_human(self.allocated_after):>12}"]
        owners = [(k, v) for k, v in self.by_category.items() if v]
        if owners:
            lines.append("  live after, by owner: " + ", ".join(f"{k} {_human(v)}" for k, v in owners))
        return "\n".join(lines)


def _on_meta(obj, where):
    """A tensor argument as its meta twin (no data copied); modules must already be on meta."""
    if isinstance(obj, _C.Tensor):
        if obj.device.type == "meta":
            return obj
        t = obj.detach().to("meta")
        return t.requires_grad_(True) if obj.requires_grad and obj.is_leaf else t
    params = getattr(obj, "parameters", None)
    if callable(params) and hasattr(obj, "named_modules"):
        for name, p in obj.named_parameters():
            if p.device.type != "meta":
                raise ValueError(
                    f"estimate(): {where} is a module whose parameter '{name}' is on {p.device}; build it "
                    f"under `with graft.device(\"meta\"):` (no memory is taken) or pass copy.deepcopy(model)"
                    f".to(\"meta\")")
    return obj


def estimate(step_fn, *args, steps=1, **kwargs):
    """Runs ``step_fn(*args, **kwargs)`` ``steps`` times on the meta device and returns a
    MemoryEstimate of the memory the steps would take on a device with graft's allocator.

    While the steps run, the default device is ``meta`` (factories without a device make meta
    tensors). Tensor arguments are replaced by meta twins; module arguments must already be on
    meta (build them under ``with graft.device("meta"):``). The meta allocator's cache is
    emptied and its peaks reset first, so the figures are those of a fresh device holding the
    meta tensors already alive. Use ``steps=2`` or more to include the optimizer's state, which
    the first step creates, alongside the gradients a second step's forward keeps.

    Data-dependent operations cannot run on meta (``.item()``, ``nonzero``, boolean-mask
    indexing) and raise PyTorch's NotImplementedError; a step that branches on tensor values
    must be estimated with those values made constants.
    """
    if not callable(step_fn):
        raise TypeError(f"estimate() expects a callable step_fn, got {type(step_fn).__name__}")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
        raise ValueError(f"estimate(): steps must be a positive int, got {steps!r}")
    args = tuple(_on_meta(a, f"argument {i}") for i, a in enumerate(args))
    kwargs = {k: _on_meta(v, f"argument '{k}'") for k, v in kwargs.items()}
    # graft::estimate_memory (include/graft/memory.h) runs the steps and reads the meta allocator
    return MemoryEstimate(**_C._estimate_memory(lambda: step_fn(*args, **kwargs), steps))
