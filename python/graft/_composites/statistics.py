"""Reductions and statistics: diff, trapezoid/trapz/cumulative_trapezoid, cov, corrcoef, aminmax,
nansum, nanmean, quantile/nanquantile and renorm (with the in-place renorm_)."""
import numbers
import warnings

from .. import _C
from .._tensor_types import _type_name
from ._common import (Tensor, _FLOATS, _accepts_int, _accepts_number, _check_tensor, _fmt, _graft, _int64, _int_arg,
                      _invalid_combination, _is_int, _parse, _scalar_name, _slice, _wrap_dim)
from .dtypes import _category
from .shape import _infer_size


# ---------------------------------------------------------------------------------------------
# differences and integration

def _diff_check_other(input, other, dim):
    if other is None:
        return
    if other.dim() != input.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(other.dim()):
        if i != dim and other.shape[i] != input.shape[i]:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input except "
                               f"along the differencing dimension; input.size({i}) = {input.shape[i]}, but got "
                               f"tensor.size({i}) = {other.shape[i]}")


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim`` (logical xor for bool), after concatenating
    ``prepend`` and ``append`` to input along that dim."""
    input, n, dim, prepend, append = _parse("diff", ("input", input, "Tensor", 1), ("n", n, "int", 2),
                                            ("dim", dim, "int", 3), ("prepend", prepend, "Tensor?", None),
                                            ("append", append, "Tensor?", None))
    if input.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:  # PyTorch 2.x's check (1.13 returns the input for a negative n)
        raise RuntimeError(f"order must be non-negative but got {n}")
    if prepend is not None or append is not None:
        d = _wrap_dim(dim, input.dim(), wrap_scalar=False)
        _diff_check_other(input, prepend, d)
        _diff_check_other(input, append, d)
    if n == 0:  # the input as it is, as PyTorch's (neither dim nor prepend and append used)
        return input.clone()
    d = _wrap_dim(dim, input.dim(), wrap_scalar=False)
    if prepend is not None or append is not None:
        input = _C.cat([t for t in (prepend, input, append) if t is not None], d)
    result, length = input, input.shape[d] - 1
    for _ in range(min(n, input.shape[d])):
        later, earlier = result.narrow(d, 1, length), result.narrow(d, 0, length)
        result = _C.logical_xor(later, earlier) if input.dtype == _C.bool else later - earlier
        length -= 1
    return result


def _zeros_except(y, dim):
    shape = list(y.shape)
    del shape[dim]
    return _C.zeros(shape, dtype=y.dtype, device=y.device)


def _check_dx(fname, dx):
    """dx (already a number) as a float; a bool is not a real number for PyTorch's integrators."""
    if isinstance(dx, bool):
        raise RuntimeError(f"{fname}: Currently, we only support dx as a real number.")
    return float(dx)


def _x_spacing(fname, y, x, d):
    """The spacings of the sample points x along dim d of y, broadcastable against y's pairs."""
    if y.dtype == _C.bool or x.dtype == _C.bool:
        raise NotImplementedError(f"{fname}: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{fname}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[d] = x.shape[0]
        x = x.reshape(shape)
    elif x.dim() < y.dim():
        x = x.reshape([1] * (y.dim() - x.dim()) + list(x.shape))
    return _slice(x, d, 1, None) - _slice(x, d, 0, -1)


_INTEGRATE_OVERLOADS = ("Tensor y, Tensor x, *, int dim = -1", "Tensor y, *, Number dx = 1, int dim = -1")
_TRAPZ_OVERLOADS = ("Tensor y, *, float dx = 1, int dim = -1", "Tensor y, Tensor x, *, int dim = -1")


def _integrate(fname, y, x, dx, dim, cumulative, signature=None):
    """trapezoid and cumulative_trapezoid; ``signature`` is the (name, overloads) of the function
    called, for its TypeErrors."""
    _check_tensor(fname, y, "y")
    name, overloads = signature or (fname, _INTEGRATE_OVERLOADS)
    if ((x is not None and (dx is not None or not isinstance(x, Tensor))) or not _accepts_int(dim)
            or (dx is not None and not _accepts_number(dx))):
        kwargs = {k: v for k, v in (("dx", dx), ("dim", dim)) if v is not None and (k, v) != ("dim", -1)}
        raise _invalid_combination(name, (y,) if x is None else (y, x), overloads, kwargs)
    dim = _int64(dim)
    if dx is not None:
        dx = dx.item() if isinstance(dx, Tensor) else dx
        if signature is None and _is_int(dx):  # a Number (trapz's dx is a float)
            _int64(dx)
    if x is None:
        if cumulative:
            if y.dtype == _C.bool:
                raise NotImplementedError(f"{fname}: received a bool input for `y`, but bool is not supported")
            dx = _check_dx(fname, 1 if dx is None else dx)
            if y.dim() == 0:
                raise IndexError("slice() cannot be applied to a 0-dim tensor.")
            d = _wrap_dim(dim, y.dim())
            return (dx / 2. * (_slice(y, d, 0, -1) + _slice(y, d, 1, None))).cumsum(d)
        d = _wrap_dim(dim, y.dim(), wrap_scalar=False)
        if y.shape[d] == 0:
            return _zeros_except(y, d)
        if y.dtype == _C.bool:
            raise NotImplementedError(f"{fname}: received a bool input for `y`, but bool is not supported")
        dx = _check_dx(fname, 1 if dx is None else dx)
        return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * dx
    d = _wrap_dim(dim, y.dim())
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not cumulative and y.shape[d] == 0:
        return _zeros_except(y, d)
    spacing = _x_spacing(fname, y, x, d)
    pairs = (_slice(y, d, 0, -1) + _slice(y, d, 1, None)) * spacing
    return (pairs.cumsum(d) if cumulative else pairs.sum(d)) / 2.


_UNSET = object()  # (None given for x or dx is refused, as PyTorch's overloads take no None there)


def _given(name, overloads, y, x, dx):
    """x and dx with None for those not given; an explicit None is an invalid combination."""
    if x is None or dx is None:
        raise _invalid_combination(name, (y,) if x is _UNSET else (y, x), overloads,
                                   {} if dx is _UNSET else {"dx": dx})
    return (None if x is _UNSET else x), (None if dx is _UNSET else dx)


def trapezoid(y, x=_UNSET, *, dx=_UNSET, dim=-1):
    """The trapezoidal-rule integral of y along ``dim``, with sample points x (a tensor) or a
    constant spacing dx (default 1)."""
    x, dx = _given("trapezoid", _INTEGRATE_OVERLOADS, y, x, dx)
    return _integrate("trapezoid", y, x, dx, dim, cumulative=False)


def trapz(y, x=_UNSET, *, dx=_UNSET, dim=-1):
    """trapezoid (PyTorch's older name; its dx is a float)."""
    x, dx = _given("trapz", _TRAPZ_OVERLOADS, y, x, dx)
    if isinstance(dx, bool) or (isinstance(dx, Tensor) and dx.dim() == 0 and dx.dtype == _C.bool):
        dx = float(dx)
    return _integrate("trapezoid", y, x, dx, dim, cumulative=False, signature=("trapz", _TRAPZ_OVERLOADS))


def cumulative_trapezoid(y, x=_UNSET, *, dx=_UNSET, dim=-1):
    """The running trapezoidal-rule integral of y along ``dim`` (one less element there)."""
    x, dx = _given("cumulative_trapezoid", _INTEGRATE_OVERLOADS, y, x, dx)
    return _integrate("cumulative_trapezoid", y, x, dx, dim, cumulative=True)



# ---------------------------------------------------------------------------------------------
# reductions and statistics

def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of input (observations in the columns),
    optionally with integer frequency weights and floating reliability weights."""
    input, correction, fweights, aweights = _parse(
        "cov", ("input", input, "Tensor", 1), ("correction", correction, "int", None),
        ("fweights", fweights, "Tensor?", None), ("aweights", aweights, "Tensor?", None))
    if input.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype == _C.bool:
        raise NotImplementedError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    w = None
    for name, weights, integral in (("fweights", fweights, True), ("aweights", aweights, False)):
        if weights is None:
            continue
        if weights.dim() > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                               f"{weights.dim()} dimensions")
        if integral != (_category(weights.dtype) == 1):
            kind = "integral" if integral else "floating point"
            raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                               f"{_scalar_name(weights.dtype)} dtype")
        if weights.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                               f"but got {weights.numel()} != {n}")
        if n and not bool((weights >= 0).all()):  # (NaN too)
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = weights if w is None else w * weights
    w_sum = _C.scalar_tensor(n, dtype=_C.int64) if w is None else w.sum()
    if w is not None and not bool(w_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = _C.zeros_like(norm_factor)
    x = x - avg.unsqueeze(1)
    c = _C.mm(x, (x if w is None else x * w).t())
    return _C.true_divide(c, norm_factor).squeeze()


def corrcoef(input):
    """The Pearson correlation coefficients of the variables in input's rows (cov normalised by
    the standard deviations, clipped to [-1, 1])."""
    _check_tensor("corrcoef", input)
    if input.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.as_strided([c.shape[0]], [c.stride(0) + c.stride(1)], c.storage_offset())
    stddev = d.sqrt()
    c = c / stddev.reshape(-1, 1)
    c = c / stddev.reshape(1, -1)
    return c.clip(-1, 1)


def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) of input over ``dim`` (all elements when None), as return_types.aminmax."""
    input, dim, keepdim = _parse("aminmax", ("input", input, "Tensor", 1), ("dim", dim, "int?", None),
                                 ("keepdim", keepdim, "bool", None))
    make = _graft.return_types.aminmax
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = list(range(input.dim()))
        return make(input.amin(dims, keepdim=keepdim), input.amax(dims, keepdim=keepdim))
    d = _wrap_dim(dim, input.dim())
    if input.dim() > 0 and input.shape[d] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    if input.dim() == 0:  # PyTorch 2.x: a 0-d result even with keepdim (1.13: shape [1])
        return make(input.clone(), input.clone())
    return make(input.amin(d, keepdim=keepdim), input.amax(d, keepdim=keepdim))


def _reduction_args(fname, input, dim, keepdim, dtype):
    """(dim, keepdim, dtype) of nansum and nanmean after PyTorch's parser's checks: dim an int, a
    sequence of ints or None, keepdim a bool, dtype a dtype or None."""
    _, dim, keepdim, dtype = _parse(fname, ("input", input, "Tensor", 1), ("dim", dim, "ints?", 2),
                                    ("keepdim", keepdim, "bool", 3), ("dtype", dtype, "dtype?", None))
    return dim, keepdim, dtype


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum of input over ``dim`` with NaNs counted as zero."""
    dim, keepdim, dtype = _reduction_args("nansum", input, dim, keepdim, dtype)
    x = input.masked_fill(_C.isnan(input), 0) if input.is_floating_point() else input
    return x.sum(dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN values of input over ``dim`` (NaN where there are none)."""
    dim, keepdim, dtype = _reduction_args("nanmean", input, dim, keepdim, dtype)
    if not input.is_floating_point():
        raise NotImplementedError("nanmean(): expected input to have floating point or complex dtype but got "
                                  f"{_scalar_name(input.dtype)}")
    if dtype is not None and dtype not in _FLOATS:
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {_scalar_name(dtype)}")
    count = _C.isnan(input).logical_not().sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype).div(count)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_q(input, q, ignore_nan, interpolation):
    """q as a tensor of input's dtype, after PyTorch's checks (in its order)."""
    if not isinstance(q, Tensor):
        if not isinstance(q, numbers.Real):
            raise TypeError(f"{'nan' if ignore_nan else ''}quantile(): argument 'q' (position 2) must be float, not "
                            f"{_type_name(q)}")
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {_fmt(float(q))}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if isinstance(q, Tensor) and q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (_C.float32, _C.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if not isinstance(q, Tensor):
        return _C.scalar_tensor(float(q), dtype=input.dtype)
    if q.dtype != input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    return q


_QUANTILE_OVERLOADS = tuple(f"Tensor input, {q} q, int dim = None, bool keepdim = False, *, str interpolation = "
                            '"linear"' for q in ("Tensor", "float"))


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    fname = "nanquantile" if ignore_nan else "quantile"
    if not (isinstance(input, Tensor) and (isinstance(q, Tensor) or isinstance(q, numbers.Real))
            and (dim is None or _accepts_int(dim)) and isinstance(keepdim, bool) and isinstance(interpolation, str)):
        kwargs = {k: v for k, v in (("dim", dim), ("keepdim", keepdim), ("interpolation", interpolation))
                  if v is not None and v is not False and not (isinstance(v, str) and v == "linear")}
        raise _invalid_combination(fname, (input, q), _QUANTILE_OVERLOADS, kwargs)
    dim = _int_arg(fname, "dim", dim, optional=True)
    q = _quantile_q(input, q, ignore_nan, interpolation)
    d = _wrap_dim(0 if dim is None else dim, input.dim())
    out_shape = []
    if dim is not None and input.dim() > 0:
        out_shape = list(input.shape)
        if keepdim:
            out_shape[d] = 1
        else:
            del out_shape[d]
    elif keepdim:
        out_shape = [1] * input.dim()
    if not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        values = input.reshape(-1)
    elif d == input.dim() - 1:
        values = input
    else:
        values = input.unsqueeze(-1).transpose(d, -1)
    values = values.sort(-1).values
    values = values.reshape(out_shape + [values.shape[-1]])
    if ignore_nan:
        ranks = q * (_C.isnan(values).logical_not().sum(-1, True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = values.shape[-1] - 1
        has_nan = _C.isnan(values).any(-1, keepdim=True)
        ranks = (q * last).expand(_infer_size(list(q.shape), list(has_nan.shape))).masked_fill(has_nan, last)
    if interpolation in ("lower", "higher", "nearest"):
        ranks = {"lower": ranks.floor, "higher": ranks.ceil, "nearest": ranks.round}[interpolation]()
    below_index = ranks.to(_C.int64)
    result = values.gather(-1, below_index)
    if interpolation in ("linear", "midpoint"):
        above = values.gather(-1, ranks.ceil().to(_C.int64))
        weights = _C.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below_index
        # torch.lerp's two formulas (exact at either end)
        result = _C.where(weights < 0.5, result + weights * (above - result), above - (above - result) * (1 - weights))
    if q.dim() == 0:
        return result.squeeze(-1)
    return result.unsqueeze(0).transpose(0, -1).squeeze(-1)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles of input over ``dim`` (all elements when None); q a number or a 0-d / 1-d
    tensor (its values become a leading dim). NaN where a reduced row has a NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile ignoring NaNs (NaN only where a reduced row is all NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)


def renorm(input, p, dim, maxnorm):
    """input with each sub-tensor along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to
    norm maxnorm."""
    for name, value in (("p", p), ("maxnorm", maxnorm)):
        if isinstance(value, complex):
            raise RuntimeError(f"renorm: {name} must be real-valued")
    input, p, dim, maxnorm = _parse("renorm", ("input", input, "Tensor", 1), ("p", p, "Number", 2),
                                    ("dim", dim, "int", 3), ("maxnorm", maxnorm, "Number", 4))
    p, maxnorm = (int(v) if isinstance(v, bool) else v for v in (p, maxnorm))
    if not p > 0:  # (NaN too)
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_fmt(float(maxnorm))}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    d = _wrap_dim(dim, input.dim())
    acc = _C.float32 if input.dtype in (_C.float16, _C.bfloat16) else None
    dims = [i for i in range(input.dim()) if i != d]
    scaled = _C.linalg_vector_norm(input.detach(), p, dims, True, dtype=acc) > maxnorm
    # the norms again, differentiably, of the scaled sub-tensors only (the others' are replaced by
    # ones), so that a non-finite sub-tensor left as it is gets the plain gradient, as PyTorch's
    norm = _C.linalg_vector_norm(_C.where(scaled, input, 1.0), p, dims, True, dtype=acc)
    factor = _C.where(scaled, maxnorm / (norm + 1e-7), 1.0)
    return input * (factor if acc is None else factor.to(input.dtype))


def _renorm_(self, p, dim, maxnorm):
    """In-place renorm (the result is computed from a copy, so autograd's saved input is intact)."""
    return self.copy_(renorm(self.clone(), p, dim, maxnorm))
