"""torch.distributions.constraint_registry for graft: ``biject_to(constraint)`` (a bijection from
unconstrained space onto the constraint's set) and ``transform_to(constraint)`` (a possibly
non-bijective map onto it), for the constraints graft's transforms cover: real, independent,
positive, nonnegative, greater_than(_eq), less_than, interval, half_open_interval, simplex."""
import numbers

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Links constraints (by class) to factories of transforms."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Registers ``factory(constraint) -> Transform`` for a Constraint subclass (or the class of a
        singleton instance); usable as a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or instance, "
                            f"but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        """The transform registered for ``constraint``'s class (NotImplementedError if none)."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


@biject_to.register(constraints.real)
@transform_to.register(constraints.real)
def _transform_to_real(constraint):
    return transforms.identity_transform


def _to_independent(registry):
    """The factory, for ``registry``, of an independent constraint's transform: the registry's
    transform for the base constraint, with the reinterpreted dimensions."""
    def factory(constraint):
        base_transform = registry(constraint.base_constraint)
        return transforms.IndependentTransform(base_transform, constraint.reinterpreted_batch_ndims)

    return factory


_biject_to_independent = biject_to.register(constraints.independent, _to_independent(biject_to))
_transform_to_independent = transform_to.register(constraints.independent, _to_independent(transform_to))


def _shifted_exp(bound, sign):
    """bound + sign * exp(x): onto the values beyond ``bound`` (above for sign 1, below for -1)."""
    return transforms.ComposeTransform([transforms.ExpTransform(), transforms.AffineTransform(bound, sign)])


@biject_to.register(constraints.positive)
@biject_to.register(constraints.nonnegative)
@transform_to.register(constraints.positive)
@transform_to.register(constraints.nonnegative)
def _transform_to_positive(constraint):
    return transforms.ExpTransform()


@biject_to.register(constraints.greater_than)
@biject_to.register(constraints.greater_than_eq)
@transform_to.register(constraints.greater_than)
@transform_to.register(constraints.greater_than_eq)
def _transform_to_greater_than(constraint):
    return _shifted_exp(constraint.lower_bound, 1)


@biject_to.register(constraints.less_than)
@transform_to.register(constraints.less_than)
def _transform_to_less_than(constraint):
    return _shifted_exp(constraint.upper_bound, -1)


@biject_to.register(constraints.interval)
@biject_to.register(constraints.half_open_interval)
@transform_to.register(constraints.interval)
@transform_to.register(constraints.half_open_interval)
def _transform_to_interval(constraint):
    lower_is_0 = isinstance(constraint.lower_bound, numbers.Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, numbers.Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:  # the unit interval
        return transforms.SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(loc, scale)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()
