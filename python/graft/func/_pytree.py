"""graft.func._pytree: the nested-container ("pytree") helpers behind graft.func's transforms, as
torch.utils._pytree: tuples, lists, dicts, OrderedDicts and namedtuples are nodes, anything else
(Tensors, numbers, None, graft.Size) is a leaf. TreeSpec prints as PyTorch 1.13's does
(``TreeSpec(tuple, None, [*, *])``), so vmap's structure errors read as functorch's."""
from collections import OrderedDict, namedtuple

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "treespec_pprint"]


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _odict_unflatten(values, context):
    return OrderedDict(zip(context, values))


def _seq_flatten(d):
    return list(d), None


def _namedtuple_flatten(d):
    return list(d), type(d)


_NODES = {
    dict: (_dict_flatten, _dict_unflatten),
    OrderedDict: (_dict_flatten, _odict_unflatten),
    list: (_seq_flatten, lambda values, context: list(values)),
    tuple: (_seq_flatten, lambda values, context: tuple(values)),
    namedtuple: (_namedtuple_flatten, lambda values, context: context(*values)),
}


def _is_namedtuple_instance(tree):
    typ = type(tree)
    if typ.__bases__ != (tuple,):
        return False
    fields = getattr(typ, "_fields", None)
    return isinstance(fields, tuple) and all(type(f) is str for f in fields)


def _node_type(tree):
    return namedtuple if _is_namedtuple_instance(tree) else type(tree)


def _is_leaf(tree):
    return _node_type(tree) not in _NODES


class TreeSpec:
    """The structure of a pytree: its node type, the node's context (dict keys, namedtuple
    class) and one spec per child."""

    def __init__(self, typ, context, children_specs):
        self.type = typ
        self.context = context
        self.children_specs = children_specs
        self.num_leaves = sum(spec.num_leaves for spec in children_specs)

    def __repr__(self):
        return f"TreeSpec({self.type.__name__}, {self.context}, {self.children_specs})"

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (self.type == other.type and self.context == other.context
                and self.children_specs == other.children_specs and self.num_leaves == other.num_leaves)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None


class LeafSpec(TreeSpec):
    """The spec of a leaf (printed ``*``)."""

    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1

    def __repr__(self):
        return "*"


def tree_flatten(tree):
    """Returns ``(leaves, spec)``: the leaves of ``tree`` in order and its structure."""
    if _is_leaf(tree):
        return [tree], LeafSpec()
    node_type = _node_type(tree)
    children, context = _NODES[node_type][0](tree)
    leaves, specs = [], []
    for child in children:
        flat, spec = tree_flatten(child)
        leaves += flat
        specs.append(spec)
    return leaves, TreeSpec(node_type, context, specs)


def tree_unflatten(values, spec):
    """Inverse of tree_flatten: builds the pytree of structure ``spec`` holding ``values``."""
    values = list(values)
    if len(values) != spec.num_leaves:
        raise ValueError(f"tree_unflatten(values, spec): `values` has length {len(values)} but the spec refers "
                         f"to a pytree that holds {spec.num_leaves} items ({spec}).")
    if isinstance(spec, LeafSpec):
        return values[0]
    children, start = [], 0
    for child_spec in spec.children_specs:
        end = start + child_spec.num_leaves
        children.append(tree_unflatten(values[start:end], child_spec))
        start = end
    return _NODES[spec.type][1](children, spec.context)


def tree_map(fn, tree):
    """``tree`` with every leaf replaced by ``fn(leaf)``."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(leaf) for leaf in leaves], spec)


def broadcast_to_and_flatten(tree, spec):
    """The leaves of ``tree`` broadcast to the structure ``spec`` (a leaf of ``tree`` stands for the
    whole subtree at its place), or None when the structures do not match."""
    if _is_leaf(tree):
        return [tree] * spec.num_leaves
    if isinstance(spec, LeafSpec) or _node_type(tree) != spec.type:
        return None
    children, context = _NODES[spec.type][0](tree)
    if len(children) != len(spec.children_specs) or context != spec.context:
        return None
    result = []
    for child, child_spec in zip(children, spec.children_specs):
        flat = broadcast_to_and_flatten(child, child_spec)
        if flat is None:
            return None
        result += flat
    return result


class _PlaceHolder:
    def __repr__(self):
        return "*"


def treespec_pprint(spec):
    """The structure ``spec`` written as a Python literal with ``*`` leaves, e.g. ``(*, {'a': *})``."""
    return repr(tree_unflatten([_PlaceHolder() for _ in range(spec.num_leaves)], spec))
