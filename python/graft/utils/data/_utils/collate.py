"""default_collate and default_convert: how a DataLoader turns samples into batches
(PyTorch's torch.utils.data._utils.collate). Tensors are stacked with graft.stack; numpy
arrays and Python numbers become tensors; dicts, named tuples and sequences are collated
field by field; strings are kept as lists."""
import collections.abc
import copy
import re

from .... import _C

__all__ = ["default_collate", "default_convert"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def _is_numpy(obj):
    t = type(obj)
    return t.__module__ == "numpy" and t.__name__ not in ("str_", "string_")


def _rebuilt_mapping(like, values):
    """``values()`` (a dict) in a mapping of ``like``'s type, as PyTorch tries it: a copy of a
    mutable mapping updated, else the type called with the dict; on TypeError (from any of
    these, the values' own collation included) the dict computed again, plain."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values())
            return clone
        return type(like)(values())
    except TypeError:
        return values()


def _rebuilt_sequence(like, items):
    """``items()`` (a list) in a sequence of ``like``'s type: a copy of a mutable sequence with
    each item replaced, else the type called with the list; on TypeError the list computed
    again, plain (PyTorch's order of attempts)."""
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items()):
                clone[i] = item
            return clone
        return type(like)(items())
    except TypeError:
        return items()


def default_convert(data):
    """Converts one sample (automatic batching off): numpy arrays -> tensors, recursively in
    dicts, named tuples and sequences; everything else is kept."""
    elem_type = type(data)
    if isinstance(data, _C.Tensor):
        return data
    if _is_numpy(data):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if np_str_obj_array_pattern.search(data.dtype.str) is not None:
                return data
            return _C.as_tensor(data)
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt_mapping(data, lambda: {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt_sequence(data, lambda: [default_convert(d) for d in data])
    return data


def default_collate(batch):
    """Collates a list of samples into a batch, as PyTorch's default_collate."""
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, _C.Tensor):
        return _C.stack(list(batch), 0)
    if _is_numpy(elem):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
                raise TypeError(default_collate_err_msg_format.format(elem.dtype))
            return default_collate([_C.as_tensor(b) for b in batch])
        if elem.shape == ():  # numpy scalars keep their dtype
            import numpy as np
            return _C.as_tensor(np.array(batch))
    elif isinstance(elem, float):
        return _C.tensor(list(batch), dtype=_C.float64)
    elif isinstance(elem, int):
        return _C.tensor(list(batch))
    elif isinstance(elem, (str, bytes)):
        return batch
    elif isinstance(elem, collections.abc.Mapping):
        return _rebuilt_mapping(elem, lambda: {key: default_collate([d[key] for d in batch]) for key in elem})
    elif isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    elif isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        return _rebuilt_sequence(elem, lambda: [default_collate(samples) for samples in transposed])
    raise TypeError(default_collate_err_msg_format.format(elem_type))
