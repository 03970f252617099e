"""graft.nn.Parameter and graft.nn.Module: registration, traversal, state_dict /
load_state_dict (exact error texts, failure atomicity), modes, conversion, hooks, repr."""
import collections
import copy
import re

import pytest

import graft
import graft.nn as nn


def values(t):
    return t.detach().tolist()


def linear_with(weight, bias):
    m = nn.Linear(len(weight[0]), len(weight))
    with graft.no_grad():
        m.weight.copy_(graft.tensor(weight))
        m.bias.copy_(graft.tensor(bias))
    return m


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(self.fc(x))


# ---------------------------------------------------------------- Parameter

def test_parameter_is_a_leaf_alias_of_its_data():
    data = graft.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, graft.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == data.data_ptr()
    data.add_(1)
    assert values(p) == [2.0, 3.0]
    assert not nn.Parameter(data, requires_grad=False).requires_grad


def test_parameter_of_a_graph_result_is_detached():
    x = graft.tensor([1.0, 2.0], requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


def test_empty_parameter():
    p = nn.Parameter()
    assert tuple(p.shape) == (0,) and p.requires_grad


def test_parameter_repr():
    p = nn.Parameter(graft.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert repr(nn.Parameter(graft.tensor([1.5]), requires_grad=False)) == "Parameter containing:\ntensor([1.5000])"


def test_ops_on_a_parameter_return_plain_tensors():
    p = nn.Parameter(graft.tensor([1.0, 2.0]))
    for r in (p * 2, p + p, p.detach(), p.sum(), graft.relu(p)):
        assert type(r) is graft.Tensor
    assert type(p.requires_grad_(True)) is nn.Parameter


def test_parameter_deepcopy_keeps_type_and_copies_data():
    p = nn.Parameter(graft.tensor([1.0, 2.0]))
    p.grad = graft.tensor([0.5, 0.5])
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad
    assert values(q) == [1.0, 2.0] and values(q.grad) == [0.5, 0.5]
    assert q.data_ptr() != p.data_ptr()
    frozen = copy.deepcopy(nn.Parameter(graft.tensor([1.0]), requires_grad=False))
    assert type(frozen) is nn.Parameter and not frozen.requires_grad


def test_parameter_reduces_to_its_data_and_flag():
    p = nn.Parameter(graft.tensor([1.0, 2.0]), requires_grad=False)
    rebuild, args = p.__reduce_ex__(2)
    assert rebuild is nn.Parameter and type(args[0]) is graft.Tensor and args[1] is False
    q = rebuild(*args)
    assert type(q) is nn.Parameter and not q.requires_grad and values(q) == [1.0, 2.0]


# ---------------------------------------------------------------- registration

def test_setattr_registers_parameters_modules_and_buffers():
    m = nn.Module()
    m.w = nn.Parameter(graft.zeros(2))
    m.child = nn.Linear(1, 1)
    m.register_buffer("buf", graft.ones(1))
    m.plain = 3
    assert list(m._parameters) == ["w"] and list(m._modules) == ["child"] and list(m._buffers) == ["buf"]
    assert m.w is m._parameters["w"] and m.child is m._modules["child"] and m.buf is m._buffers["buf"]
    assert "plain" in m.__dict__


def test_assigning_a_tensor_to_a_parameter_name_fails():
    m = nn.Linear(2, 3)
    with pytest.raises(TypeError, match=re.escape(
            "cannot assign 'graft.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)")):
        m.weight = graft.zeros(3, 2)
    with pytest.raises(TypeError, match=re.escape(
            "cannot assign 'graft.DoubleTensor' as parameter 'bias' (torch.nn.Parameter or None expected)")):
        m.bias = graft.zeros(3, dtype=graft.float64)
    assert isinstance(m.weight, nn.Parameter)


def test_assigning_none_to_a_parameter_keeps_the_slot():
    m = nn.Linear(2, 3)
    m.bias = None
    assert "bias" in m._parameters and m.bias is None
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert list(m.state_dict()) == ["weight"]


def test_register_parameter_errors():
    m = nn.Linear(2, 3)
    with pytest.raises(TypeError, match=re.escape(
            "cannot assign 'graft.FloatTensor' object to parameter 'w' (torch.nn.Parameter or None required)")):
        m.register_parameter("w", graft.zeros(1))
    with pytest.raises(KeyError) as info:
        m.register_parameter("a.b", None)
    assert info.value.args == ("parameter name can't contain \".\"",)
    with pytest.raises(KeyError) as info:
        m.register_parameter("", None)
    assert info.value.args == ("parameter name can't be empty string \"\"",)
    with pytest.raises(TypeError, match="parameter name should be a string. Got int"):
        m.register_parameter(1, None)
    m.foo = 3
    with pytest.raises(KeyError, match="attribute 'foo' already exists"):
        m.register_parameter("foo", None)
    with pytest.raises(KeyError, match="attribute 'foo' already exists"):
        m.register_buffer("foo", None)
    with pytest.raises(KeyError, match="attribute 'foo' already exists"):
        m.add_module("foo", nn.ReLU())


def test_register_buffer_and_module_errors():
    m = nn.Linear(2, 3)
    with pytest.raises(TypeError, match=re.escape("cannot assign 'int' object to buffer 'x' (torch Tensor or None "
                                                  "required)")):
        m.register_buffer("x", 3)
    with pytest.raises(KeyError) as info:
        m.register_buffer("a.b", None)
    assert info.value.args == ("buffer name can't contain \".\"",)
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        m.register_buffer("weight", graft.zeros(1))
    with pytest.raises(KeyError) as info:
        m.add_module("a.b", nn.ReLU())
    assert info.value.args == ("module name can't contain \".\", got: a.b",)
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("x", 3)
    m.register_buffer("buf", graft.zeros(2))
    with pytest.raises(TypeError, match=re.escape("cannot assign 'int' as buffer 'buf' (torch.Tensor or None "
                                                  "expected)")):
        m.buf = 3
    s = nn.Sequential(nn.Linear(1, 1))
    with pytest.raises(TypeError, match=re.escape("cannot assign 'int' as child module '0' (torch.nn.Module or None "
                                                  "expected)")):
        setattr(s, "0", 3)


def test_assigning_before_init_fails():
    class NoInit(nn.Module):
        def __init__(self, value):
            self.x = value

    with pytest.raises(AttributeError, match=re.escape("cannot assign parameters before Module.__init__() call")):
        NoInit(nn.Parameter(graft.zeros(1)))
    with pytest.raises(AttributeError, match=re.escape("cannot assign module before Module.__init__() call")):
        NoInit(nn.ReLU())
    assert NoInit(3).x == 3


def test_reassigning_moves_a_name_between_registries():
    m = nn.Module()
    m.register_buffer("x", graft.zeros(1))
    m.x = nn.Parameter(graft.ones(1))
    assert "x" not in m._buffers and "x" in m._parameters
    with pytest.raises(TypeError, match=re.escape("cannot assign 'graft.nn.modules.activation.ReLU' as parameter 'x' "
                                                  "(torch.nn.Parameter or None expected)")):
        m.x = nn.ReLU()
    m.y = nn.ReLU()
    m.y = nn.Parameter(graft.ones(1))
    assert "y" not in m._modules and "y" in m._parameters


def test_getattr_and_delattr():
    m = nn.Linear(2, 3)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        m.nope
    del m.weight
    assert "weight" not in m._parameters
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'weight'"):
        m.weight
    with pytest.raises(AttributeError):
        del m.nope


def test_missing_forward():
    with pytest.raises(NotImplementedError, match=re.escape('Module [Module] is missing the required "forward" '
                                                            'function')):
        nn.Module()(graft.zeros(1))


def test_dir_lists_registered_names_but_not_indices():
    m = nn.Sequential(nn.Linear(1, 1))
    m.register_buffer("buf", graft.zeros(1))
    d = dir(m)
    assert "buf" in d and "forward" in d and "0" not in d
    assert "weight" in dir(nn.Linear(1, 1))


# ---------------------------------------------------------------- traversal

def test_shared_parameters_and_modules_are_listed_once():
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [n for n, _ in m.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert len(list(m.parameters())) == 2
    other = nn.Linear(2, 2)
    other.weight = shared.weight
    pair = nn.ModuleList([shared, other])
    assert [n for n, _ in pair.named_parameters()] == ["0.weight", "0.bias", "1.bias"]


def test_named_members_prefix_and_recurse():
    net = Net()
    assert [n for n, _ in net.named_parameters(prefix="model")] == \
        ["model.fc.weight", "model.fc.bias", "model.bn.weight", "model.bn.bias"]
    assert list(net.named_parameters(recurse=False)) == []
    assert [n for n, _ in net.named_buffers()] == ["bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["fc", "bn"]
    assert [type(m).__name__ for m in net.modules()] == ["Net", "Linear", "BatchNorm1d"]
    assert [n for n, _ in net.named_modules(prefix="root")] == ["root", "root.fc", "root.bn"]


def test_named_modules_memo():
    net = Net()
    memo = {net.fc}
    assert [n for n, _ in net.named_modules(memo=memo)] == ["", "bn"]


def test_get_submodule_parameter_buffer():
    s = nn.Sequential(nn.Linear(1, 1), nn.BatchNorm1d(1))
    assert s.get_submodule("") is s and s.get_submodule("0") is s[0]
    assert s.get_parameter("0.weight") is s[0].weight
    assert s.get_buffer("1.running_mean") is s[1].running_mean
    with pytest.raises(AttributeError, match="Sequential has no attribute `2`"):
        s.get_submodule("2")
    with pytest.raises(AttributeError, match="Linear has no attribute `foo`"):
        s.get_submodule("0.foo")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        s.get_submodule("0.weight")
    with pytest.raises(AttributeError, match="`0` is not an nn.Parameter"):
        s.get_parameter("0")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        s.get_buffer("0.weight")


# ---------------------------------------------------------------- state_dict

def test_state_dict_keys_values_and_metadata():
    net = Net()
    net.register_buffer("scratch", graft.zeros(1), persistent=False)
    sd = net.state_dict()
    assert isinstance(sd, collections.OrderedDict)
    assert list(sd) == ["fc.weight", "fc.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
                        "bn.num_batches_tracked"]
    assert dict(sd._metadata) == {"": {"version": 1}, "fc": {"version": 1}, "bn": {"version": 2}}
    w = sd["fc.weight"]
    assert type(w) is graft.Tensor and not w.requires_grad and w.grad_fn is None
    assert w.data_ptr() == net.fc.weight.data_ptr()
    assert sd["bn.num_batches_tracked"].dtype == graft.int64
    assert "scratch" in dict(net.named_buffers())


def test_state_dict_keep_vars_and_prefix():
    net = Net()
    sd = net.state_dict(keep_vars=True)
    assert sd["fc.weight"] is net.fc.weight
    assert list(net.fc.state_dict(prefix="p.")) == ["p.weight", "p.bias"]


def test_load_state_dict_round_trip_copies_in_place():
    a, b = Net(), Net()
    with graft.no_grad():
        a.bn.running_mean.fill_(0.25)
        a.bn.num_batches_tracked.fill_(7)
    weight_obj, ptr = b.fc.weight, b.fc.weight.data_ptr()
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.fc.weight is weight_obj and b.fc.weight.data_ptr() == ptr
    assert values(b.fc.weight) == values(a.fc.weight)
    assert values(b.bn.running_mean) == [0.25] * 3 and b.bn.num_batches_tracked.item() == 7


def test_load_state_dict_strict_error_text_and_atomicity():
    net = Net()
    before = {k: v.clone().tolist() for k, v in net.state_dict().items()}
    bad = collections.OrderedDict(Net().state_dict())
    del bad["fc.bias"]
    bad["extra"] = graft.zeros(1)
    bad["fc.weight"] = graft.zeros(4, 2)
    expected = ("Error(s) in loading state_dict for Net:\n"
                "\tMissing key(s) in state_dict: \"fc.bias\". \n"
                "\tUnexpected key(s) in state_dict: \"extra\". \n"
                "\tsize mismatch for fc.weight: copying a param with shape graft.Size([4, 2]) from checkpoint, "
                "the shape in current model is graft.Size([3, 2]).")
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(bad)
    assert str(info.value) == expected
    # nothing was copied, not even the entries that matched (bn.*)
    assert {k: v.tolist() for k, v in net.state_dict().items()} == before


def test_load_state_dict_size_mismatch_raises_even_when_not_strict():
    net = Net()
    bad = net.state_dict()
    bad = collections.OrderedDict((k, v.clone()) for k, v in bad.items())
    bad["bn.running_var"] = graft.zeros(5)
    with pytest.raises(RuntimeError, match=re.escape(
            "Error(s) in loading state_dict for Net:\n\tsize mismatch for bn.running_var: copying a param with shape "
            "graft.Size([5]) from checkpoint, the shape in current model is graft.Size([3]).")):
        net.load_state_dict(bad, strict=False)


def test_load_state_dict_not_strict_reports_keys_and_loads_the_rest():
    net = Net()
    sd = collections.OrderedDict((k, graft.full_like(v, 2)) for k, v in Net().state_dict().items())
    del sd["fc.bias"]
    sd["extra"] = graft.zeros(1)
    sd["zz.a"] = graft.zeros(1)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc.bias"] and result.unexpected_keys == ["extra", "zz.a"]
    assert repr(result) == "_IncompatibleKeys(missing_keys=['fc.bias'], unexpected_keys=['extra', 'zz.a'])"
    assert values(net.fc.weight) == [[2.0, 2.0]] * 3


def test_load_state_dict_bad_inputs():
    net = Net()
    with pytest.raises(TypeError, match=re.escape("Expected state_dict to be dict-like, got <class 'int'>.")):
        net.load_state_dict(3)
    sd = collections.OrderedDict(net.state_dict())
    sd["fc.weight"] = 3
    with pytest.raises(RuntimeError, match=re.escape(
            "Error(s) in loading state_dict for Net:\n\tWhile copying the parameter named \"fc.weight\", expected "
            "torch.Tensor or Tensor-like object from checkpoint but received <class 'int'>")):
        net.load_state_dict(sd)


def test_load_state_dict_old_batch_norm_checkpoint_keeps_its_count():
    net = Net()
    with graft.no_grad():
        net.bn.num_batches_tracked.fill_(5)
    sd = collections.OrderedDict(Net().state_dict())  # a plain copy has no _metadata (version unknown)
    del sd["bn.num_batches_tracked"]
    assert net.load_state_dict(sd).missing_keys == []
    assert net.bn.num_batches_tracked.item() == 5


def test_load_state_dict_assign_takes_the_tensors():
    net = nn.Linear(2, 1)
    w = graft.tensor([[3.0, 4.0]])
    net.load_state_dict({"weight": w, "bias": graft.tensor([1.0])}, assign=True)
    assert isinstance(net.weight, nn.Parameter) and net.weight.data_ptr() == w.data_ptr()


def test_extra_state_round_trip():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = WithExtra(), WithExtra()
    a.value = 9
    sd = a.state_dict()
    assert sd["_extra_state"] == {"value": 9}
    b.load_state_dict(sd)
    assert b.value == 9


# ---------------------------------------------------------------- modes and conversion

def test_train_eval_apply_requires_grad():
    net = Net()
    assert net.eval() is net and not net.training and not net.fc.training and not net.bn.training
    assert net.train() is net and net.bn.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "BatchNorm1d", "Net"]
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad():
    m = nn.Linear(2, 1)
    m(graft.ones(1, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert values(m.weight.grad) == [[0.0, 0.0]] and values(m.bias.grad) == [0.0]
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None


def test_to_double_converts_in_place_keeping_references():
    net = Net()
    params = list(net.parameters())
    net(graft.randn(4, 2)).sum().backward()
    assert net.double() is net
    assert [p is q for p, q in zip(params, net.parameters())] == [True] * 4
    assert all(p.dtype == graft.float64 and p.grad.dtype == graft.float64 for p in net.parameters())
    assert net.bn.running_mean.dtype == graft.float64 and net.bn.num_batches_tracked.dtype == graft.int64
    net.to(graft.float32)
    assert all(p.dtype == graft.float32 for p in net.parameters())
    net.to(dtype=graft.float64).float().cpu().to("cpu")
    assert net.fc.weight.dtype == graft.float32 and params[0] is net.fc.weight
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                        "dtype=graft.int64"):
        net.to(graft.int64)


# ---------------------------------------------------------------- forward hooks

def test_forward_hook_order_replacement_and_removal():
    s = nn.Sequential(nn.ReLU())
    order = []
    h1 = s.register_forward_pre_hook(lambda m, args: order.append("pre1"))
    h0 = s.register_forward_pre_hook(lambda m, args: order.append("pre0"), prepend=True)
    s.register_forward_hook(lambda m, args, out: order.append("post") or out * 10)
    s.register_forward_pre_hook(lambda m, args: args[0] + 1)  # a non-tuple result becomes (result,)
    assert values(s(graft.tensor([1.0, -3.0]))) == [20.0, 0.0]
    assert order == ["pre0", "pre1", "post"]
    h0.remove()
    h0.remove()  # removing twice is harmless
    order.clear()
    s(graft.tensor([1.0]))
    assert order == ["pre1", "post"]
    with s.register_forward_hook(lambda m, args, out: order.append("ctx")):
        s(graft.tensor([1.0]))
    order.clear()
    s(graft.tensor([1.0]))
    assert order == ["pre1", "post"]
    h1.remove()


def test_forward_hooks_with_kwargs():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    m = Scale()
    seen = []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": kwargs["factor"] * 2}),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(kwargs["factor"]), with_kwargs=True)
    assert values(m(graft.tensor([1.0]), factor=3.0)) == [6.0]
    assert seen == [6.0]
    m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match=re.escape("forward pre-hook must return None or a tuple of (new_args, "
                                                     "new_kwargs), but got 5.")):
        m(graft.tensor([1.0]), factor=1.0)


# ---------------------------------------------------------------- backward hooks

def test_full_backward_hook_sees_grad_input_and_grad_output():
    m = linear_with([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [0.0, 0.0])
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((mod, [values(g) for g in gi],
                                                                   [values(g) for g in go])))
    x = graft.tensor([[1.0, 0.0, -1.0]], requires_grad=True)
    y = m(x)
    assert y.grad_fn.name() == "BackwardHookFunctionBackward"
    y.sum().backward()
    assert seen == [(m, [[[5.0, 7.0, 9.0]]], [[[1.0, 1.0]]])]
    assert values(x.grad) == [[5.0, 7.0, 9.0]]
    assert values(m.weight.grad) == [[1.0, 0.0, -1.0]] * 2


def test_full_backward_hook_without_input_grad_gets_none():
    m = linear_with([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [0.0, 0.0])
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, [values(g) for g in go])))
    m(graft.tensor([[1.0, 0.0, -1.0]])).sum().backward()
    assert seen == [((None,), [[[1.0, 1.0]]])]


def test_full_backward_hook_replaces_grad_input_and_is_removable():
    m = linear_with([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [0.0, 0.0])
    handle = m.register_full_backward_hook(lambda mod, gi, go: (graft.ones_like(gi[0]),))
    x = graft.tensor([[1.0, 0.0, -1.0]], requires_grad=True)
    m(x).sum().backward()
    assert values(x.grad) == [[1.0, 1.0, 1.0]]
    handle.remove()
    x.grad = None
    m(x).sum().backward()
    assert values(x.grad) == [[5.0, 7.0, 9.0]]


def test_full_backward_pre_hook_scales_grad_output():
    m = linear_with([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [0.0, 0.0])
    order = []
    m.register_full_backward_pre_hook(lambda mod, go: order.append("pre") or (go[0] * 2,))
    m.register_full_backward_hook(lambda mod, gi, go: order.append(("full", values(go[0]))))
    x = graft.tensor([[1.0, 0.0, -1.0]], requires_grad=True)
    m(x).sum().backward()
    assert order == ["pre", ("full", [[2.0, 2.0]])]
    assert values(x.grad) == [[10.0, 14.0, 18.0]] and values(m.bias.grad) == [2.0, 2.0]


def test_full_backward_hook_with_several_inputs_and_outputs():
    class Mix(nn.Module):
        def forward(self, a, b, scale):
            return a * b * scale, a + b

    m = Mix()
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(([None if g is None else values(g) for g in gi],
                                                                   [None if g is None else values(g) for g in go])))
    a = graft.tensor([1.0, 2.0], requires_grad=True)
    b = graft.tensor([3.0, 4.0])
    prod, total = m(a, b, 2.0)
    prod.sum().backward()
    assert seen == [([[6.0, 8.0], None, None], [[1.0, 1.0], None])]
    assert values(a.grad) == [6.0, 8.0]


def test_deprecated_backward_hook_is_refused():
    with pytest.raises(NotImplementedError, match="use register_full_backward_hook"):
        nn.Linear(1, 1).register_backward_hook(lambda *a: None)


def test_backward_hook_wrong_number_of_grads():
    m = linear_with([[1.0]], [0.0])
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    x = graft.tensor([[1.0]], requires_grad=True)
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, but "
                                           "expected 1"):
        m(x).sum().backward()


# ---------------------------------------------------------------- repr

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.act = nn.ReLU(inplace=True)

    def extra_repr(self):
        return "depth=2\nwidth=8"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(Block(), nn.MaxPool2d(2))
        self.head = nn.ModuleList([nn.Flatten(), nn.Linear(8, 10)])
        self.skip = None
        self.loss = nn.CrossEntropyLoss()


def test_nested_repr_matches_pytorch():
    # the string torch 1.13 prints for the same model
    expected = (
        "Model(\n  (stem): Sequential(\n    (0): Block(\n      depth=2\n      width=8\n      (conv): Conv2d(3, 8, "
        "kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)\n      (bn): BatchNorm2d(8, eps=1e-05, "
        "momentum=0.1, affine=True, track_running_stats=True)\n      (act): ReLU(inplace=True)\n    )\n    (1): "
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n  )\n  (head): ModuleList(\n"
        "    (0): Flatten(start_dim=1, end_dim=-1)\n    (1): Linear(in_features=8, out_features=10, bias=True)\n  )\n"
        "  (loss): CrossEntropyLoss()\n)")
    assert repr(Model()) == expected
    assert repr(nn.Sequential()) == "Sequential()"
    assert repr(nn.Module()) == "Module()"
