"""PyTorch functions that are compositions of graft's ops, in Python, one module per theme:

- ``shape``: movedim, hstack, atleast_2d, broadcast_tensors, rot90, tile, tensor_split, ...
- ``dtypes``: result_type, can_cast, promote_types, is_signed, ... and the constants e, pi, inf, nan
- ``statistics``: aminmax, nansum, nanmean, quantile, cov, corrcoef, diff, trapezoid, renorm
- ``indexing``: take, index_fill, repeat_interleave, select/slice/diagonal_scatter
- ``linalg``: inner, vdot, ger, chain_matmul, matrix_power, vander, tril/triu_indices, combinations, msort
- ``matrix_exponential``: matrix_exp (torch.linalg.matrix_exp, also torch.matrix_exp / Tensor.matrix_exp)
- ``householder``: householder_product (torch.linalg.householder_product, also torch.orgqr / Tensor.orgqr)
- ``aliases``: positive, rsub and the arc* names of the inverse trigonometric functions
- ``_common``: the shared helpers; ``_registry``: what is set on graft and graft.Tensor

Each is written over graft ops that autograd already differentiates, so gradients flow through
them with no backward of their own. The functions are set on the graft module and, where
PyTorch's Tensor has a method of the same name, on graft.Tensor too; nothing graft already has
is replaced. Error types and texts follow PyTorch 2.x."""
from . import aliases, dtypes, householder, indexing, linalg, matrix_exponential, shape, statistics
from ._registry import _register

__all__ = ["aliases", "dtypes", "householder", "indexing", "linalg", "matrix_exponential", "shape", "statistics"]

_register()
