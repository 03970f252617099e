"""torch.distributions.TransformedDistribution for graft: a base distribution pushed through a
sequence of transforms (log p(y) = log p(x) - log |det dy/dx|)."""
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, Transform
from .utils import sum_rightmost

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    """``transforms`` (a Transform or a list of them) applied in order to samples of
    ``base_distribution``; the event shape is the largest the base and the transforms imply."""

    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        # reshape the base distribution as the transforms need
        base_shape = Size(tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape))
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        domain_event_dim = transform.domain.event_dim
        if len(base_shape) < domain_event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {domain_event_dim}, "
                             f"but got {base_shape}.")
        shape = Size(transform.forward_shape(base_shape))
        expanded_base_shape = Size(transform.inverse_shape(shape))
        if base_shape != expanded_base_shape:
            base_batch_shape = expanded_base_shape[:len(expanded_base_shape) - base_event_dim]
            base_distribution = base_distribution.expand(base_batch_shape)
        reinterpreted_batch_ndims = domain_event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution
        # the shapes
        event_dim = transform.codomain.event_dim + max(base_event_dim - domain_event_dim, 0)
        assert len(shape) >= event_dim
        cut = len(shape) - event_dim
        super().__init__(Size(shape[:cut]), Size(shape[cut:]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The distribution with the base's batch expanded to match ``batch_shape``."""
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = Size(batch_shape)
        shape = Size(tuple(batch_shape) + tuple(self.event_shape))
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        base_batch_shape = shape[:len(shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch_shape)
        new.transforms = self.transforms
        super(TransformedDistribution, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        """The last transform's codomain (with the event dimensions)."""
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        """Whether the base distribution has rsample."""
        return self.base_dist.has_rsample

    def sample(self, sample_shape=Size()):
        """The transformed base samples (not differentiable)."""
        with no_grad():
            return self._push_forward(self.base_dist.sample(sample_shape))

    def rsample(self, sample_shape=Size()):
        """The transformed reparameterized base samples."""
        return self._push_forward(self.base_dist.rsample(sample_shape))

    def _push_forward(self, x):
        """``x`` through the transforms, in order."""
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        """The base's log density at the inverted value, less the transforms' log |det J|."""
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                event_dim - transform.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """value, or 1 - value where the transforms are decreasing (so that the CDF increases)."""
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        """The base's CDF at the inverted value."""
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        value = self.base_dist.cdf(value)
        return self._monotonize_cdf(value)

    def icdf(self, value):
        """The transformed base quantile."""
        value = self._monotonize_cdf(value)
        return self._push_forward(self.base_dist.icdf(value))
