"""torch.distributions.ExponentialFamily for graft: the base of the exponential-family
distributions, whose generic entropy (and the generic KL divergence in ``kl``) come from the log
normalizer's gradient (Bregman divergences), through graft's autograd."""
from ..autograd import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution with density exp(<t(x), theta> - F(theta) + k(x)): natural parameters theta,
    sufficient statistic t, log normalizer F, carrier measure k. Subclasses give
    ``_natural_params``, ``_log_normalizer`` and ``_mean_carrier_measure`` (E[k(x)])."""

    @property
    def _natural_params(self):
        """The natural parameters (a tuple of tensors)."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normalizer F at the given natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """The expected carrier measure E[k(x)]."""
        raise NotImplementedError

    def _log_normalizer_and_grad(self):
        """(theta, F(theta), grad F(theta)), theta detached copies of the natural parameters that
        require grad (the gradient is differentiable)."""
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        return nparams, lg_normal, grad(lg_normal.sum(), nparams, create_graph=True)

    def entropy(self):
        """F(theta) - <theta, grad F(theta)> - E[k(x)], by autograd (differentiable)."""
        result = -self._mean_carrier_measure
        nparams, lg_normal, gradients = self._log_normalizer_and_grad()
        result = result + lg_normal
        for nparam, g in zip(nparams, gradients):
            result = result - (nparam * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
