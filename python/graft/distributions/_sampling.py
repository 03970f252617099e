"""Samplers the distributions need and graft's kernels lack, vectorised over graft tensors and drawing
from graft's default generator (graft.rand / graft.randn). Each works in float64 on the flattened
parameters and loops until every element is accepted, drawing afresh only for the elements still
pending (so the values for a seed depend on the parameters' order, and differ from PyTorch's).

* ``log_standard_gamma(alpha)``: log of Gamma(alpha, 1) draws, Marsaglia and Tsang's squeeze method
  (alpha < 1 boosted: Gamma(alpha) = Gamma(alpha + 1) U^(1/alpha), in logs so that it never
  underflows), differentiable in alpha through the implicit reparameterisation gradient
  (``_special.standard_gamma_log_grad``).
* ``sample_poisson(rate)``: inversion by sequential search below rate 10, Hoermann's transformed
  rejection (PTRS) above.
* ``sample_binomial(total_count, probs)``: inversion below n min(p, 1 - p) = 10, Hoermann's BTRS
  above (p > 1/2 by symmetry)."""
import math

from .. import _C
from ..autograd.function import Function, once_differentiable
from ..autograd.grad_mode import no_grad
from ._special import lgamma, standard_gamma_log_grad

__all__ = ["log_standard_gamma", "sample_binomial", "sample_poisson"]

_LOG_TINY = math.log(2.2250738585072014e-308)  # log of float64's smallest normal
_NAN = float("nan")


def _flat64(t):
    return t.detach().to(_C.float64).reshape(-1)


def _rand(n, device):
    return _C.rand((n,), dtype=_C.float64, device=device)


def _rejection_loop(params, propose, device):
    """Runs ``propose(params_subset, device) -> (accepted mask, values)`` over the pending elements
    of the 1-D float64 ``params`` (a tuple of same-length tensors) until all are accepted."""
    n = params[0].numel()
    out = _C.zeros((n,), dtype=_C.float64, device=device)
    todo = _C.arange(n, device=device)
    while todo.numel() > 0:
        ok, values = propose(params, device)
        out[todo[ok]] = values[ok]
        rejected = ~ok
        todo = todo[rejected]
        params = tuple(p[rejected] for p in params)
    return out


# -- Gamma ------------------------------------------------------------------------------------------------

def _marsaglia_tsang(params, device):
    d, c = params
    n = d.numel()
    z = _C.randn((n,), dtype=_C.float64, device=device)
    u = _rand(n, device)
    v = (1 + c * z) ** 3
    positive = v > 0
    log_v = _C.log(_C.where(positive, v, 1.0))
    ok = positive & (_C.log(u) < 0.5 * z * z + d - d * v + d * log_v)
    return ok, _C.log(d) + log_v


def _log_standard_gamma_draw(alpha):
    """log Gamma(alpha, 1) draws (float64, no grad) of alpha's shape."""
    a = _flat64(alpha)
    device = a.device
    boost = a < 1
    a1 = _C.where(boost, a + 1, a)
    d = a1 - 1.0 / 3.0
    c = 1 / _C.sqrt(9 * d)
    out = _rejection_loop((d, c), _marsaglia_tsang, device)
    if bool(boost.any()):
        u = _rand(a.numel(), device)
        out = _C.where(boost, out + _C.log(u) / a, out)
    out = _C.where(a > 0, out, _NAN)  # (alpha is validated > 0; NaN else, as no draw exists)
    return out.clamp(min=_LOG_TINY).reshape(tuple(alpha.shape))


class _LogStandardGamma(Function):
    """log x, x ~ Gamma(alpha, 1); backward: the implicit reparameterisation gradient."""

    @staticmethod
    def forward(ctx, alpha):
        log_x = _log_standard_gamma_draw(alpha).to(alpha.dtype)
        ctx.save_for_backward(alpha, log_x)
        return log_x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        alpha, log_x = ctx.saved_tensors
        return grad_output * standard_gamma_log_grad(alpha, log_x)


def log_standard_gamma(alpha):
    """log of Gamma(alpha, 1) draws of alpha's shape and dtype, differentiable in alpha."""
    if alpha.requires_grad:
        return _LogStandardGamma.apply(alpha)
    with no_grad():
        return _log_standard_gamma_draw(alpha).to(alpha.dtype)


# -- Poisson ----------------------------------------------------------------------------------------------

def _poisson_inversion(lam, device):
    """Sequential search of the CDF with one uniform per element (rate < 10)."""
    n = lam.numel()
    u = _rand(n, device)
    k = _C.zeros_like(lam)
    p = _C.exp(-lam)
    cdf = p
    todo = u > cdf
    while bool(todo.any()):
        k = _C.where(todo, k + 1, k)
        p = _C.where(todo, p * lam / k.clamp(min=1), p)
        cdf = cdf + _C.where(todo, p, 0.0)
        todo = todo & (u > cdf) & (p > 0)
    return k


def _ptrs(params, device):
    """One round of Hoermann's PTRS (transformed rejection with squeeze), rate >= 10."""
    lam, log_lam, a, b, inv_alpha, v_r = params
    n = lam.numel()
    u = _rand(n, device) - 0.5
    v = _rand(n, device)
    us = 0.5 - u.abs()
    k = _C.floor((2 * a / us + b) * u + lam + 0.43)
    quick = (us >= 0.07) & (v <= v_r)
    reject = (k < 0) | ((us < 0.013) & (v > us))
    lhs = _C.log(v) + _C.log(inv_alpha) - _C.log(a / (us * us) + b)
    k_safe = _C.where(reject, 0.0, k)
    rhs = -lam + k_safe * log_lam - lgamma(k_safe + 1)
    return quick | (~reject & (lhs <= rhs)), k


def sample_poisson(rate):
    """Poisson(rate) draws (floats of rate's dtype and shape; NaN for invalid rates)."""
    with no_grad():
        lam = _flat64(rate)
        device = lam.device
        out = _C.full_like(lam, _NAN)
        valid = (lam >= 0) & (lam < float("inf"))
        small = valid & (lam < 10)
        large = valid & (lam >= 10)
        if bool(small.any()):
            out[small] = _poisson_inversion(lam[small], device)
        if bool(large.any()):
            big = lam[large]
            b = 0.931 + 2.53 * _C.sqrt(big)
            params = (big, _C.log(big), -0.059 + 0.02483 * b, b, 1.1239 + 1.1328 / (b - 3.4),
                      0.9277 - 3.6224 / (b - 2))
            out[large] = _rejection_loop(params, _ptrs, device)
        return out.reshape(tuple(rate.shape)).to(rate.dtype)


# -- Binomial ---------------------------------------------------------------------------------------------

def _binomial_inversion(n, p, device):
    """Sequential search of the CDF (n p < 10, p <= 1/2)."""
    u = _rand(n.numel(), device)
    k = _C.zeros_like(n)
    prob = _C.exp(n * _C.log1p(-p))
    odds = p / (1 - p)
    cdf = prob
    todo = (u > cdf) & (k < n)
    while bool(todo.any()):
        k = _C.where(todo, k + 1, k)
        prob = _C.where(todo, prob * odds * (n - k + 1) / k.clamp(min=1), prob)
        cdf = cdf + _C.where(todo, prob, 0.0)
        todo = todo & (u > cdf) & (k < n) & (prob > 0)
    return k


def _btrs(params, device):
    """One round of Hoermann's BTRS (transformed rejection with squeeze), n p >= 10, p <= 1/2."""
    n, a, b, c, v_r, alpha, log_odds, m, log_f_m = params
    size = n.numel()
    u = _rand(size, device) - 0.5
    v = _rand(size, device)
    us = 0.5 - u.abs()
    k = _C.floor((2 * a / us + b) * u + c)
    outside = (k < 0) | (k > n) | _C.isnan(k)
    quick = ~outside & (us >= 0.07) & (v <= v_r)
    k_safe = _C.where(outside, m, k)
    log_v = _C.log(v * alpha / (a / (us * us) + b))
    # log f(k) / f(m) of the binomial mass function
    log_ratio = log_f_m - lgamma(k_safe + 1) - lgamma(n - k_safe + 1) + (k_safe - m) * log_odds
    return quick | (~outside & (log_v <= log_ratio)), k


def _binomial_small_p(n, p, device):
    """Binomial draws for p <= 1/2 (1-D float64)."""
    out = _C.zeros_like(n)
    inversion = n * p < 10
    btrs = ~inversion
    if bool(inversion.any()):
        out[inversion] = _binomial_inversion(n[inversion], p[inversion], device)
    if bool(btrs.any()):
        nb, pb = n[btrs], p[btrs]
        spq = _C.sqrt(nb * pb * (1 - pb))
        b = 1.15 + 2.53 * spq
        m = _C.floor((nb + 1) * pb)
        params = (nb, -0.0873 + 0.0248 * b + 0.01 * pb, b, nb * pb + 0.5, 0.92 - 4.2 / b, (2.83 + 5.1 / b) * spq,
                  _C.log(pb / (1 - pb)), m, lgamma(m + 1) + lgamma(nb - m + 1))
        out[btrs] = _rejection_loop(params, _btrs, device)
    return out


def sample_binomial(total_count, probs):
    """Binomial(total_count, probs) draws (floats of probs' dtype; same-shaped arguments; NaN for
    invalid arguments)."""
    with no_grad():
        n, p = _flat64(total_count), _flat64(probs)
        device = p.device
        out = _C.full_like(p, _NAN)
        valid = (n >= 0) & (n < float("inf")) & (p >= 0) & (p <= 1)
        if bool(valid.any()):
            nv, pv = n[valid], p[valid]
            flip = pv > 0.5
            draws = _binomial_small_p(nv, _C.where(flip, 1 - pv, pv), device)
            out[valid] = _C.where(flip, nv - draws, draws)
        return out.reshape(tuple(probs.shape)).to(probs.dtype)
