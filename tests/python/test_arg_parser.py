"""The generated bindings' argument parser (python/csrc/arg_parser.cpp) against PyTorch's: the
same calls are taken or refused, with PyTorch's TypeError texts (torch 1.13 as the reference;
its "tuple of SymInts" is graft's "tuple of ints", and its overloads for named tensors and out=
are not graft's)."""
import re

import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.nn.functional as F  # noqa: E402


def outcome(lib, call):
    """What `call(lib, x, ...)` gives: ("ok", shape) or (exception type name, first line)."""
    x = lib.ones(2, 2)
    try:
        r = call(lib, x)
    except Exception as e:  # noqa: BLE001  (the type is the result)
        return type(e).__name__, str(e).replace("SymInts", "ints").replace("torch.", "graft.")
    return "ok", tuple(r.shape)


CALLS = {  # one overload: the one wrong argument, as PyTorch names it
    "missing one": lambda t, x: t.mm(x),
    "missing two (PyTorch's plural, sic)": lambda t, x: t.mm(),
    "wrong type at a position": lambda t, x: t.mm(x, 3),
    "too many": lambda t, x: t.mm(x, x, x),
    "too many for a method": lambda t, x: x.mm(x, x),
    "unknown keyword": lambda t, x: t.mm(x, x, foo=1),
    "a keyword given twice": lambda t, x: t.mm(x, mat2=x, input=x),
    "every argument by keyword": lambda t, x: t.mm(input=x, mat2=x),
    "self's argument by keyword": lambda t, x: x.mm(mat2=x),
    "missing for a method": lambda t, x: x.mm(),
    # an int list: varargs, one sequence, or the keyword; its elements checked one by one
    "varargs": lambda t, x: x.permute(1, 0),
    "one int as varargs": lambda t, x: t.ones(3).permute(0),
    "a sequence": lambda t, x: x.permute((1, 0)),
    "a keyword sequence": lambda t, x: x.permute(dims=[1, 0]),
    "the function's sequence": lambda t, x: t.permute(x, (1, 0)),
    "an int where the function wants a sequence": lambda t, x: t.permute(x, 0),
    "a bad element": lambda t, x: x.permute(0, 1.0),
    "a bad element in a sequence": lambda t, x: x.permute([0, "a"]),
    "varargs and the keyword": lambda t, x: x.permute(0, dims=(0,)),
    "no dims": lambda t, x: x.permute(),
    "an int beyond int64": lambda t, x: x.unsqueeze(2 ** 70),
    "an int beyond int64 as a one-int list": lambda t, x: t.sum(x, 2 ** 63),
    "an int beyond int64 in a list": lambda t, x: x.permute(2 ** 70, 0),
    "an int beyond int64 later in a list": lambda t, x: x.repeat([1, 2 ** 64]),
    "a method only": lambda t, x: x.repeat(2, 1),
    "NumPy and 0-d tensor ints": lambda t, x: x.repeat(t.tensor(2), __import__("numpy").int64(1)),
    "a float in repeats": lambda t, x: x.repeat(2.0),
    # None for a Tensor? argument; int[] without a size refuses a single int
    "None bias": lambda t, x: t.convolution(t.ones(1, 1, 3, 3), t.ones(1, 1, 2, 2), None, [1], [0], [1], False,
                                            [0], 1),
    "an int stride": lambda t, x: t.convolution(t.ones(1, 1, 3, 3), t.ones(1, 1, 2, 2), None, 1, [0], [1], False,
                                                [0], 1),
    "a tensor where a bool goes": lambda t, x: t.convolution(t.ones(1, 1, 3, 3), t.ones(1, 1, 2, 2), None, [1], [0],
                                                             [1], x, [0], 1),
    "ten positional": lambda t, x: t.convolution(x, x, None, [1], [0], [1], False, [0], 1, 2),
    "F.linear's None bias": lambda t, x: t.nn.functional.linear(x, x, None),
    "F.linear's bias of the wrong type": lambda t, x: t.nn.functional.linear(x, x, 3),
    "F.layer_norm's int shape": lambda t, x: t.nn.functional.layer_norm(x, 2),
    "F.layer_norm's weight": lambda t, x: t.nn.functional.layer_norm(x, (2,), 3),
    "F.conv_transpose2d's stride string": lambda t, x: t.nn.functional.conv_transpose2d(
        t.ones(1, 1, 3, 3), t.ones(1, 1, 2, 2), stride="a"),
    "F.conv_transpose2d's single ints": lambda t, x: t.nn.functional.conv_transpose2d(
        t.ones(1, 1, 3, 3), t.ones(1, 1, 2, 2), None, 2, 1, 1),
    # the losses: torch.nn.functional's Python layer (legacy arguments, size checks) over the
    # generated bindings, whose reduction is PyTorch's string
    "F.mse_loss's int target": lambda t, x: t.nn.functional.mse_loss(x, 3),
    "F.binary_cross_entropy's int reduction": lambda t, x: t.nn.functional.binary_cross_entropy(
        x * 0.5, x * 0, reduction=1),
    "F.cross_entropy positionally": lambda t, x: t.nn.functional.cross_entropy(x, t.tensor([0, 1]), None, None, -100,
                                                                               None, "sum", 0.1),
    "F.binary_cross_entropy_with_logits' sizes": lambda t, x: t.nn.functional.binary_cross_entropy_with_logits(
        x, t.zeros(2)),
    "F.smooth_l1_loss's keywords": lambda t, x: t.nn.functional.smooth_l1_loss(x, x * 0, reduction="none", beta=0.5),
    "a bool where an int goes": lambda t, x: t.convolution(t.ones(1, 1, 3, 3), t.ones(1, 1, 2, 2), None, [1], [0],
                                                           [1], False, [0], True),
    # tensor lists: any sequence; an element that is not a tensor named by its index
    "cat of a tuple": lambda t, x: t.cat((x, x), 1),
    "cat of a generator": lambda t, x: t.stack(y for y in (x, x)),
    "cat of a number": lambda t, x: t.cat(5),
    "cat of a tensor": lambda t, x: t.cat(x),
    "cat of a list holding a number": lambda t, x: t.cat([x, 5]),
    "stack of a list holding None": lambda t, x: t.stack([x, None]),
    "chunk's and unbind's tuples": lambda t, x: t.stack(x.chunk(2) + t.unbind(x, 1)),
    "split_with_sizes' sizes": lambda t, x: x.split_with_sizes(2),
    # an int list defaulting to [] takes None; a float takes any int
    "amax(None)": lambda t, x: x.amax(None),
    "max_pool2d's stride None": lambda t, x: t.nn.functional.max_pool2d(t.ones(1, 1, 4, 4), 2, None),
    "a float beyond int64": lambda t, x: x.uniform_(0, 2 ** 70),
    # torch.nn.functional's Python layer over the generated _C._nn ops, and the checks in C++
    "F.conv2d's padding string": lambda t, x: t.nn.functional.conv2d(t.ones(1, 1, 4, 4), t.ones(1, 1, 3, 3),
                                                                     padding="same"),
    "F.conv2d's bad padding string": lambda t, x: t.nn.functional.conv2d(t.ones(1, 1, 4, 4), t.ones(1, 1, 2, 2),
                                                                         padding="full"),
    "F.pad's int": lambda t, x: t.nn.functional.pad(x, 1),
    "F.max_pool2d's string kernel": lambda t, x: t.nn.functional.max_pool2d(t.ones(1, 1, 4, 4), "a"),
    "F.embedding's float indices": lambda t, x: t.nn.functional.embedding(x, x),
    "F.gelu's approximate": lambda t, x: t.nn.functional.gelu(x, approximate="fast"),
    "F.nll_loss's int32 target": lambda t, x: t.nn.functional.nll_loss(x, t.tensor([0, 1], dtype=t.int32)),
    "F.batch_norm without running statistics": lambda t, x: t.nn.functional.batch_norm(x, None, None),
    "F.dropout's probability": lambda t, x: t.nn.functional.dropout(x, 1.5),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_call_is_taken_or_refused_as_pytorch_does(name):
    assert outcome(graft, CALLS[name]) == outcome(torch, CALLS[name])


def first_line(lib, call):
    kind, result = outcome(lib, call)
    return kind, result.split("\n")[0] if isinstance(result, str) else result


OVERLOADED = {  # several overloads: the first line, and the value one of them gives
    "sum(dim=None)": lambda t, x: x.sum(dim=None),
    "sum(None, True)": lambda t, x: x.sum(None, True),
    "sum((), dtype=)": lambda t, x: t.sum(x, (), dtype=t.float64),
    "sum(keepdim=True) without a dim": lambda t, x: x.sum(keepdim=True),
    "sum(a dtype positionally)": lambda t, x: x.sum(t.float64),
    "sum(dtype=int)": lambda t, x: x.sum(dtype=3),
    "a string value": lambda t, x: x.masked_fill(x > 0, "a"),
    "no value": lambda t, x: x.masked_fill(x > 0),
    "a list by keyword": lambda t, x: t.masked_fill(x, x > 0, value=[1]),
    "a number": lambda t, x: x.masked_fill(x > 0, 2),
    "a 0-d tensor": lambda t, x: x.masked_fill(x > 0, t.tensor(2.0)),
    # div's rounding_mode (str?, required by keyword in its overloads): None is true division
    "div(rounding_mode=None)": lambda t, x: t.div(x, x, rounding_mode=None),
    "div(2, rounding_mode=None)": lambda t, x: x.div(2, rounding_mode=None),
    "div's unknown rounding mode": lambda t, x: x.div(2, rounding_mode="round"),
    "div's int rounding mode": lambda t, x: x.div(x, rounding_mode=1),
    "div of a string": lambda t, x: t.div(x, "a"),
    # clamp: the Tensor overload first; a 0-d tensor bound is also a number; one of each mixes
    "clamp(0-d tensor, number)": lambda t, x: t.clamp(x, t.tensor(0.5), 1),
    "clamp(tensor, number)": lambda t, x: t.clamp(x, t.ones(2), 1),
    "clamp of a string": lambda t, x: t.clamp(x, "a"),
    "clamp without bounds": lambda t, x: x.clamp(),
    "clamp(max=) of an integer tensor with a float": lambda t, x: t.ones(2, dtype=t.int64).clamp(max=0.5),
    # mean/prod/softmax's dtype=
    "mean(dtype=long)": lambda t, x: x.mean(dtype=t.int64),
    "mean of longs as float64": lambda t, x: t.ones(2, dtype=t.int64).mean(0, dtype=t.float64),
    "prod(dim=0, dtype=)": lambda t, x: t.prod(x, 0, dtype=t.int32),
    "prod(dtype positionally)": lambda t, x: x.prod(t.float64),
    "softmax(dtype=)": lambda t, x: t.softmax(x, 1, dtype=t.float64),
    # the in-place-only methods: fill_'s 0-d tensor, random_'s three forms
    "fill_ of a string": lambda t, x: x.fill_("a"),
    "fill_ of a 1-D tensor": lambda t, x: x.fill_(t.ones(2)),
    "fill_ of a 0-d tensor": lambda t, x: x.fill_(t.tensor(3.0)),
    "random_(2, None)": lambda t, x: x.random_(2, None),
    "random_(to=5)": lambda t, x: x.random_(to=5),
    "expand(implicit=1)": lambda t, x: x.expand(2, 2, implicit=1),
    # where: (condition) is nonzero's tuple; numbers for self and other
    "where(condition)": lambda t, x: t.stack(t.where(x > 0)),
    "where of two numbers": lambda t, x: t.where(x > 0, 1, 2.5),
    "where of two ints": lambda t, x: t.where(x > 0, 1, 2) * t.ones(2, 2, dtype=t.int64),
    "where of a string": lambda t, x: t.where(x > 0, x, "a"),
    "where of one number": lambda t, x: t.where(x > 0, 1),
    "where's int condition": lambda t, x: t.where(x, x, x),
    # view: a dtype (bits seen as another type) or sizes
    "view of a string": lambda t, x: x.view("a"),
    "view(dtype) of a different size": lambda t, x: t.ones(2, 3).view(t.float64),
    "view(dtype) of a strided tensor": lambda t, x: t.ones(3, 3)[:, :2].view(t.float64),
    "view(dtype) of a 0-d tensor": lambda t, x: t.tensor(1.0).view(t.float64),
    "view(dtype) of a transposed tensor": lambda t, x: t.ones(3, 2, dtype=t.float64).t().view(t.int32),
    "view(dtype) at an odd offset": lambda t, x: t.ones(4)[1:3].view(t.float64),
    "view(dtype) to a narrower type": lambda t, x: t.ones(4, 4, dtype=t.float64)[:, :2].view(t.int32),
    "view of too many sizes": lambda t, x: x.view(4, 2),
}


@pytest.mark.parametrize("name", list(OVERLOADED))
def test_overloads_are_tried_in_pytorchs_order(name):
    assert first_line(graft, OVERLOADED[name]) == first_line(torch, OVERLOADED[name])


def test_the_overloads_are_listed_with_why_each_did_not_match():
    with pytest.raises(TypeError) as e:
        graft.ones(2).masked_fill(graft.ones(2) > 0, "a")
    assert str(e.value) == (
        "masked_fill() received an invalid combination of arguments - got (Tensor, str), but expected one of:\n"
        " * (Tensor mask, Tensor value)\n"
        "      didn't match because some of the arguments have invalid types: (Tensor, !str!)\n"
        " * (Tensor mask, Number value)\n"
        "      didn't match because some of the arguments have invalid types: (Tensor, !str!)\n")
    with pytest.raises(TypeError) as e:
        graft.masked_fill(graft.ones(2), graft.ones(2) > 0, fill=2)
    assert str(e.value).count("didn't match because some of the keywords were incorrect: fill\n") == 2


def test_reasons_are_given_only_to_a_call_with_as_many_arguments_as_the_signature_has_entries():
    # PyTorch's rule: an overload's reason is shown when the call has as many arguments as the
    # signature has entries (its `*` counted); conv2d(x, w, stride='a') lists the overloads bare
    x, w = graft.ones(1, 1, 4, 4), graft.ones(1, 1, 3, 3)
    with pytest.raises(TypeError) as e:
        F.conv2d(x, w, stride="a")
    assert str(e.value) == (
        "conv2d() received an invalid combination of arguments - got (Tensor, Tensor, stride=str), but expected one "
        "of:\n * (Tensor input, Tensor weight, Tensor bias, tuple of ints stride, tuple of ints padding, tuple of ints "
        "dilation, int groups)\n * (Tensor input, Tensor weight, Tensor bias, tuple of ints stride, str padding, tuple "
        "of ints dilation, int groups)\n")
    with pytest.raises(TypeError) as e:
        graft.masked_fill(graft.ones(2), graft.ones(2) > 0, value=[1], fill=2)
    assert "didn't match" not in str(e.value)


def test_a_list_of_tensors_returns_as_a_tuple():
    x = graft.ones(4, 2)
    for results in (x.chunk(2), graft.chunk(x, 2), x.unbind(), graft.unbind(x, 1), x.split(2), x.split([1, 3]),
                    graft.split(x, 2), x.split_with_sizes([1, 3]), graft.split_with_sizes(x, [3, 1])):
        assert type(results) is tuple and all(isinstance(t, graft.Tensor) for t in results)


def test_max_and_min_of_a_dim_return_named_tuples():
    x = graft.tensor([[1.0, 5.0], [4.0, 2.0]])
    for r, values, indices in ((x.max(1), [5.0, 4.0], [1, 0]), (graft.min(x, 0, keepdim=True), [[1.0, 2.0]], [[0, 1]])):
        assert type(r) is getattr(graft.return_types, "max" if values[0] == 5.0 else "min")
        assert r.values.tolist() == values and r.indices.tolist() == indices and r[0] is r.values
    assert x.max().item() == 5.0 and graft.max(x, x.t()).tolist() == [[1.0, 5.0], [5.0, 2.0]]


def test_random_takes_ints_not_bools():
    # (PyTorch lists a generator= graft's random fills do not take, so its texts differ)
    x = graft.zeros(3)
    for call in (lambda: x.random_(True), lambda: x.random_(1, 2, 3), lambda: x.random_(1.5)):
        with pytest.raises(TypeError):
            call()
    assert x.random_(3, None).ge(3).all() and x.random_(2, 4).ge(2).all() and x.random_(4).lt(4).all()


def test_clamp_promotes_a_bool_tensor_with_a_number_bound_as_pytorch():
    # an int bound makes a bool tensor int64, a float one float32; two bool bounds are refused
    results = []
    for lib in (torch, graft):
        b = lib.tensor([True, False])
        for lo, hi in ((None, 4), (0.5, None), (0, True), (True, None), (False, True)):
            try:
                r = lib.clamp(b, lo, hi)
                results.append((str(r.dtype).split(".")[-1], r.tolist()))
            except RuntimeError:
                results.append("refused")
    assert results[:5] == results[5:] and results[0] == ("int64", [1, 0]) and results[3] == "refused"


def test_clamp_in_place_keeps_an_integer_tensors_dtype():
    # PyTorch 2's text names the dtype "Long" (1.13's "long int")
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        graft.ones(2, dtype=graft.int64).clamp_(0.5)


def test_view_dtype_sees_the_same_bytes_as_pytorchs():
    for make in (lambda t: t.tensor([[1.0, -2.5, 3.0, 0.5]]), lambda t: t.arange(6, dtype=t.int64).view(2, 3)):
        views = []
        for lib, other in ((torch, torch), (graft, graft)):
            x = make(lib).requires_grad_(make(lib).is_floating_point())
            for dtype in (other.int32, other.float32, other.float64, other.int64):
                try:
                    v = x.view(dtype)
                except RuntimeError as e:
                    views.append(str(e))
                    continue
                views.append((v.tolist(), tuple(v.shape), v.stride(), v.requires_grad, v.grad_fn is None))
        assert views[:len(views) // 2] == views[len(views) // 2:]
    # an alias: a write through it is seen by self, and both report it in their version
    x = graft.zeros(2)
    v = x.view(graft.int32)
    v.add_(1)
    assert x._version == v._version == 1 and x.view(graft.int32).tolist() == [1, 1] and x[0].item() > 0


def test_squeeze_takes_a_tuple_of_dims_as_pytorch_2():
    # PyTorch 2's squeeze.dims: each named dim of size 1 goes (SqueezeBackward2); none for ()
    x = graft.ones(1, 2, 1, 1, requires_grad=True)
    y = x.squeeze((0, -1))
    assert y.shape == (2, 1) and y.grad_fn.name() == "SqueezeBackward2" and y._base is x
    assert graft.squeeze(x, [1, 2]).shape == (1, 2, 1) and x.squeeze(()).shape == (1, 2, 1, 1)
    y.sum().backward()
    assert x.grad.shape == (1, 2, 1, 1) and x.grad.sum().item() == 2.0
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.squeeze((0, -4))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.squeeze((4,))


def test_sum_picks_its_overload_as_pytorch_does():
    for call in (lambda x: x.sum(), lambda x: x.sum(dim=None), lambda x: x.sum(0), lambda x: x.sum(()),
                 lambda x: x.sum(dtype=x.dtype)):
        names = []
        for lib in (torch, graft):
            y = call(lib.ones(2, 3, requires_grad=True))
            names.append(type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name())
        assert names[0] == names[1]


def test_a_0d_tensor_value_records_the_tensor_overloads_node():
    for lib in (torch, graft):
        x = lib.ones(3, requires_grad=True)
        t = x.masked_fill(x > 0, lib.tensor(2.0))
        n = x.masked_fill(x > 0, 2.0)
        names = [type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name() for y in (t, n)]
        assert names == ["MaskedFillBackward1", "MaskedFillBackward0"]


def test_the_losses_legacy_arguments_warn_as_pytorchs():
    messages = []
    for lib in (torch, graft):
        x = lib.ones(2, 2)
        with pytest.warns(UserWarning) as record:
            y = lib.nn.functional.l1_loss(x, x * 0, reduce=False)
        assert tuple(y.shape) == (2, 2)
        messages.append([str(w.message) for w in record])
    assert messages[1] == messages[0] == ["size_average and reduce args will be deprecated, please use "
                                          "reduction='none' instead."]

