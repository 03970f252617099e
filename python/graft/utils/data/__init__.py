"""graft.utils.data: PyTorch's torch.utils.data over graft tensors - datasets, samplers,
default_collate and a DataLoader whose workers are threads (see dataloader.py)."""
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler
from .dataloader import DataLoader, WorkerInfo, default_collate, default_convert, get_worker_info
from . import _utils  # noqa: F401

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
           "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WorkerInfo", "default_collate", "default_convert", "get_worker_info", "random_split"]
