"""Internals of graft.utils.data (collate functions), at PyTorch's module paths."""
from . import collate  # noqa: F401
