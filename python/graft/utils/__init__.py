"""graft.utils: graft.utils.data (datasets, samplers, DataLoader) and graft.utils.hooks
(RemovableHandle)."""
from . import hooks  # noqa: F401
from . import data  # noqa: F401
