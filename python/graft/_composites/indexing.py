"""Indexing composites: repeat_interleave, take, index_fill (with the in-place index_fill_) and the
scatters select_scatter, slice_scatter and diagonal_scatter; and the repeat_interleave Tensor method."""
from .. import _C
from ._common import (Tensor, _accepts_int, _accepts_number, _check_tensor, _int64, _invalid_combination, _missing,
                      _number_arg, _parse, _scalar_name, _wrap_dim)


def _repeat_indices(repeats, output_size=None):
    """torch.repeat_interleave(repeats): each index i repeated repeats[i] times (repeats' dtype)."""
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (_C.int64, _C.int32):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_scalar_name(repeats.dtype)}'")
    if repeats.shape[0] == 0:
        return _C.empty_like(repeats)
    counts = repeats.to(_C.int64)
    total = int(counts.sum().item())
    if output_size is None and bool((counts < 0).any()):
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    # block i starts at the sum of the counts before it; the index at a position is the number
    # of blocks after the first that start at or before it
    starts = counts.cumsum(0).narrow(0, 0, counts.shape[0] - 1)
    marks = _C.zeros(total + 1, dtype=_C.int64, device=repeats.device)
    marks = marks.scatter_add(0, starts, _C.ones_like(starts))
    return marks.cumsum(0).narrow(0, 0, total).to(repeats.dtype)


_REPEAT_INTERLEAVE_OVERLOADS = ("Tensor input, Tensor repeats, int dim = None, *, int output_size = None",
                                "Tensor repeats, *, int output_size = None",
                                "Tensor input, int repeats, int dim = None, *, int output_size = None")


_NO_INPUT = object()


def repeat_interleave(_input=_NO_INPUT, /, repeats=_NO_INPUT, dim=None, *, output_size=None, input=_NO_INPUT):
    """repeat_interleave(input, repeats, dim=None, *, output_size=None): each element of input
    (flattened when dim is None) repeated ``repeats`` times along ``dim`` (an int, or a tensor of
    one count per element); repeat_interleave(repeats) alone gives the indices each repeated so
    often (the repeats positional, or by the name repeats, not input)."""
    if _input is not _NO_INPUT and input is not _NO_INPUT:
        raise TypeError("repeat_interleave() got multiple values for argument 'input'")
    if input is not _NO_INPUT and repeats is _NO_INPUT:
        raise _missing("repeat_interleave", "repeats")
    if _input is _NO_INPUT and input is _NO_INPUT:  # repeat_interleave(repeats=...)
        input, repeats = repeats, _NO_INPUT
    input = _input if input is _NO_INPUT else input
    if repeats is None:  # (given: the overloads take a tensor or an int)
        raise _invalid_combination("repeat_interleave", (input,), _REPEAT_INTERLEAVE_OVERLOADS, {"repeats": None})
    repeats = None if repeats is _NO_INPUT else repeats
    if not (isinstance(input, Tensor) and (repeats is None or isinstance(repeats, Tensor) or _accepts_int(repeats))
            and (dim is None or (repeats is not None and _accepts_int(dim)))
            and (output_size is None or _accepts_int(output_size))):
        kwargs = {k: v for k, v in (("dim", dim), ("output_size", output_size)) if v is not None}
        given = tuple(a for a in (input, repeats) if a is not None and a is not _NO_INPUT)
        raise _invalid_combination("repeat_interleave", given, _REPEAT_INTERLEAVE_OVERLOADS, kwargs)
    dim = None if dim is None else _int64(dim)
    output_size = None if output_size is None else _int64(output_size)
    if repeats is None:
        return _repeat_indices(input, output_size)
    flat = input if dim is not None else input.reshape(-1)
    if isinstance(repeats, Tensor):
        if repeats.dim() > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        dim = 0 if dim is None else dim
        d = _wrap_dim(dim, flat.dim(), wrap_scalar=False)
        size = flat.shape[d]
        if repeats.numel() == 1:
            repeats = repeats.reshape(1).expand(size)
        elif repeats.shape[0] != size:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{repeats.shape[0]} and input.size({dim}) = {size}")
        return flat.index_select(d, _repeat_indices(repeats, output_size))
    repeats = _int64(repeats)
    d = _wrap_dim(0 if dim is None else dim, input.dim())
    if repeats < 0:  # PyTorch 2.x's check, even for an empty input (1.13 returns it)
        raise RuntimeError("Repeats must be non-negative")
    expanded = flat.unsqueeze(d + 1)
    shape = list(expanded.shape)
    if output_size is not None and output_size != shape[d] * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {shape[d] * repeats} but got "
                           f"{output_size}")
    shape[d + 1] = repeats
    result_shape = list(flat.shape)
    result_shape[d] *= repeats
    return expanded.expand(shape).reshape(result_shape)


def take(input, index):
    """The elements of input (as if flattened) at ``index`` (a long tensor; negative counts from
    the end), in index's shape."""
    _parse("take", ("input", input, "Tensor", 1), ("index", index, "Tensor", 2))
    if index.dtype != _C.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_scalar_name(index.dtype)}")
    n = input.numel()
    if n == 0 and index.numel() > 0:
        raise IndexError("take(): tried to take from an empty tensor")
    flat_index = index.reshape(-1)
    bad = (flat_index < -n) | (flat_index >= n)
    if bool(bad.any()):
        first = int(flat_index.masked_select(bad)[0].item())
        raise IndexError(f"out of range: tried to access index {first} on a tensor of {n} elements.")
    flat_index = _C.where(flat_index < 0, flat_index + n, flat_index)
    return input.reshape(-1).index_select(0, flat_index).reshape(index.shape)


_INDEX_FILL_OVERLOADS = ("int dim, Tensor index, Tensor value", "Dimname dim, Tensor index, Tensor value",
                         "int dim, Tensor index, Number value", "Dimname dim, Tensor index, Number value")


def _index_fill_mask(self, dim, index, value, fname="index_fill"):
    """The bool mask (broadcastable to self) of the positions index_fill fills, and the value (a
    0-dim tensor or a Python number)."""
    if not (_accepts_int(dim) and isinstance(index, Tensor) and (isinstance(value, Tensor) or _accepts_number(value))):
        raise _invalid_combination(fname, (dim, index, value), _INDEX_FILL_OVERLOADS)
    dim = _int64(dim)
    if not isinstance(value, Tensor):
        value = _number_arg(fname, "value", value)
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    if index.dtype != _C.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = _wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    size = self.shape[d] if self.dim() else 1
    idx = index.reshape(-1)
    bad = (idx < -size) | (idx >= size)
    if bool(bad.any()):
        first = int(idx.masked_select(bad)[0].item())
        raise IndexError(f"index {first} is out of bounds for dimension {d} with size {size}")
    idx = _C.where(idx < 0, idx + size, idx)
    hits = _C.zeros(size, dtype=_C.int64, device=self.device).scatter_add(0, idx, _C.ones_like(idx)) > 0
    shape = [1] * self.dim()
    if shape:
        shape[d] = size
    return hits.reshape(shape), value


def index_fill(input, dim, index, value):
    """input with the entries at ``index`` along ``dim`` set to ``value`` (a number or a 0-d tensor)."""
    _check_tensor("index_fill", input)
    mask, value = _index_fill_mask(input, dim, index, value)
    return input.masked_fill(mask, value)


def _index_fill_(self, dim, index, value):
    """In-place index_fill."""
    mask, value = _index_fill_mask(self, dim, index, value, "index_fill_")
    return self.masked_fill_(mask, value)


def _scatter_into(view, src, out):
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    view.copy_(src)
    return out


def select_scatter(input, src, dim, index):
    """A copy of input with input.select(dim, index) replaced by src."""
    input, src, dim, index = _parse("select_scatter", ("input", input, "Tensor", 1), ("src", src, "Tensor", 2),
                                    ("dim", dim, "int", 3), ("index", index, "int", 4))
    out = input.clone()
    return _scatter_into(out.select(dim, index), src, out)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of input with the slice start:end:step along ``dim`` replaced by src."""
    input, src, dim, start, end, step = _parse(
        "slice_scatter", ("input", input, "Tensor", 1), ("src", src, "Tensor", 2), ("dim", dim, "int", 3),
        ("start", start, "int?", 4), ("end", end, "int?", 5), ("step", step, "int", 6))
    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.dim())
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    out = input.clone()
    view = out[(slice(None),) * d + (slice(start, end, step),)]
    return _scatter_into(view, src, out)


def _diagonal_view(t, offset, dim1, dim2):
    """t.diagonal(offset, dim1, dim2): a view, the diagonal as the last dim."""
    d1, d2 = _wrap_dim(dim1, t.dim()), _wrap_dim(dim2, t.dim())
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    sizes, strides, start = list(t.shape), list(t.stride()), t.storage_offset()
    if offset >= 0:
        length = max(min(sizes[d1], sizes[d2] - offset), 0)
        start += offset * strides[d2] if length else 0
    else:
        length = max(min(sizes[d1] + offset, sizes[d2]), 0)
        start -= offset * strides[d1] if length else 0
    keep = [i for i in range(t.dim()) if i not in (d1, d2)]
    return t.as_strided([sizes[i] for i in keep] + [length], [strides[i] for i in keep] + [strides[d1] + strides[d2]],
                        start)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with its diagonal (offset, dim1, dim2; as torch.diagonal) replaced by src."""
    input, src, offset, dim1, dim2 = _parse(
        "diagonal_scatter", ("input", input, "Tensor", 1), ("src", src, "Tensor", 2), ("offset", offset, "int", 3),
        ("dim1", dim1, "int", 4), ("dim2", dim2, "int", 5))
    out = input.clone()
    return _scatter_into(_diagonal_view(out, offset, dim1, dim2), src, out)



def _repeat_interleave_method(self, repeats, dim=None, *, output_size=None):
    """Tensor.repeat_interleave(repeats, dim=None, *, output_size=None): torch.repeat_interleave of self."""
    if repeats is None:
        raise _invalid_combination("repeat_interleave", (), _REPEAT_INTERLEAVE_OVERLOADS, {"repeats": repeats})
    return repeat_interleave(self, repeats, dim, output_size=output_size)
