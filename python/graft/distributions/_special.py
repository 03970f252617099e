"""Special functions the distributions need and graft's kernels lack, written over graft ops.

``lgamma`` and ``digamma`` shift their argument up to 10 by the recurrence Gamma(y + 1) = y Gamma(y),
sum the Stirling (de Moivre) asymptotic series there (8 terms: truncation error below 1e-17), and
use the reflection formula below 0.5. They compute in float64 (float32 inputs are cast there and
back), are accurate to about 1e-14 relative (absolute near the zeros of lgamma), and are
differentiable through graft's autograd to any order (the derivative of the series is the series
of the derivative, so ``lgamma``'s gradient is ``digamma`` to the same accuracy). Edge values
follow torch: lgamma is +inf at the poles and at +-inf; digamma is -inf at +0, +inf at -0 and NaN
at the negative integers.

``mvlgamma(x, p)`` (torch.mvlgamma, the log of the multivariate gamma function) is a sum of
``lgamma``s, as PyTorch 2.x's (no domain check).

``erfinv`` starts from Giles' single-precision approximation ("Approximating the erfinv function",
2010) and takes four Newton steps on erf (on log erfc in the upper half, so that the tails keep their
relative accuracy and converge), in float64: accurate to a few ulps, and differentiable (at convergence the
Newton step's derivative is 1 / erf'(x)). It is +-inf at +-1 and NaN outside [-1, 1].

``standard_gamma_log_grad(alpha, log_x)`` is d log(x) / d alpha for x ~ Gamma(alpha, 1) held at a
fixed quantile (the implicit reparameterisation gradient, -(dF/dalpha) / (x f(x)) with F the
regularised lower incomplete gamma function): from F's power series when x <= alpha + 1, from the
continued fraction of 1 - F (differentiated along, as dual numbers) above, each until its steps
fall below double rounding, so the result is accurate to ~1e-12 relative (torch's
``_standard_gamma_grad`` is an approximation to about 5e-4). The number of terms grows like
sqrt(alpha) (about 9 sqrt(alpha) for draws near the mode): fine up to alpha ~ 1e6."""
import math

from .. import _C
from ..autograd.grad_mode import no_grad

__all__ = ["digamma", "erfinv", "lgamma", "mvlgamma", "standard_gamma_log_grad", "xlogy"]

_SHIFT = 10.0  # the series are summed at y >= _SHIFT
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# B_2k / (2k (2k - 1)), k = 1..8: lgamma's Stirling series in 1/y
_LGAMMA_COEFFS = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400)
# B_2k / (2k), k = 1..8: digamma's series in 1/y^2
_DIGAMMA_COEFFS = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12, -3617 / 8160)
_INF = float("inf")
_NAN = float("nan")


def _horner(coeffs, r):
    """coeffs[0] + coeffs[1] r + coeffs[2] r^2 + ..."""
    acc = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        acc = acc * r + c
    return acc


def _to_double(x):
    if not isinstance(x, _C.Tensor):
        x = _C.tensor(x, dtype=_C.float64)
    return (x, x.dtype) if x.dtype == _C.float64 else (x.to(_C.float64), x.dtype)


def _reflected(x):
    """(reflect, y, r): where x < 0.5, y = 1 - x (else x), and r = x - round(x) on those (0.25
    elsewhere: a safe value, so that the unused branch has finite gradients)."""
    reflect = x < 0.5
    y = _C.where(reflect, 1 - x, x)
    xr = _C.where(reflect, x, 0.25)
    nearest = _C.round(xr)
    return reflect, y, _C.where(xr == nearest, xr * 0, xr - nearest)  # xr * 0 keeps the sign of -0.0


def _shift_up(y, step):
    """y raised to >= _SHIFT by unit steps; ``step(acc, y)`` accumulates each y stepped over."""
    acc = None
    for _ in range(int(_SHIFT)):
        small = y < _SHIFT
        if not bool(small.any()):
            break
        acc = step(acc, y, small)
        y = _C.where(small, y + 1, y)
    return y, acc


def lgamma(x):
    """log|Gamma(x)|, elementwise (a graft tensor or number); differentiable."""
    x, dtype = _to_double(x)
    reflect, y, r = _reflected(x)

    def step(acc, y, small):
        term = _C.where(small, y, 1.0)
        return term if acc is None else acc * term  # a product of < 10 factors below 10: no overflow

    y, prod = _shift_up(y, step)
    log_y = _C.log(y)
    result = (y - 0.5) * log_y - y + _HALF_LOG_2PI + _horner(_LGAMMA_COEFFS, 1 / (y * y)) / y
    if prod is not None:
        result = result - _C.log(prod)
    # reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x), and |sin(pi x)| = |sin(pi r)|
    reflection = math.log(math.pi) - _C.log(_C.abs(_C.sin(math.pi * r)))
    result = _C.where(reflect, reflection - result, result)
    result = _C.where(_C.isinf(x), _INF, result)
    return result if dtype == _C.float64 else result.to(dtype)


def digamma(x):
    """The logarithmic derivative of Gamma, elementwise (a graft tensor or number); differentiable."""
    x, dtype = _to_double(x)
    reflect, y, r = _reflected(x)

    def step(acc, y, small):
        term = _C.where(small, 1 / y, 0.0)
        return term if acc is None else acc + term

    y, harmonic = _shift_up(y, step)
    result = _C.log(y) - 0.5 / y - _horner(_DIGAMMA_COEFFS, 1 / (y * y)) / (y * y)
    if harmonic is not None:
        result = result - harmonic
    # reflection: psi(1 - x) - psi(x) = pi / tan(pi x), and tan(pi x) = tan(pi r)
    result = _C.where(reflect, result - math.pi / _C.tan(math.pi * r), result)
    negative_integer = (x < 0) & (x == _C.floor(x))
    result = _C.where(negative_integer | (x == -_INF), _NAN, result)
    result = _C.where(x == _INF, _INF, result)
    return result if dtype == _C.float64 else result.to(dtype)


def mvlgamma(x, p):
    """torch.mvlgamma: log Gamma_p(x) = p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(x - j / 2), elementwise
    (a graft tensor); differentiable."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    halves = _C.tensor([(j - p + 1) / 2 for j in range(p)], dtype=x.dtype, device=x.device)  # PyTorch's order
    return lgamma(x.unsqueeze(-1) + halves).sum(-1) + p * (p - 1) * math.log(math.pi) / 4


# Giles' coefficients, for w = -log(1 - a^2) below 5 (in w - 2.5) and above (in sqrt(w) - 3)
_ERFINV_CENTRAL = (1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087, -4.39150654e-06,
                   -3.5233877e-06, 3.43273939e-07, 2.81022636e-08)
_ERFINV_TAIL = (2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773, -0.00367342844,
                0.00134934322, 0.000100950558, -0.000200214257)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def erfinv(y):
    """The inverse error function, elementwise (a graft tensor); differentiable."""
    y, dtype = _to_double(y)
    a = _C.abs(y)
    inside = a < 1
    a_safe = _C.where(inside, a, 0.5)  # (so that the unused branches have finite gradients)
    w = -_C.log1p(-a_safe * a_safe)
    central = _horner(_ERFINV_CENTRAL, w - 2.5)
    tail = _horner(_ERFINV_TAIL, _C.sqrt(_C.where(w < 5, 5.0, w)) - 3)
    x = _C.where(w < 5, central, tail) * a_safe
    central_half = a_safe < 0.5
    log_1ma = _C.log1p(-a_safe)
    for _ in range(4):
        # Newton on erf(x) - a below 1/2, on log(erfc(x)) - log(1 - a) above (nearly linear in the tail)
        slope = _TWO_OVER_SQRT_PI * _C.exp(-x * x)
        erfc = _C.erfc(_C.where(central_half, 1.0, x))
        step = _C.where(central_half, (_C.erf(x) - a_safe) / slope, -(_C.log(erfc) - log_1ma) * erfc / slope)
        x = x - step
    x = _C.where(inside, x, _C.where(a == 1, _INF, _NAN))
    result = _C.where(y == 0, y, _C.where(y < 0, -x, x))
    return result if dtype == _C.float64 else result.to(dtype)


def xlogy(x, y):
    """x * log(y), with 0 where x == 0 (and y is not NaN), as torch.xlogy."""
    result = x * _C.log(y)
    zero = (x == 0) & (y == y)
    return _C.where(zero, 0.0, result) if bool(zero.any()) else result


# -- the implicit reparameterisation gradient of Gamma samples --------------------------------------------

_EPS = 1e-17  # the series' terms are summed until below this, relative
_CF_TOL = 1e-15
_MAX_TERMS = 100000


def _series_log_grad(alpha, log_x):
    """d log x / d alpha from F(x) = x^a e^-x / Gamma(a + 1) * S, S = sum_n x^n / ((a+1)...(a+n)):
    -(1/a) (S (log x - psi(a + 1)) + dS/da)."""
    x = _C.exp(log_x)
    term = _C.ones_like(x)
    s = _C.ones_like(x)
    ds = _C.zeros_like(x)
    harmonic = _C.zeros_like(x)
    for n in range(1, _MAX_TERMS):
        denom = alpha + n
        harmonic = harmonic + 1 / denom
        term = term * x / denom
        s = s + term
        ds = ds - term * harmonic
        if not (bool((term * harmonic > _EPS * _C.abs(ds)).any()) or bool((term > _EPS * s).any())):
            break
    return -(s * (log_x - digamma(alpha + 1)) + ds) / alpha


def _continued_fraction_log_grad(alpha, log_x):
    """d log x / d alpha from 1 - F(x) = x^a e^-x / Gamma(a) * h, h the continued fraction
    1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...)) evaluated by the modified Lentz
    method, carrying dh/da alongside: h (log x - psi(a)) + dh/da."""
    x = _C.exp(log_x)
    b = x + 1 - alpha
    db = -1.0
    c = _C.full_like(x, 1e300)
    dc = _C.zeros_like(x)
    d = 1 / b
    dd = -db * d * d
    h, dh = d, dd
    for i in range(1, _MAX_TERMS):
        an = -i * (i - alpha)
        dan = float(i)
        b = b + 2
        # d <- 1 / (an d + b), c <- b + an / c, h <- h d c
        den = an * d + b
        d_new = 1 / den
        dd = -(dan * d + an * dd + db) * d_new * d_new
        d = d_new
        c_new = b + an / c
        dc = db + dan / c - an * dc / (c * c)
        c = c_new
        delta = d * c
        ddelta = dd * c + d * dc
        dh = dh * delta + h * ddelta
        h = h * delta
        # delta -> 1 and ddelta (the step of d log h / da) -> 0, to within double rounding
        if not (bool(((delta - 1).abs() > _CF_TOL).any()) or bool((ddelta.abs() > _CF_TOL).any())):
            break
    return h * (log_x - digamma(alpha)) + dh


def standard_gamma_log_grad(alpha, log_x):
    """d log(x) / d alpha at fixed quantile for x = exp(log_x) ~ Gamma(alpha, 1) (float64 tensors of
    one shape; not differentiable)."""
    with no_grad():
        alpha, dtype = _to_double(alpha)
        log_x, _ = _to_double(log_x)
        flat_a, flat_lx = alpha.reshape(-1), log_x.reshape(-1)
        out = _C.zeros_like(flat_a)
        upper = flat_lx > _C.log(flat_a + 1)
        lower = ~upper
        if bool(lower.any()):
            out[lower] = _series_log_grad(flat_a[lower], flat_lx[lower])
        if bool(upper.any()):
            out[upper] = _continued_fraction_log_grad(flat_a[upper], flat_lx[upper])
        out = out.reshape(tuple(alpha.shape))
        return out if dtype == _C.float64 else out.to(dtype)
