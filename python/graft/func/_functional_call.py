"""graft.func.functional_call and stack_module_state, as torch.func's: call a module with its
parameters and buffers replaced by given tensors (restored afterwards, also when the call
raises), and stack the state of several modules of one class for ensembling with vmap."""
import contextlib
from collections.abc import Sequence

from .. import _C
from .. import nn

_Tensor = _C.Tensor
_MISSING = object()

__all__ = ["functional_call", "stack_module_state"]


def _get_submodule(module, name, memo):
    if not name:
        return module
    if name not in memo:
        prefix, dot, attr = name.rpartition(".")
        parent = _get_submodule(module, prefix, memo) if dot else module
        try:
            sub = getattr(parent, attr)
        except AttributeError as ex:
            raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
        if not isinstance(sub, nn.Module):
            raise TypeError(f"submodule `{name}`: {sub} is not an instance of torch.nn.Module")
        memo[name] = sub
    return memo[name]


def _swap_tensor(module, name, tensor):
    """Puts ``tensor`` (or removes the attribute, for _MISSING) at ``name`` of ``module``; returns
    what was there (_MISSING when nothing), as torch.nn.utils._named_member_accessor.swap_tensor."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, _Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for registry in (module._parameters, module._buffers):
        if name in registry:
            orig = registry[name]
            if tensor is _MISSING:
                del registry[name]
            else:
                registry[name] = tensor
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and orig is not None and not isinstance(orig, _Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _swap_all(module, named_tensors, memo):
    """Swaps every entry of ``named_tensors`` in; returns the originals (undone on error)."""
    originals = {}
    try:
        for name, tensor in named_tensors.items():
            prefix, _, attr = name.rpartition(".")
            originals[name] = _swap_tensor(_get_submodule(module, prefix, memo), attr, tensor)
    except Exception:
        _restore(module, originals, memo)
        raise
    return originals


def _restore(module, originals, memo):
    restored = {}
    for name, orig in originals.items():
        prefix, _, attr = name.rpartition(".")
        restored[name] = _swap_tensor(_get_submodule(module, prefix, memo), attr, orig)
    return restored


def _untie(module, parameters_and_buffers):
    """Adds the tied names of the given tensors (tie_weights=True), as PyTorch's
    _untie_named_tensors_map; raises for different values given for one tied tensor."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    names_of = {}
    for name, tensor in named.items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given = {name for name in parameters_and_buffers if name in tied}
    for name in given:
        names = tied[name]
        if len(names & given) > 1 and len({id(parameters_and_buffers[n]) for n in names & given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given:
        for tied_name in tied[name]:
            untied[tied_name] = parameters_and_buffers[name]
    return untied


def _check_strict(module, keys):
    valid = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    valid |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
    missing, unexpected = sorted(valid - set(keys)), sorted(set(keys) - valid)
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(msgs)))


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    untied = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        _check_strict(module, untied.keys())
    memo = {}
    originals = {}
    try:
        originals = _swap_all(module, untied, memo)
        yield
    finally:
        new = _restore(module, originals, memo)
        # A module that assigned to its parameters or buffers in place of the given ones: the
        # caller's dict sees the new values, as in PyTorch.
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def _merge_dicts(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                     f"{type(parameter_and_buffer_dicts)}")


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Calls ``module(*args, **kwargs)`` with its parameters and buffers replaced by the tensors of
    ``parameter_and_buffer_dicts`` (a dict, or a sequence of dicts with distinct keys, from
    state-dict names such as ``"0.weight"`` to tensors); the module's own tensors are put back
    afterwards. ``args`` that is not a tuple is the single positional argument.

    ``tie_weights=True``: names tied in the module (one tensor under several names) all take the
    value given for any of them (different values for one tied tensor raise). ``strict=True``:
    missing or unexpected names raise. This is how to differentiate a module with respect to
    its parameters: ``grad(lambda p, x: functional_call(model, p, (x,)).sum())(params, x)``."""
    parameters_and_buffers = _merge_dicts(parameter_and_buffer_dicts)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def _stacked_leaf(tensors, name):
    all_requires_grad = all(t.requires_grad for t in tensors)
    none_requires_grad = all(not t.requires_grad for t in tensors)
    if not all_requires_grad and not none_requires_grad:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = _C.stack(tensors)
    if all_requires_grad:
        result = result.detach().requires_grad_()
    return result


def stack_module_state(models):
    """Returns ``(params, buffers)``: dicts from each parameter (buffer) name of the ``models``
    (modules of one class, in one training mode) to the stack of their tensors along a new first
    dimension. The stacked parameters are new leaves (requiring grad when the originals do), for
    ``vmap(lambda p, b, x: functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))``."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    model0_typ = type(models[0])
    if not all(type(m) is model0_typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(model.named_parameters()) for model in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(model.named_buffers()) for model in models]
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers
