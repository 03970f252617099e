"""graft.backends.opt_einsum: graft does not use the opt_einsum package, so it is reported
unavailable whether or not it is installed: ``enabled`` is False and ``strategy`` None, and
setting them to anything else is PyTorch 2.x's ValueError for an unavailable opt_einsum."""
import sys
import types

enabled = False
strategy = None


def is_available():
    """False: graft does not use opt_einsum."""
    return False


def get_opt_einsum():
    """None: graft does not use opt_einsum."""
    return None


def _check(name, value):
    if name == "enabled" and value:
        raise ValueError(f"opt_einsum is not available, so setting `enabled` to {value} will not reap the benefits of "
                         "calculating an optimal path for einsum. torch.einsum will fall back to contracting from left "
                         "to right. To enable this optimal path calculation, please install opt-einsum.")
    if name == "strategy" and value is not None:
        raise ValueError(f"opt_einsum is not available, so setting `strategy` to {value} will not be meaningful. "
                         "torch.einsum will bypass path calculation and simply contract from left to right. Please "
                         "install opt_einsum or unset `strategy`.")


class _OptEinsumModule(types.ModuleType):
    def __setattr__(self, name, value):
        _check(name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _OptEinsumModule
