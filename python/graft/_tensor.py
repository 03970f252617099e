"""Python-side pieces of graft.Tensor: graft.Size, graft.return_types, and the few Tensor
methods that are plain Python in PyTorch too (copying, pickling support)."""
import collections

from . import _C


class Size(tuple):
    """The shape of a tensor: a tuple of ints, printed as ``graft.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self):
        return f"graft.Size({list(self)!r})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))


class _ReturnTypes:
    """graft.return_types.max(values, indices) and friends: named tuples, as torch.return_types."""

    max = collections.namedtuple("max", ["values", "indices"])
    min = collections.namedtuple("min", ["values", "indices"])
    sort = collections.namedtuple("sort", ["values", "indices"])
    topk = collections.namedtuple("topk", ["values", "indices"])
    kthvalue = collections.namedtuple("kthvalue", ["values", "indices"])
    median = collections.namedtuple("median", ["values", "indices"])
    nanmedian = collections.namedtuple("nanmedian", ["values", "indices"])
    cummax = collections.namedtuple("cummax", ["values", "indices"])
    cummin = collections.namedtuple("cummin", ["values", "indices"])
    aminmax = collections.namedtuple("aminmax", ["min", "max"])
    linalg_slogdet = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
    slogdet = collections.namedtuple("slogdet", ["sign", "logabsdet"])
    linalg_qr = collections.namedtuple("linalg_qr", ["Q", "R"])
    qr = collections.namedtuple("qr", ["Q", "R"])
    linalg_svd = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
    svd = collections.namedtuple("svd", ["U", "S", "V"])
    linalg_eigh = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
    triangular_solve = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
    linalg_lstsq = collections.namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
    # var_mean and std_mean return plain tuples in PyTorch (the bindings look a pair type up by
    # the op's name)
    var_mean = staticmethod(lambda var, mean: (var, mean))
    std_mean = staticmethod(lambda std, mean: (std, mean))


return_types = _ReturnTypes()
_C._set_size_class(Size)
_C._set_return_types(return_types)


def _deepcopy(self, memo):
    """copy.deepcopy(tensor): a new leaf with copied data, requires_grad and .grad (a graph
    non-leaf cannot be deep-copied, as in PyTorch)."""
    if not self.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment. "
            "If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, "
            "see https://github.com/pytorch/pytorch/pull/103001")
    if id(self) in memo:
        return memo[id(self)]
    from .autograd.grad_mode import no_grad
    with no_grad():
        new = self.detach().clone()
    if type(self) is not _C.Tensor:
        new = type(self)(new, self.requires_grad)
    else:
        new.requires_grad_(self.requires_grad)
    if self.grad is not None:
        new.grad = _deepcopy(self.grad, memo)
    memo[id(self)] = new
    return new


_C.Tensor.__deepcopy__ = _deepcopy


def _copy(self):
    """copy.copy(tensor): as PyTorch, a new leaf that shares the storage, with the same
    requires_grad (no graph history, no .grad)."""
    new = self.detach()
    if type(self) is not _C.Tensor:
        return type(self)(new, self.requires_grad)
    return new.requires_grad_(self.requires_grad)


def _rebuild_tensor(values, dtype_name, shape, requires_grad):
    """Unpickles a tensor written by Tensor.__reduce_ex__."""
    t = _C.tensor(values, dtype=getattr(_C, dtype_name)).reshape(shape)
    return t.requires_grad_(requires_grad)


def _reduce_ex(self, protocol):
    """pickle support: the values (as nested lists), dtype, shape and requires_grad; the
    unpickled tensor is a new leaf with its own contiguous storage (.grad is not kept, as in
    PyTorch)."""
    if self.device.type != "cpu":
        raise NotImplementedError(f"pickling a tensor on {self.device} is not supported; move it to the CPU first")
    values = self.detach().reshape(-1).tolist()
    return (_rebuild_tensor, (values, str(self.dtype).split(".")[-1], list(self.shape), self.requires_grad))


def _tuple_method(method):
    """Wraps a Tensor method that returns a list so that it returns a tuple, as PyTorch's."""
    def wrapper(self, *args, **kwargs):
        return tuple(method(self, *args, **kwargs))

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return wrapper


_C.Tensor.__copy__ = _copy
_C.Tensor.__reduce_ex__ = _reduce_ex
_C.Tensor.split = _tuple_method(_C.Tensor.split)
_C.Tensor.chunk = _tuple_method(_C.Tensor.chunk)
_C.device.__reduce__ = lambda self: (_C.device, (str(self),))
