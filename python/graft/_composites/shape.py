"""Shape composites: movedim/moveaxis, swapdims, atleast_1d/2d/3d, the stack family (hstack,
vstack, row_stack, dstack, column_stack), broadcast_tensors/_to/_shapes, ravel, fliplr/flipud, rot90,
tile, tensor_split and hsplit/vsplit/dsplit; and the adapters of the Tensor methods that take their
ints as varargs (tile, broadcast_to, hsplit, ...)."""
import collections.abc

from .. import _C
from .._tensor import Size
from .._tensor_types import _type_name
from ._common import (Tensor, _SCALAR_NAMES, _accepts_int, _check_pieces, _check_tensor, _int64, _int_list,
                      _invalid_combination, _is_int_list, _parse, _scalar_name, _slice, _varargs_ints, _wrap_dim)


_MOVEDIM_OVERLOADS = ("Tensor input, tuple of ints source, tuple of ints destination",
                      "Tensor input, int source, int destination")


def _movedim(fname, input, source, destination):
    _check_tensor(fname, input)
    if _accepts_int(source) and _accepts_int(destination):  # the overload of two ints
        src, dst = [_int64(source)], [_int64(destination)]
    elif _is_int_list(source) and _is_int_list(destination):
        src = _int_list(fname, "source", source, 2, single=False)
        dst = _int_list(fname, "destination", destination, 3, single=False)
    else:
        raise _invalid_combination(fname, (input, source, destination), _MOVEDIM_OVERLOADS)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the same "
                           f"number of dims as destination ({dst} dims)")
    ndim = input.dim()
    norm_src = [_wrap_dim(d, ndim) for d in src]
    norm_dst = [_wrap_dim(d, ndim) for d in dst]
    if len(set(norm_src)) != len(norm_src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(norm_dst)) != len(norm_dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    if ndim == 0:
        return input.permute([])
    order = [-1] * ndim
    for s, d in zip(norm_src, norm_dst):
        order[d] = s
    rest = iter(i for i in range(ndim) if i not in norm_src)
    return input.permute([next(rest) if o == -1 else o for o in order])


def movedim(input, source, destination):
    """Moves the dims ``source`` of input to the positions ``destination`` (two ints, or two
    sequences of ints); the other dims keep their order. A view."""
    return _movedim("movedim", input, source, destination)


def moveaxis(input, source, destination):
    """movedim (PyTorch's numpy-style alias)."""
    return _movedim("moveaxis", input, source, destination)


def swapdims(input, dim0, dim1):
    """input.transpose(dim0, dim1) (PyTorch's alias, as swapaxes)."""
    return _check_tensor("swapdims", input).transpose(dim0, dim1)


def _atleast(fname, make, tensors):
    if len(tensors) == 1:
        if isinstance(tensors[0], Tensor):
            return make(tensors[0])
        if isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
    for t in tensors:
        if not isinstance(t, Tensor):
            raise _invalid_combination(fname, tensors, ("Tensor input", "tuple of Tensors tensors"))
    return tuple(make(t) for t in tensors)


def _at1(t):
    return t.reshape(1) if t.dim() == 0 else t


def _at2(t):
    if t.dim() == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.dim() == 1 else t


def _at3(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.dim() == 2 else t


def atleast_1d(*tensors):
    """The tensor (or each of the tensors) viewed with at least one dim (0-d becomes shape [1])."""
    return _atleast("atleast_1d", _at1, tensors)


def atleast_2d(*tensors):
    """The tensor (or each of the tensors) viewed with at least two dims (1-d [n] becomes [1, n])."""
    return _atleast("atleast_2d", _at2, tensors)


def atleast_3d(*tensors):
    """The tensor (or each) with at least three dims: [n] becomes [1, n, 1], [m, n] becomes [m, n, 1]."""
    return _atleast("atleast_3d", _at3, tensors)


def _tensor_list(fname, tensors):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{_type_name(tensors)}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {_type_name(t)}")
    if not tensors:
        raise RuntimeError(f"{'vstack' if fname == 'row_stack' else fname} expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors):
    """Concatenates column-wise: along dim 1, or dim 0 when the tensors are 1-d (0-d count as 1-d)."""
    rep = [_at1(t) for t in _tensor_list("hstack", tensors)]
    return _C.cat(rep, 0 if rep[0].dim() == 1 else 1)


def vstack(tensors):
    """Concatenates row-wise (dim 0) the tensors made at least 2-d."""
    return _C.cat([_at2(t) for t in _tensor_list("vstack", tensors)], 0)


def row_stack(tensors):
    """vstack (PyTorch's alias)."""
    return _C.cat([_at2(t) for t in _tensor_list("row_stack", tensors)], 0)


def dstack(tensors):
    """Concatenates depth-wise (dim 2) the tensors made at least 3-d."""
    return _C.cat([_at3(t) for t in _tensor_list("dstack", tensors)], 2)


def column_stack(tensors):
    """hstack of the tensors, 0-d and 1-d ones first made columns of shape [n, 1]."""
    tensors = _tensor_list("column_stack", tensors)
    return hstack([t.reshape(t.numel(), 1) if t.dim() <= 1 else t for t in tensors])


def _infer_size(a, b):
    """The broadcast shape of two shapes, with PyTorch's message (tensor a is the first)."""
    ndim = max(len(a), len(b))
    out = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        offset = ndim - 1 - i
        sa = a[len(a) - 1 - offset] if offset < len(a) else 1
        sb = b[len(b) - 1 - offset] if offset < len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                               f"non-singleton dimension {i}")
        out[i] = sb if sa == 1 else sa
    return out


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views), as a tuple."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {_type_name(t)}")
    shape = []
    for t in tensors:
        shape = _infer_size(shape, list(t.shape))
    return tuple(t.expand(shape) for t in tensors)


def broadcast_to(input, size):
    """input expanded to ``size`` (a view; -1 keeps a dim)."""
    input, size = _parse("broadcast_to", ("input", input, "Tensor", 1), ("size", size, "int[]", 2))
    if len(size) < input.dim():
        legacy = f"torch.{_SCALAR_NAMES[input.dtype]}Tensor"
        raise RuntimeError(f"expand({legacy}{{{list(input.shape)}}}, size={size}): the number of sizes provided "
                           f"({len(size)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({input.dim()})")
    return input.expand(size)


def broadcast_shapes(*shapes):
    """The shape tensors of the given shapes (ints or sequences of ints) broadcast to, as a Size."""
    shapes = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, collections.abc.Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common = [1] * max(len(s) for s in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! "
                                   f"Mismatching argument at index {arg_idx} had {shape}; but expected shape should be "
                                   f"broadcastable to {common}")
    return Size([_size_item(i, s) for i, s in enumerate(common)])


def _size_item(i, value):
    """An element of a Size as PyTorch's torch.Size() takes it: any int (a bool too), or a 0-dim
    integer tensor; TypeError for another type."""
    if isinstance(value, int):  # (any int: torch.Size holds ints beyond int64 too)
        return int(value)
    if isinstance(value, Tensor) and _accepts_int(value):
        return _int64(value)
    raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{_type_name(value)}')")


def ravel(input):
    """input flattened to 1-d (a view when input is contiguous)."""
    return _check_tensor("ravel", input).reshape(-1)


def fliplr(input):
    """input flipped left-right (dim 1); input must be at least 2-d."""
    if _check_tensor("fliplr", input).dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip([1])


def flipud(input):
    """input flipped up-down (dim 0); input must be at least 1-d."""
    if _check_tensor("flipud", input).dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip([0])


def rot90(input, k=1, dims=(0, 1)):
    """input rotated by 90 degrees k times, from the first towards the second of ``dims``."""
    input, k, dims = _parse("rot90", ("input", input, "Tensor", 1), ("k", k, "int", 2), ("dims", dims, "int[]", 3))
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    ndim = input.dim()
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = _wrap_dim(dims[0], ndim), _wrap_dim(dims[1], ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


def tile(input, dims):
    """input repeated ``dims`` times along each dim; ``dims`` shorter than input's dims is padded
    with leading ones (numpy.tile)."""
    input, dims = _parse("tile", ("input", input, "Tensor", 1), ("dims", dims, "int[]", 2))
    if len(dims) < input.dim():
        dims = [1] * (input.dim() - len(dims)) + dims
    return input.repeat(dims)


_TENSOR_SPLIT_OVERLOADS = ("Tensor input, tuple of ints indices, int dim = 0",
                           "Tensor input, Tensor tensor_indices_or_sections, int dim = 0",
                           "Tensor input, int sections, int dim = 0")


def _split_sections(input, sections, dim):
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap_dim(dim, input.dim())
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    _check_pieces(sections)
    size = input.shape[d]
    base, extra = divmod(size, sections)
    out, start = [], 0
    for i in range(sections):
        length = base + (1 if i < extra else 0)
        out.append(input.narrow(d, start, length))
        start += length
    return tuple(out)


def _split_indices(input, indices, dim):
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap_dim(dim, input.dim())
    out, start = [], 0
    for end in indices:
        out.append(_slice(input, d, start, end))
        start = end
    out.append(_slice(input, d, start, None))
    return tuple(out)


def _bind_split(fname, args, kwargs, keywords, overloads, has_dim):
    """(input, the sections or indices, the keyword they came by or None, dim) of a split's call as
    PyTorch's parser binds it: (input, sections or indices[, dim]) by position, or by the names
    input, ``keywords`` and dim; else its TypeError."""
    names = ["input", None] + (["dim"] if has_dim else [])
    bad = len(args) > len(names)
    values = dict(zip(names, args))
    key = None
    for k, v in kwargs.items():
        if k in keywords and None not in values:
            values[None], key = v, k
        elif k in ("input", "dim")[:len(names) - 1] and k not in values:
            values[k] = v
        else:
            bad = True
    if bad or "input" not in values or None not in values:
        raise _invalid_combination(fname, args, overloads, kwargs)
    return values["input"], values[None], key, values.get("dim", 0)


def tensor_split(*args, **kwargs):
    """tensor_split(input, sections or indices, dim=0): input split along ``dim`` into ``sections``
    near-equal views (an int: the first size % sections get one more), or at the ``indices`` (a
    sequence of ints, or a 0-d / 1-d long tensor)."""
    keywords = ("indices", "tensor_indices_or_sections", "sections")
    input, arg, key, dim = _bind_split("tensor_split", args, kwargs, keywords, _TENSOR_SPLIT_OVERLOADS, True)
    kind = key or ("tensor_indices_or_sections" if isinstance(arg, Tensor) else "sections" if _accepts_int(arg)
                   else "indices")
    ok = {"tensor_indices_or_sections": isinstance(arg, Tensor), "sections": _accepts_int(arg),
          "indices": _is_int_list(arg)}[kind]
    if not (ok and isinstance(input, Tensor) and _accepts_int(dim)):
        raise _invalid_combination("tensor_split", args, _TENSOR_SPLIT_OVERLOADS, kwargs)
    dim = _int64(dim)
    if kind == "sections":
        return _split_sections(input, _int64(arg), dim)
    if kind == "indices":
        return _split_indices(input, _int_list("tensor_split", "indices", arg, 2, single=False), dim)
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    if arg.dtype != _C.int64:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{_scalar_name(arg.dtype)}")
    if arg.dim() > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {arg.dim()} dims")
    if arg.dim() == 0:
        return _split_sections(input, int(arg.item()), dim)
    return _split_indices(input, arg.tolist(), dim)


def _dim_split(fname, args, kwargs, dim, min_dims):
    """hsplit, vsplit and dsplit: (Tensor input, int sections) or (Tensor input, int[] indices)."""
    overloads = ("Tensor input, int sections", "Tensor input, tuple of ints indices")
    input, arg, key, _ = _bind_split(fname, args, kwargs, ("sections", "indices"), overloads, False)
    sections = key != "indices" and _accepts_int(arg)
    if not (isinstance(input, Tensor) and (sections or (key != "sections" and _is_int_list(arg)))):
        raise _invalid_combination(fname, args, overloads, kwargs)
    arg = _int64(arg) if sections else _int_list(fname, "indices", arg, 2, single=False)
    if input.dim() < min_dims:
        raise RuntimeError(f"torch.{fname} requires a tensor with at least {min_dims} dimension, but got a tensor "
                           f"with {input.dim()} dimensions!")
    if dim == 1 and input.dim() == 1:
        dim = 0  # hsplit splits a 1-d tensor along dim 0
    if sections:
        size = input.shape[dim]
        if arg == 0 or size % arg != 0:
            raise RuntimeError(f"torch.{fname} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{size} is not divisible by the split_size {arg}!")
        return _split_sections(input, arg, dim)
    return _split_indices(input, arg, dim)


def hsplit(*args, **kwargs):
    """hsplit(input, sections or indices): tensor_split along dim 1 (dim 0 for a 1-d tensor); an
    int must divide that dim."""
    return _dim_split("hsplit", args, kwargs, 1, 1)


def vsplit(*args, **kwargs):
    """vsplit(input, sections or indices): tensor_split along dim 0 of a tensor of at least two
    dims; an int must divide that dim."""
    return _dim_split("vsplit", args, kwargs, 0, 2)


def dsplit(*args, **kwargs):
    """dsplit(input, sections or indices): tensor_split along dim 2 of a tensor of at least three
    dims; an int must divide that dim."""
    return _dim_split("dsplit", args, kwargs, 2, 3)


# ---------------------------------------------------------------------------------------------
# Tensor methods whose arguments differ from the functions'

def _tile_method(self, *dims):
    """Tensor.tile(*dims): torch.tile(self, dims); the dims as ints or one sequence."""
    return tile(self, _varargs_ints(dims, "tile", "dims"))



def _broadcast_to_method(self, *size):
    """Tensor.broadcast_to(*size): torch.broadcast_to(self, size); the size as ints or one sequence."""
    return broadcast_to(self, _varargs_ints(size, "broadcast_to", "size"))


def _split_method(function, name):
    def method(self, *args, **kwargs):
        """Tensor.<name>(sections) / (indices) / (*indices)."""
        if len(args) > 1:  # the indices as varargs
            args = (list(args),)
        elif args and isinstance(args[0], Tensor) and args[0].dim() > 0 and args[0].numel() == 1:
            args = ([args[0].reshape(())],)  # one index (PyTorch's parser reads the varargs as a list)
        return function(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = function.__doc__
    return method
