"""torch.distributions.LKJCholesky for graft: the LKJ distribution over the lower Cholesky factors of
correlation matrices, sampled by PyTorch's vectorised onion method (Beta draws for the squared row
norms, uniform directions on the hypersphere); not reparameterised (no ``rsample``), as PyTorch's.

One difference from PyTorch: row k (k >= 1) of a draw needs its squared norm from
Beta(k / 2, eta + (dim - 2) / 2 - (k - 1) / 2) (Lewandowski, Kurowicka and Joe 2009, Sec. 3.2, as
NumPyro has it); PyTorch's first concentration is k - 1/2 instead of k / 2, so that for dim >= 3 its
draws from row 2 on do not follow the LKJ distribution its ``log_prob`` is the density of (the
off-diagonal correlations' marginals are not Beta(eta - 1 + dim / 2, ...) on (-1, 1)). graft's
``_beta`` has the right concentration; ``log_prob`` is PyTorch's."""
import math

from .. import _C
from .._tensor import Size
from . import constraints
from ._params import ParamsMixin
from ._special import lgamma, mvlgamma
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, finfo_tiny

__all__ = ["LKJCholesky"]


class LKJCholesky(ParamsMixin, Distribution):
    """The LKJ distribution of ``dim`` x ``dim`` lower Cholesky factors L of correlation matrices,
    with density proportional to det(L L^T) ** (concentration - 1) (``concentration`` a positive
    number or tensor; 1 is uniform over correlation matrices)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky
    _param_names = ("concentration",)

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # the Beta draws of Sec. 3.2 of Lewandowski, Kurowicka and Joe (2009), vectorised over the rows
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = _C.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = _C.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = 0.5 * offset + 0.5  # (PyTorch's offset + 0.5 is wrong from the third row on)
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def _expand_extra(self, new):
        new.dim = self.dim
        new._beta = self._beta.expand(tuple(new.concentration.shape) + (self.dim,))

    def sample(self, sample_shape=Size()):
        """Draws by the onion method: row i is sqrt(y_i) u_i (u_i uniform on the sphere of the first
        i coordinates, y_i a Beta draw) with the diagonal completing it to unit length."""
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = _C.randn(tuple(self._extended_shape(sample_shape)), dtype=y.dtype, device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        # Replace NaNs in first row
        u_hypersphere[..., 0, :].fill_(0.0)
        w = _C.sqrt(y) * u_hypersphere
        # Fill diagonal elements; clamp for numerical stability
        eps = finfo_tiny(w.dtype)
        diag_elems = _C.clamp(1 - _C.sum(w ** 2, dim=-1), min=eps).sqrt()
        w += _C.diag_embed(diag_elems)
        return w

    def log_prob(self, value):
        """The log density at ``value`` (lower Cholesky factors of correlation matrices), normalised
        as PyTorch's (over the Cholesky factors)."""
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = _C.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = _C.sum(order * diag_elems.log(), dim=-1)
        # Compute normalization constant (page 1999 of [1])
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = lgamma(alpha) * dm1
        numerator = mvlgamma(alpha - 0.5, dm1)
        # pi_constant in [1] is D * (d - 1) / 4 * log(pi)
        # pi_constant in multigammaln is (d - 1) * (d - 2) / 4 * log(pi)
        # hence, we need to add a pi_constant = (d - 1) * log(pi) / 2
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
