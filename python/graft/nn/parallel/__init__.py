"""graft.nn.parallel: torch.nn.parallel's wrappers. graft runs on the CPU (and meta) only, so
DataParallel behaves as PyTorch's does on a machine without GPUs (it calls the wrapped module),
and DistributedDataParallel refuses construction as PyTorch's does before
``init_process_group`` (graft.distributed has no collective backend yet)."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
