"""graft.utils: graft.utils.data (datasets, samplers, DataLoader)."""
from . import data  # noqa: F401
