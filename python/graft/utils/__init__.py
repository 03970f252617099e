"""graft.utils: graft.utils.data (datasets, samplers, DataLoader), graft.utils.hooks
(RemovableHandle), graft.utils.checkpoint (activation checkpointing) and graft.utils.memory
(estimate: the memory a training step needs, measured on the meta device)."""
from . import hooks  # noqa: F401
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
from . import memory  # noqa: F401
