"""Samplers: the order in which a DataLoader visits a map-style dataset (PyTorch's
torch.utils.data.sampler). Shuffles come from graft's RandomSampler (C++): without a
generator each epoch draws its seed from graft's default generator, so graft.manual_seed makes
them reproducible; with a graft.Generator each shuffle draws its seed from that generator, as
PyTorch's samplers draw from theirs, leaving the default generator alone."""
import warnings

from ... import _C

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler"]

_CHUNK = 32  # indices drawn at a time with replacement, as PyTorch 2.x's RandomSampler


def _draw_seed(generator=None):
    """A seed for one shuffle, drawn from graft's default generator or from `generator`."""
    if generator is not None and not isinstance(generator, _C.Generator):
        raise TypeError(f"generator must be a Generator, but got {type(generator).__name__}")
    return int(_C.empty((), dtype=_C.int64).random_(generator=generator).item())


class Sampler:
    """Base class: an iterable of dataset indices (or of index lists, for a batch sampler)."""

    def __init__(self, data_source=None):
        if data_source is not None:
            warnings.warn("`data_source` argument is not used and will be removed in 2.2.0. You may still have "
                          "custom implementation that utilizes it.")

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A new random permutation every epoch (or num_samples draws with replacement)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        if self.replacement:  # drawn lazily: num_samples may be far more than fits in memory
            core = _C._data.RandomSampler(len(self.data_source), True, _CHUNK, _draw_seed(self.generator))
            return _draws_with_replacement(core, self.num_samples)
        core = _C._data.RandomSampler(len(self.data_source), self.replacement, self.num_samples,
                                      _draw_seed(self.generator))
        return iter(core.next_epoch())

    def __len__(self):
        return self.num_samples


def _draws_with_replacement(core, num_samples):
    """num_samples draws, _CHUNK at a time as they are consumed, so that a huge num_samples
    costs nothing up front (PyTorch 2.x draws 32 with randint at a time). `core` is a seeded
    graft RandomSampler of _CHUNK draws whose epochs continue one generator's stream: the
    indices are those one epoch of num_samples draws from the same seed would give."""
    full, rest = divmod(num_samples, _CHUNK)
    for _ in range(full):
        yield from core.next_epoch()
    if rest:
        yield from core.next_epoch()[:rest]


class SubsetRandomSampler(Sampler):
    """The given indices in a new random order every epoch."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        if len(self.indices) == 0:
            return iter(())
        order = _C._data.RandomSampler(len(self.indices), seed=_draw_seed(self.generator)).next_epoch()
        return (self.indices[i] for i in order)

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size (the last one shorter unless
    drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
