"""graft.optim.Optimizer: PyTorch's optimizer base (param_groups as dicts, state as a dict of
dicts keyed by parameter, state_dict / load_state_dict in PyTorch's format, step hooks). The
update arithmetic of the built-in optimizers runs in C++ (graft._C._optim).

Step hooks work as PyTorch 2.x's: the first instance of each Optimizer subclass replaces the
class's ``step`` with a wrapper (marked ``step.hooked``) that runs the global and per-instance
pre hooks, the step, then the post hooks, so user-defined subclasses are covered too."""
import copy
import functools
import warnings
import weakref
from collections import OrderedDict, defaultdict
from itertools import chain

from .. import _C
from .._tensor_types import _graft_type_name
from ..autograd.grad_mode import enable_grad
from ..utils.hooks import _add_hook

_Tensor = _C.Tensor
_optim = _C._optim


class _RequiredParameter:
    """Marks an option a parameter group must give (PyTorch's ``torch.optim.optimizer.required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _check_nonnegative(*checks):
    """PyTorch's constructor checks: ``ValueError('Invalid <what>: <value>')`` for the first
    ``(what, value)`` that is not >= 0 (NaN included)."""
    for what, value in checks:
        if not 0.0 <= value:
            raise ValueError(f"Invalid {what}: {value}")

# Hooks run around the step of every optimizer: hook id -> hook, in registration order.
_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Registers ``hook(optimizer, args, kwargs)`` to run before the step of every optimizer
    (before the optimizer's own pre hooks). ``args`` is the positional arguments of the step
    call, the optimizer first; the hook may return a new ``(args, kwargs)``. Returns a handle
    whose ``remove()`` unregisters it."""
    return _add_hook(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Registers ``hook(optimizer, args, kwargs)`` to run after the step of every optimizer
    (after the optimizer's own post hooks; not when the step raised). Returns a removable
    handle."""
    return _add_hook(_global_optimizer_post_hooks, hook)


def _hook_step(func):
    """Wraps a step function so that each call runs the step hooks once: the global pre hooks,
    the instance's, ``func``, then the instance's post hooks and the global ones (PyTorch's
    order). A step that calls another hooked step of the same optimizer (a subclass's step
    calling ``super().step()``) runs the hooks only in the outer call."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        self = args[0]
        state = self.__dict__
        if state.get("_in_hooked_step"):
            return func(*args, **kwargs)
        state["_in_hooked_step"] = True
        try:
            for pre_hook in tuple(chain(_global_optimizer_pre_hooks.values(),
                                        state.get("_optimizer_step_pre_hooks", {}).values())):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(
                            f"{func} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
            out = func(*args, **kwargs)
            for post_hook in tuple(chain(state.get("_optimizer_step_post_hooks", {}).values(),
                                         _global_optimizer_post_hooks.values())):
                post_hook(self, args, kwargs)
            return out
        finally:
            state["_in_hooked_step"] = False

    wrapper.hooked = True
    return wrapper


def _typename(obj):
    if isinstance(obj, _Tensor):
        return _graft_type_name(obj)
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


# the optimizers alive (graft.doctor: while one exists, its steps, not backward calls, end steps)
_live = weakref.WeakSet()


class Optimizer:
    """Base class of all optimizers. ``params`` is an iterable of tensors or of dicts (parameter
    groups, each with ``'params'`` and per-group options overriding ``defaults``)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._patch_step_function()
        if isinstance(params, _Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        _live.add(self)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    # Options a state saved by an older PyTorch may lack, with their defaults, and whether the
    # optimizer keeps "step" as a tensor; __setstate__ (and so load_state_dict) fills them in.
    _group_defaults = {}
    _tensor_step = False

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())
        self._patch_step_function()  # an unpickled optimizer may be the first of its class
        for group in self.param_groups:
            for key, value in self._group_defaults.items():
                group.setdefault(key, value)
        if self._tensor_step:
            for s in self.state.values():
                _step_to_tensor(s)

    def __repr__(self):
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    def _patch_step_function(self):
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = _hook_step(cls.step)

    def register_step_pre_hook(self, hook):
        """Registers ``hook(optimizer, args, kwargs)`` to run before each ``step()`` of this
        optimizer (after the global pre hooks). It may return a new ``(args, kwargs)`` for the
        step; ``args`` starts with the optimizer. Returns a handle whose ``remove()`` unregisters
        it."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """Registers ``hook(optimizer, args, kwargs)`` to run after each ``step()`` of this
        optimizer that returned (before the global post hooks). Returns a removable handle."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def add_param_group(self, param_group):
        """Adds a parameter group (a dict with ``'params'``; missing options take the defaults).
        Errors as PyTorch's: a parameter already in another group, a non-leaf tensor, ..."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, _Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        for param in params:
            if not isinstance(param, _Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(group["params"])
        if not param_set.isdisjoint(params):
            raise ValueError("some parameters appear in more than one parameter group")
        self._check_supported({**self.defaults, **param_group})
        # Everything is checked: now the group is changed and added.
        param_group["params"] = params
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        self.param_groups.append(param_group)

    @staticmethod
    def _check_supported(group):
        for option in ("differentiable", "capturable"):
            if group.get(option):
                raise NotImplementedError(
                    f"graft.optim does not support {option}=True: the update runs in graft's C++ loops, outside "
                    "autograd and CUDA graphs")

    def zero_grad(self, set_to_none=True):
        """Clears every parameter's gradient: drops it (set_to_none) or detaches and zeroes it in place."""
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if grad.grad_fn is not None:
                        grad.detach_()
                    else:
                        grad.requires_grad_(False)
                    grad.zero_()

    def step(self, closure=None):
        """Performs one update; subclasses implement it."""
        raise NotImplementedError

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _groups_to_step(self):
        """(group, params, grads) for each parameter group with at least one gradient."""
        for group in self.param_groups:
            params, grads = self._params_with_grad(group)
            if params:
                yield group, params, grads

    def _state_with(self, p, *zero_buffers):
        """p's state, created on first use with a ``step`` tensor and zero buffers of these names."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _optim.new_step(p.device)
            for name in zero_buffers:
                state[name] = _optim.zeros_state(p)
        return state

    def _state_lists(self, params, zero_buffers, **optional_buffers):
        """The state tensors of one group's update, as lists over ``params``: one list per name
        of ``zero_buffers``, one per keyword of ``optional_buffers`` (a zero buffer made when the
        keyword's value is true, else None entries), then the ``step`` tensors. State is created
        as _state_with does, the optional buffers after it."""
        lists = {name: [] for name in (*zero_buffers, *optional_buffers, "step")}
        for p in params:
            state = self._state_with(p, *zero_buffers)
            for name, wanted in optional_buffers.items():
                if wanted and name not in state:
                    state[name] = _optim.zeros_state(p)
            for name, values in lists.items():
                values.append(state[name] if optional_buffers.get(name, True) else None)
        return lists.values()

    def _params_with_grad(self, group):
        """The group's parameters that have a gradient, with those gradients."""
        params, grads = [], []
        self._check_supported(group)
        for p in group["params"]:
            g = p.grad
            if g is not None:
                params.append(p)
                grads.append(g)
        return params, grads

    def state_dict(self):
        """``{'state': {index: {name: value}}, 'param_groups': [{option: value, 'params': [indices]}]}``:
        parameters numbered in group order; the state tensors themselves, not copies (as PyTorch)."""
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, _Tensor) else k): v for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        """Loads a state_dict() result: checks the groups first (PyTorch's errors), then takes the
        options and copies of the state (as PyTorch 1.13, which deep-copies: the optimizer never
        shares state tensors with the dict), cast to each parameter's dtype ('step' keeps its own)."""
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, _Tensor):
                cast_value = value
                if key != "step" and param.is_floating_point() and value.is_floating_point():
                    cast_value = value.to(param.dtype)
                if cast_value is value:
                    cast_value = value.clone()
                _optim.tag_state(cast_value)
                return cast_value
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return copy.deepcopy(value)

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = copy.deepcopy(v)

        new_groups = []
        for group, new_group in zip(groups, saved_groups):
            new_group["params"] = group["params"]
            new_groups.append(new_group)
        self.__setstate__({"state": state, "param_groups": new_groups})


def _step_to_tensor(state):
    """A state dict saved with a Python number as 'step' (older PyTorch) gets a tensor step."""
    step = state.get("step")
    if step is not None and not isinstance(step, _C.Tensor):
        t = _optim.new_step()
        t.fill_(float(step))
        state["step"] = t
