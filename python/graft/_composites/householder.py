"""Householder reflectors over graft ops: torch.linalg.householder_product (and its older name
torch.orgqr / Tensor.orgqr), differentiable through the composition, and _geqrf, LAPACK's geqrf
(the Householder QR in its compact form), which the orthogonal parametrization needs to map a
matrix back to its reflectors. Error types and texts follow PyTorch 2.x."""
from .. import _C
from ._common import _check_tensor, _scalar_name

_NAME = "torch.linalg.householder_product"


def _check(A, tau):
    """PyTorch's checks of linalg_householder_product, in its order."""
    if A.dim() < 2:
        raise RuntimeError(f"{_NAME}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{_NAME}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if tau.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{_NAME}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(f"{_NAME}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {A.dim()}")
    if A.dim() > 2 and list(tau.shape[:-1]) != list(A.shape[:-2]):
        raise RuntimeError(f"{_NAME}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{_NAME}: tau dtype {_scalar_name(tau.dtype)} does not match input dtype "
                           f"{_scalar_name(A.dtype)}")
    if tau.device != A.device:
        raise RuntimeError(f"{_NAME}: Expected tau and input tensors to be on the same device, but got tau on "
                           f"{tau.device} and input on {A.device}")
    if A.dtype not in (_C.float32, _C.float64):
        raise NotImplementedError(f"\"orgqr_{A.device.type}\" not implemented for '{_scalar_name(A.dtype)}'")


def _product(A, tau):
    """H_1 H_2 ... H_k applied to the first n columns of the m x m identity, H_i = I - tau_i v_i v_i^T
    with v_i = (0, ..., 0, 1, A[i+1:, i]): the last reflector first, each a rank-one update."""
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
    Q = _C.eye(m, n, dtype=A.dtype, device=A.device)
    if k == 0:  # the identity's columns; the empty sums only keep A and tau in the graph
        return Q + A[..., :0].sum(-1, keepdim=True) + tau[..., :0].sum(-1, keepdim=True).unsqueeze(-1)
    V = A[..., :k].tril(-1) + _C.eye(m, k, dtype=A.dtype, device=A.device)
    Q = Q.expand(A.shape)
    for i in reversed(range(k)):
        v = V[..., i:i + 1]
        scaled = v * tau[..., i:i + 1].unsqueeze(-1)
        Q = Q - _C.matmul(scaled, _C.matmul(v.mT, Q))
    return Q


def householder_product(input, tau, *, out=None):
    """The first n columns of the product of the k Householder reflectors H_i = I - tau_i v_i v_i^T
    stored in input (m x n, m >= n; v_i is column i below the diagonal with a 1 on it, as geqrf
    leaves them) and tau (k <= n), for each matrix of the batch: the Q of a QR decomposition given
    geqrf's output. Float32 / float64; differentiable in input and tau."""
    _check_tensor("linalg_householder_product", input)
    _check_tensor("linalg_householder_product", tau, "tau", 2)
    if out is not None:
        raise NotImplementedError("graft.linalg.householder_product: out= is not supported")
    _check(input, tau)
    return _product(input, tau)


def orgqr(input, input2):
    """torch.orgqr: torch.linalg.householder_product(input, input2)."""
    _check_tensor("orgqr", input)
    _check_tensor("orgqr", input2, "input2", 2)
    _check(input, input2)
    return _product(input, input2)


def _orgqr_method(self, input2):
    """Tensor.orgqr(input2): torch.linalg.householder_product(self, input2)."""
    _check_tensor("orgqr", input2, "input2", 1)
    _check(self, input2)
    return _product(self, input2)


def _reflector(alpha, x):
    """LAPACK's larfg for each (alpha, x) of the batch: (beta, tau, scale) with H (alpha, x) =
    (beta, 0) for H = I - tau (1, v)(1, v)^T, v = x * scale; tau = 0 (H = I) where x is zero."""
    xnorm = (x * x).sum(-1).sqrt()
    reflect = xnorm != 0
    sign = _C.where(alpha >= 0, 1.0, -1.0).to(alpha.dtype)
    beta = -(alpha * alpha + xnorm * xnorm).sqrt() * sign
    safe_beta = _C.where(reflect, beta, 1.0)
    tau = _C.where(reflect, (beta - alpha) / safe_beta, 0.0)
    scale = _C.where(reflect, 1.0 / _C.where(reflect, alpha - beta, 1.0), 1.0)
    return _C.where(reflect, beta, alpha), tau, scale


def _geqrf(A):
    """torch.geqrf(A) (LAPACK's unblocked geqr2 over graft ops): (R on and above the diagonal with
    the reflectors v_i below it, tau), so that householder_product of them is the Q of A = Q R.
    Not differentiated: the orthogonal parametrization calls it under no_grad."""
    m, n = A.shape[-2], A.shape[-1]
    R = A.clone()
    taus = []
    for i in range(min(m, n)):
        beta, tau, scale = _reflector(R[..., i, i], R[..., i + 1:, i])
        R[..., i + 1:, i] = R[..., i + 1:, i] * scale.unsqueeze(-1)
        R[..., i, i] = beta
        v = _C.cat([_C.ones_like(beta).unsqueeze(-1), R[..., i + 1:, i]], -1).unsqueeze(-1)
        trailing = R[..., i:, i + 1:]
        R[..., i:, i + 1:] = trailing - _C.matmul(v * tau[..., None, None], _C.matmul(v.mT, trailing))
        taus.append(tau)
    if not taus:
        return R, A.new_zeros(tuple(A.shape[:-2]) + (0,))
    return R, _C.stack(taus, -1)
