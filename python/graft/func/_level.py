"""graft.func._level: what stands in for functorch's transform levels. graft has one autograd tape
and no wrapper tensors, so a transform (grad, vjp, jvp, ...) makes its differentiable inputs new
tensor objects on that tape: a detached leaf requiring grad for an input that does not require
grad, a differentiable alias (``view_as``) for one that does (an outer transform's input, or a
user tensor that requires grad), so that results stay differentiable for the levels outside.

When the transform returns, a result that cannot reach any tensor of an outer level (its graph
ends only at this level's own leaves) is detached: the caller gets a plain tensor, with no graph
kept alive and nothing written to any ``.grad``, as functorch's unwrapping gives."""
from .. import _C
from .. import autograd as _autograd

_Tensor = _C.Tensor


def _is_accumulate_grad(node):
    return node.name().endswith("AccumulateGrad")


class Level:
    """One application of a transform: the leaves it made, and the tests and unwrapping that
    tell its own graph from the graph of the levels outside (see the module docstring)."""

    def __init__(self):
        self._leaves = []
        self._own_nodes = set()
        self._own_count = 0
        self._clean = set()  # nodes known to reach no outer leaf
        self.outer_grad_enabled = _C.is_grad_enabled()

    def leaf(self, tensor):
        """A new leaf of this level: ``tensor`` detached, requiring grad."""
        leaf = tensor.detach().requires_grad_()
        self._leaves.append(leaf)
        return leaf

    def differentiable(self, x):
        """``x`` (which must be a Tensor) as an input this level differentiates with respect to."""
        if not isinstance(x, _Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        return x.view_as(x) if x.requires_grad else self.leaf(x)

    def _own(self):
        if self._own_count != len(self._leaves):
            with _autograd.enable_grad():
                for leaf in self._leaves[self._own_count:]:
                    self._own_nodes.add(leaf.view_as(leaf).grad_fn.next_functions[0][0])
            self._own_count = len(self._leaves)
        return self._own_nodes

    def _tensor_reaches_outer(self, t):
        if not isinstance(t, _Tensor) or not t.requires_grad:
            return False
        if t.grad_fn is None:  # a leaf: this level's own, or an outer one
            return not any(t is leaf for leaf in self._leaves)
        own, seen, stack = self._own(), set(), [t.grad_fn]
        while stack:
            node = stack.pop()
            if node in seen or node in self._clean:
                continue
            seen.add(node)
            if _is_accumulate_grad(node):
                if node not in own:
                    return True
                continue
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
        self._clean.update(seen)
        return False

    def reaches_outer(self, tensors):
        """Whether any of ``tensors`` has a graph reaching a tensor of an outer level (so that
        results computed from them must keep their graph). False when grad mode was off where
        the transform was called: nothing outside records then."""
        return self.outer_grad_enabled and any(self._tensor_reaches_outer(t) for t in tensors)

    def unwrap(self, t):
        """A result of this level as the caller gets it: detached unless it reaches an outer level."""
        if isinstance(t, _Tensor) and t.requires_grad and not self.reaches_outer((t,)):
            return t.detach()
        return t

    def unwrap_aux(self, aux):
        """The ``aux`` output of a ``has_aux`` function unwrapped: a pytree of Tensors (or None)."""
        from ._pytree import tree_map

        def unwrap_one(x):
            if x is None or isinstance(x, _Tensor):
                return self.unwrap(x)
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")

        return tree_map(unwrap_one, aux)
