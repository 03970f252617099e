"""torch.linalg.matrix_exp (and its aliases torch.matrix_exp / Tensor.matrix_exp) over graft ops.

The algorithm is PyTorch 2.x's (Bader, Blanes and Casas, "Computing the matrix exponential with an
optimized Taylor polynomial approximation", Mathematics 2019). A single matrix takes the Taylor
approximant of degree 1, 2, 4, 8, 12 or 18 (0, 1, 2, 3, 4 and 5 matrix products) that its 1-norm
allows; a norm beyond the degree-12 bound takes the degree-18 approximant of A / 2^s squared s
times (scaling and squaring), s = max(0, ceil(log2(norm / theta_18))). A batch of several matrices
takes the degree-18 approximant with its own s for each matrix, as PyTorch 2.x does; matrices that
share s are computed together. The bounds theta are PyTorch's, for float32 and for the other
floating dtypes, and so is the degree-8 scheme with the x7 of the paper (PyTorch 1.13 had a wrong
x7, which made its degree-8 results inaccurate).

The gradient is the one autograd gives through this composition (the derivative of the
approximant, which is as close to exp's as the approximant is to exp), not PyTorch's backward
(the exponential of the block matrix [[A^T, G], [0, A^T]]); second derivatives come with it."""
import math

from .. import _C
from ._common import _FLOATS, _check_tensor, _scalar_name

# the largest 1-norm for which each degree (1, 2, 4, 8, 12, 18) is accurate to the dtype's precision
_THETAS_FLOAT = (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02, 5.800524627688768e-01,
                 1.461661507209034e+00, 3.010066362817634e+00)
_THETAS_DOUBLE = (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04, 4.991228871115323e-02,
                  2.996158913811580e-01, 1.090863719290036e+00)

# degree 8: A4 = A2 (x1 A + x2 A2), A8 = (x3 A2 + A4)(x4 I + x5 A + x6 A2 + x7 A4), T8 = I + A + y2 A2 + A8
_SQRT_177 = 0.1330413469565007072504e+2
_X3 = 2.0 / 3.0
_X1 = _X3 * ((1.0 + _SQRT_177) / 88.0)
_X2 = _X3 * ((1.0 + _SQRT_177) / 352.0)
_X4 = (-271.0 + 29.0 * _SQRT_177) / (315.0 * _X3)
_X5 = (-11.0 + 11.0 * _SQRT_177) / (1260.0 * _X3)
_X6 = (-99.0 + 11.0 * _SQRT_177) / (5040.0 * _X3)
_X7 = (89.0 - _SQRT_177) / (5040.0 * _X3 * _X3)
_Y2 = (857.0 - 58.0 * _SQRT_177) / 630.0

# degree 12: B_i = sum_j b[i][j] (I, A, A2, A3)_j, A6 = B2 + B3 B3, T12 = B0 + (B1 + A6) A6
_B12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359))

# degree 18: B_i = sum_j b[i][j] (I, A, A2, A3, A6)_j, A9 = B0 B4 + B3, T18 = B1 + (B2 + A9) A9
_B18 = ((0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.0),
        (0.0, 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
         -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05))


def _combine(coefficients, matrices):
    """sum_j coefficients[j] * matrices[j] (the identity among them broadcasts over the batch)."""
    total = None
    for c, m in zip(coefficients, matrices):
        term = m * c
        total = term if total is None else total + term
    return total


def _taylor_1(A, eye):
    return eye + A


def _taylor_2(A, eye):
    return eye + A + _C.matmul(A, A) * 0.5


def _taylor_4(A, eye):
    A2 = _C.matmul(A, A)
    return eye + A + _C.matmul(A2, _combine((1 / 2.0, 1 / 6.0, 1 / 24.0), (eye, A, A2)))


def _taylor_8(A, eye):
    A2 = _C.matmul(A, A)
    A4 = _C.matmul(A2, _combine((_X1, _X2), (A, A2)))
    A8 = _C.matmul(_combine((_X3, 1.0), (A2, A4)), _combine((_X4, _X5, _X6, _X7), (eye, A, A2, A4)))
    return eye + A + A2 * _Y2 + A8


def _taylor_12(A, eye):
    A2 = _C.matmul(A, A)
    powers = (eye, A, A2, _C.matmul(A, A2))
    B = [_combine(row, powers) for row in _B12]
    A6 = B[2] + _C.matmul(B[3], B[3])
    return B[0] + _C.matmul(B[1] + A6, A6)


def _taylor_18(A, eye):
    A2 = _C.matmul(A, A)
    A3 = _C.matmul(A, A2)
    powers = (eye, A, A2, A3, _C.matmul(A3, A3))
    B = [_combine(row, powers) for row in _B18]
    A9 = _C.matmul(B[0], B[4]) + B[3]
    return B[1] + _C.matmul(B[2] + A9, A9)


_TAYLOR = (_taylor_1, _taylor_2, _taylor_4, _taylor_8, _taylor_12, _taylor_18)


def _plans(matrices):
    """(degree index into _TAYLOR, number of squarings) for each matrix of the 3-d ``matrices``,
    from its 1-norm (the largest column sum of |A|) as PyTorch 2.x chooses them: for a single
    matrix the lowest degree whose bound (rounded to the dtype) the norm does not exceed, degree 18
    with scaling from the degree-12 bound on (and for a NaN norm, which no bound admits); for a
    batch of several matrices degree 18 with scaling for each."""
    dtype = matrices.dtype
    thetas = _C.tensor(_THETAS_FLOAT if dtype == _C.float32 else _THETAS_DOUBLE, dtype=dtype).tolist()
    norms = matrices.detach().abs().sum(-2).amax(-1)
    squarings = (norms / thetas[-1]).log2().ceil().clamp(min=0).tolist()
    highest = matrices.shape[0] > 1
    plans = []
    for norm, s in zip(norms.tolist(), squarings):
        if highest or norm >= thetas[-2] or math.isnan(norm):
            plans.append((len(_TAYLOR) - 1, int(s) if math.isfinite(s) else 0))
        else:
            plans.append((next(i for i, theta in enumerate(thetas) if norm <= theta), 0))
    return plans


def _exponential(matrices, degree, squarings):
    """exp of each matrix of ``matrices`` by the Taylor approximant _TAYLOR[degree] of the matrices
    divided by 2^squarings, squared ``squarings`` times."""
    n = matrices.shape[-1]
    eye = _C.eye(n, dtype=matrices.dtype, device=matrices.device)
    if squarings:  # times 2^-s, as PyTorch 2.x scales (subnormal, not zero, for s up to 1074)
        matrices = matrices * math.ldexp(1.0, -squarings)
    result = _TAYLOR[degree](matrices, eye)
    for _ in range(squarings):
        result = _C.matmul(result, result)
    return result


def _matrix_exp(fname, A):
    _check_tensor(fname, A)
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    rows, n = A.shape[-2], A.shape[-1]
    if rows != n:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are {rows} by {n} "
                           "matrices")
    if A.dtype not in _FLOATS:
        raise NotImplementedError("linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
                                  f"{_scalar_name(A.dtype)}")
    if n == 0 or A.numel() == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    flat = A.reshape(-1, n, n)
    groups = {}
    for i, plan in enumerate(_plans(flat)):
        groups.setdefault(plan, []).append(i)
    if len(groups) == 1:
        (plan,) = groups
        return _exponential(flat, *plan).reshape(A.shape)
    pieces, order = [], []
    for plan, members in groups.items():
        index = _C.tensor(members, dtype=_C.int64, device=A.device)
        pieces.append(_exponential(flat.index_select(0, index), *plan))
        order.extend(members)
    position = [0] * len(order)  # where each matrix of the batch landed in the concatenation
    for j, i in enumerate(order):
        position[i] = j
    result = _C.cat(pieces).index_select(0, _C.tensor(position, dtype=_C.int64, device=A.device))
    return result.reshape(A.shape)


def linalg_matrix_exp(input):
    """The matrix exponential of each square matrix of input (the last two dims): sum_k A^k / k!,
    by PyTorch's Taylor approximants chosen from the 1-norm with scaling and squaring (see the
    module). Floating dtypes; differentiable. The argument is `input`, as PyTorch's parser names it."""
    return _matrix_exp("linalg_matrix_exp", input)


def matrix_exp(input):
    """torch.matrix_exp: the matrix exponential of each square matrix of input (torch.linalg.matrix_exp)."""
    return _matrix_exp("matrix_exp", input)
