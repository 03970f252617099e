"""graft.nn.Parameter: a tensor that a Module registers as one of its parameters."""
from .. import _C


class Parameter(_C.Tensor):
    """A leaf tensor that shares ``data``'s storage, requires grad by default and is tagged
    as a parameter in the allocator. Assigning one to a Module attribute registers it.
    Operations on a Parameter return plain tensors, as in PyTorch."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        _C.Tensor.__init__(self, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + _C.Tensor.__repr__(self)

    def __reduce_ex__(self, protocol):
        # pickled as its data and flag; rebuilt by the constructor
        return (Parameter, (self.detach(), self.requires_grad))
