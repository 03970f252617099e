"""graft.random: the default generator's seed and state, as torch.random.

The default generator (``default_generator``, a graft.Generator over a std::mt19937_64 engine,
see include/graft/core/generator.h) is what rand, randn, randint, randperm, multinomial,
dropout, the in-place random fills and nn.init draw from when they are given no
``generator=``. Its state is a 1-D int64 tensor (the initial seed, then the engine's words),
not PyTorch's uint8 ByteTensor; it round-trips exactly through set_rng_state."""
import contextlib
import os

from . import _C

from ._C import default_generator

__all__ = ["default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]

_UINT64 = 0xFFFF_FFFF_FFFF_FFFF


def get_rng_state():
    """A copy of the default generator's state (a 1-D int64 tensor)."""
    return _C.get_rng_state()


def set_rng_state(new_state):
    """Restores a state from get_rng_state(): the draws that followed it follow again.
    TypeError unless an int64 CPU tensor; RuntimeError for a state of the wrong size."""
    _C.set_rng_state(new_state)


def manual_seed(seed):
    """Seeds the default generator. ``seed`` is converted with ``int()`` and must lie in
    ``[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]`` (negative seeds wrap to 2**64 + seed),
    else RuntimeError, as PyTorch. Returns the default generator, as PyTorch."""
    seed = int(seed)
    if not -0x8000_0000_0000_0000 <= seed <= _UINT64:
        raise RuntimeError("Overflow when unpacking long")
    _C.manual_seed(seed & _UINT64)
    return default_generator


def seed():
    """Seeds the default generator with a non-deterministic 64-bit number and returns it."""
    s = int.from_bytes(os.urandom(8), "little")
    _C.manual_seed(s)
    return s


def initial_seed():
    """The seed the default generator was last seeded with (a Python int)."""
    return _C.initial_seed()


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Context manager: on exit the default generator's state is what it was on entry (also
    when the block raises). ``devices`` lists CUDA devices whose generators are forked too;
    graft has none (``devices=None`` means all of them: none), and naming one raises as
    torch.cuda does without CUDA. ``enabled=False`` makes it do nothing."""
    if device_type == "meta":
        yield
        return
    if device_type not in ("cuda", "cpu"):
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register a module by "
                           "`torch._register_device_module`.")
    if not enabled:
        yield
        return
    from . import cuda
    devices = [] if devices is None or device_type == "cpu" else list(devices)
    cpu_state = get_rng_state()
    device_states = [cuda.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            cuda.set_rng_state(state, d)
