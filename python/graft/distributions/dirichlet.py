"""torch.distributions.Dirichlet for graft.

``rsample`` normalises Gamma(concentration, 1) draws (as a softmax of their logs, which never
underflow), differentiable through the Gammas' implicit reparameterisation gradient. This is a
valid pathwise gradient, but not PyTorch's (which differentiates the marginal Beta CDFs): the
per-sample gradients differ, their expectations agree."""
from .. import _C
from .._tensor import Size
from ..nn import functional as F
from . import constraints
from ._params import ParamsMixin
from ._sampling import log_standard_gamma
from ._special import digamma, lgamma
from .exp_family import ExponentialFamily
from .utils import finfo_tiny

__all__ = ["Dirichlet"]


class Dirichlet(ParamsMixin, ExponentialFamily):
    """The Dirichlet distribution over the simplex of the last dimension of ``concentration``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True
    _param_names = ("concentration",)

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(Size(batch_shape), Size(event_shape), validate_args=validate_args)

    def rsample(self, sample_shape=()):
        """Normalised Gamma draws, differentiable in concentration."""
        shape = tuple(self._extended_shape(sample_shape))
        log_gammas = log_standard_gamma(self.concentration.expand(shape))
        value = F.softmax(log_gammas, dim=-1)
        return value.clamp(min=finfo_tiny(value.dtype))

    def log_prob(self, value):
        """The log density at ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        return ((_C.log(value) * (self.concentration - 1.0)).sum(-1) + lgamma(self.concentration.sum(-1))
                - lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        """concentration / concentration.sum(-1)."""
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        """(concentration - 1)+ normalised; the one-hot vertex of the largest concentration where
        all are below 1."""
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(-1)
        if bool(mask.any()):
            mode[mask] = F.one_hot(mode[mask].argmax(-1), concentrationm1.shape[-1]).to(mode.dtype)
        return mode

    @property
    def variance(self):
        """alpha (alpha0 - alpha) / (alpha0 ** 2 (alpha0 + 1))."""
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        """The entropy, batched over batch_shape."""
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (lgamma(self.concentration).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))
