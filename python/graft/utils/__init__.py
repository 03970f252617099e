"""graft.utils: graft.utils.data (datasets, samplers, DataLoader), graft.utils.hooks
(RemovableHandle) and graft.utils.checkpoint (activation checkpointing)."""
from . import hooks  # noqa: F401
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
