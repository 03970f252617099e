"""graft.distributed: the names of torch.distributed, with no collective backend yet.

graft does not build Gloo, MPI or NCCL yet, so ``is_available()`` is False and no process group
can be initialised: ``init_process_group`` raises PyTorch's error for a backend that is not
built in, and the functions that need the default group raise PyTorch 2.x's ValueError for a
group that was never initialised. Programs that import these names and use them only when
launched with several processes (``RANK`` set), as most training scripts do, run in one
process unchanged."""
import datetime
import os

__all__ = ["Backend", "ReduceOp", "GroupMember", "group", "is_available", "is_initialized", "is_gloo_available",
           "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "init_process_group",
           "destroy_process_group", "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce",
           "broadcast", "all_gather", "reduce", "reduce_scatter", "gather", "scatter", "send", "recv", "new_group"]

default_pg_timeout = datetime.timedelta(minutes=30)
_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


class Backend(str):
    """A backend's name, lower-cased and checked as PyTorch's ("gloo", "nccl", "mpi")."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    backend_list = [UNDEFINED, GLOO, NCCL, MPI]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


class ReduceOp:
    """The reductions of all_reduce and friends (PyTorch's ReduceOp names)."""
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"


class GroupMember:
    """The default group (``WORLD``: None until a group is initialised, which graft cannot yet)."""
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember


def is_available():
    """False: graft has no collective backend (Gloo, MPI, NCCL) yet."""
    return False


def is_initialized():
    """Whether the default process group is initialised: never, in graft so far."""
    return False


def is_gloo_available():
    return False


def is_mpi_available():
    return False


def is_nccl_available():
    return False


def is_torchelastic_launched():
    """True when the process was started by torchrun (its TORCHELASTIC_RUN_ID is set)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Checks the backend's name as PyTorch does (ValueError "Invalid backend: 'name'"), then
    raises PyTorch's RuntimeError for a backend that is not built in: graft builds none yet."""
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    name = Backend(backend if backend is not None else "gloo")
    if name not in (Backend.GLOO, Backend.NCCL, Backend.MPI) and ":" not in name:
        raise ValueError(f"Invalid backend: '{backend}'")
    raise RuntimeError(f"Distributed package doesn't have {name.split(':')[-1].upper()} built in")


def destroy_process_group(group=None):
    """AssertionError without a default group, as PyTorch's."""
    assert (group if group is not None else GroupMember.WORLD) is not None


def _needs_default_group(name, doc):
    def function(*args, **kwargs):
        raise ValueError(_NOT_INITIALIZED)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc + " ValueError without a default process group (always, in graft so far)."
    return function


get_rank = _needs_default_group("get_rank", "This process's rank in the group.")
get_world_size = _needs_default_group("get_world_size", "The number of processes in the group.")
get_backend = _needs_default_group("get_backend", "The group's backend.")
barrier = _needs_default_group("barrier", "Waits for every process of the group.")
all_reduce = _needs_default_group("all_reduce", "Reduces a tensor over every process, in place.")
broadcast = _needs_default_group("broadcast", "Copies a tensor from one rank to every other.")
all_gather = _needs_default_group("all_gather", "Gathers a tensor from every process into a list.")
reduce = _needs_default_group("reduce", "Reduces a tensor onto one rank.")
reduce_scatter = _needs_default_group("reduce_scatter", "Reduces a list of tensors and scatters the result.")
gather = _needs_default_group("gather", "Gathers a tensor from every process onto one rank.")
scatter = _needs_default_group("scatter", "Scatters a list of tensors from one rank.")
send = _needs_default_group("send", "Sends a tensor to one rank.")
recv = _needs_default_group("recv", "Receives a tensor from one rank.")
new_group = _needs_default_group("new_group", "A new group of some ranks.")
