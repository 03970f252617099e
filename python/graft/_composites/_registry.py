"""Registration of the composites: the table of the functions set on the graft module, the names of
those also set as graft.Tensor methods (input as self), the method adapters, and _register, which
sets them all, and the arc* aliases, never replacing what graft already has."""
from ._common import Tensor, _graft
from .aliases import _ALIASES, positive, rsub
from .dtypes import (can_cast, e, inf, is_complex, is_nonzero, is_same_size, is_signed, nan, pi, promote_types,
                     result_type)
from .householder import _orgqr_method, orgqr
from .indexing import (_index_fill_, _repeat_interleave_method, diagonal_scatter, index_fill, repeat_interleave,
                       select_scatter, slice_scatter, take)
from .linalg import (chain_matmul, cholesky, combinations, ger, inner, matrix_power, msort, qr, triangular_solve,
                     tril_indices, triu_indices, vander, vdot)
from .matrix_exponential import matrix_exp
from .shape import (_broadcast_to_method, _split_method, _tile_method, atleast_1d, atleast_2d, atleast_3d,
                    broadcast_shapes, broadcast_tensors, broadcast_to, column_stack, dsplit, dstack, flipud, fliplr,
                    hsplit, hstack, moveaxis, movedim, ravel, rot90, row_stack, swapdims, tensor_split, tile, vsplit,
                    vstack)
from .statistics import (_renorm_, aminmax, corrcoef, cov, cumulative_trapezoid, diff, nanmean, nanquantile, nansum,
                         quantile, renorm, trapezoid, trapz)


def _method(function, name):
    """Tensor.<name>: ``function`` with the tensor as its first argument."""
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = function.__doc__
    return method


_FUNCTIONS = {
    "movedim": movedim, "moveaxis": moveaxis, "swapdims": swapdims,
    "hstack": hstack, "vstack": vstack, "dstack": dstack, "column_stack": column_stack, "row_stack": row_stack,
    "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d,
    "broadcast_tensors": broadcast_tensors, "broadcast_to": broadcast_to, "broadcast_shapes": broadcast_shapes,
    "ravel": ravel, "fliplr": fliplr, "flipud": flipud, "rot90": rot90, "tile": tile,
    "tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "msort": msort, "ger": ger, "inner": inner, "vdot": vdot,
    "result_type": result_type, "can_cast": can_cast, "promote_types": promote_types,
    "is_complex": is_complex, "is_signed": is_signed, "is_same_size": is_same_size, "is_nonzero": is_nonzero,
    "e": e, "pi": pi, "inf": inf, "nan": nan,
    "positive": positive, "rsub": rsub, "diff": diff,
    "trapezoid": trapezoid, "trapz": trapz, "cumulative_trapezoid": cumulative_trapezoid,
    "cov": cov, "corrcoef": corrcoef, "aminmax": aminmax, "nansum": nansum, "nanmean": nanmean,
    "quantile": quantile, "nanquantile": nanquantile, "renorm": renorm,
    "repeat_interleave": repeat_interleave, "take": take, "index_fill": index_fill,
    "select_scatter": select_scatter, "slice_scatter": slice_scatter, "diagonal_scatter": diagonal_scatter,
    "chain_matmul": chain_matmul, "matrix_power": matrix_power, "vander": vander,
    "tril_indices": tril_indices, "triu_indices": triu_indices, "combinations": combinations,
    "qr": qr, "cholesky": cholesky, "triangular_solve": triangular_solve, "matrix_exp": matrix_exp, "orgqr": orgqr,
}

# Tensor methods of the functions' names (input as self)
_METHOD_FUNCTIONS = (
    "movedim", "moveaxis", "swapdims", "ravel", "fliplr", "flipud", "rot90", "tensor_split", "msort", "ger",
    "inner", "vdot", "is_signed", "is_same_size", "is_nonzero", "positive", "diff", "cov", "corrcoef", "aminmax",
    "nansum", "nanmean", "quantile", "nanquantile", "renorm", "take", "index_fill",
    "select_scatter", "slice_scatter", "diagonal_scatter", "matrix_power", "qr", "cholesky", "triangular_solve",
    "matrix_exp",
)


def _register():
    def define(owner, name, value):
        if not hasattr(owner, name):
            setattr(owner, name, value)

    for name, value in _FUNCTIONS.items():
        define(_graft, name, value)
    for name in _METHOD_FUNCTIONS:
        define(Tensor, name, _method(_FUNCTIONS[name], name))
    define(Tensor, "tile", _tile_method)
    define(Tensor, "repeat_interleave", _repeat_interleave_method)
    define(Tensor, "broadcast_to", _broadcast_to_method)
    for name, function in (("hsplit", hsplit), ("vsplit", vsplit), ("dsplit", dsplit)):
        define(Tensor, name, _split_method(function, name))
    define(Tensor, "renorm_", _renorm_)
    define(Tensor, "index_fill_", _index_fill_)
    define(Tensor, "orgqr", _orgqr_method)
    for alias, base in _ALIASES.items():
        for suffix in ("", "_"):  # the in-place forms only where graft has the base one
            if hasattr(_graft, base + suffix):
                define(_graft, alias + suffix, getattr(_graft, base + suffix))
            if hasattr(Tensor, base + suffix):
                define(Tensor, alias + suffix, getattr(Tensor, base + suffix))
