"""Flatten and Unflatten."""
from ._layer_utils import OneCallLayer


class Flatten(OneCallLayer):
    """Flattens dims start_dim..end_dim into one."""

    _options = ("start_dim", "end_dim")
    _fn = staticmethod(lambda input, start_dim, end_dim: input.flatten(start_dim, end_dim))

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__(start_dim, end_dim)


class Unflatten(OneCallLayer):
    """Splits dim ``dim`` into ``unflattened_size``."""

    _options = ("dim", "unflattened_size")
    _fn = staticmethod(lambda input, dim, unflattened_size: input.unflatten(dim, unflattened_size))

    def __init__(self, dim, unflattened_size):
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)) or \
                    not all(isinstance(s, int) for s in unflattened_size):
                raise TypeError("unflattened_size must be tuple of ints, but found type "
                                f"{type(unflattened_size).__name__}")
        else:
            raise TypeError("invalid argument type for dim parameter")
        super().__init__(dim, unflattened_size)
