"""Parity tier for PyTorch's legacy tensor API: Tensor.type(), the type objects
(torch.FloatTensor & co., as constructors and in isinstance), the legacy constructor
torch.Tensor(...), Tensor.new_zeros/new_ones/new_empty/new_full/new_tensor and the device
predicates is_xpu/is_mps. The same calls run in torch 1.13 and graft; messages are compared
with PyTorch 2.x's spellings of the types (graft.dtype for torch.dtype, "tuple of ints" for
1.13's "tuple of SymInts")."""
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402

DTYPES = ["float32", "float64", "int64", "int32", "bool"]
LEGACY = ["FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor"]


def outcome(lib, call):
    """("ok", dtype name, shape, requires_grad, values or None) or (exception type, message) of call(lib)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call(lib)
    except Exception as e:  # noqa: BLE001  (the type and text are the result)
        return type(e).__name__, str(e)
    if not hasattr(r, "device"):  # a type name, strides
        return "ok", r
    values = r.tolist() if r.device.type == "cpu" and not call.__doc__ else None  # __doc__: uninitialized
    return "ok", str(r.dtype).split(".")[-1], tuple(r.shape), r.requires_grad, values


def normalized(result):
    """torch's outcome in graft's spelling: PyTorch 2.x type names, graft's type prefix."""
    if result[0] == "ok":
        return result
    text = result[1].replace("tuple of SymInts", "tuple of ints")
    for name in ("dtype", "device", "Storage", "memory_format"):
        text = text.replace(f"torch.{name}", f"graft.{name}")
    # graft's C++ text for requires_grad on an integer tensor (not PyTorch's)
    text = text.replace("Only Tensors of floating point and complex dtype can require gradients",
                        "only Tensors of floating point dtype can require gradients")
    return result[0], text


def assert_parity(call):
    assert outcome(graft, call) == normalized(outcome(torch, call))


def uninit(f):
    f.__doc__ = "uninitialized values: compare metadata only"
    return f


@pytest.mark.parametrize("dtype", DTYPES)
def test_type_names_and_conversions(dtype):
    for lib in (torch, graft):
        x = lib.zeros(2, 3, dtype=getattr(lib, dtype))
        assert x.type() == "torch." + LEGACY[DTYPES.index(dtype)]
        assert x.type(None) == x.type(dtype=None) == x.type(non_blocking=True) == x.type()
        assert x.type(x.dtype) is x and x.type(x.type()) is x and x.type(getattr(lib, LEGACY[DTYPES.index(dtype)])) is x
    for target, name in zip(DTYPES, LEGACY):
        assert_parity(lambda L: L.tensor([[0, 1], [2, 3]], dtype=getattr(L, dtype)).type("torch." + name))
        assert_parity(lambda L: L.tensor([[0, 1], [2, 3]], dtype=getattr(L, dtype)).type(getattr(L, target)))
        assert_parity(lambda L: L.tensor([0, 1], dtype=getattr(L, dtype)).type(getattr(L, name), True))
        assert_parity(lambda L: L.tensor([0, 1], dtype=getattr(L, dtype)).type(L.Tensor))
        assert_parity(lambda L: L.tensor([0, 1], dtype=getattr(L, dtype)).type("torch.Tensor"))


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(2).type("foo"),
    lambda L: L.zeros(2).type("torch.Foo"),
    lambda L: L.zeros(2).type("LongTensor"),
    lambda L: L.zeros(2).type("torch.float32"),
    lambda L: L.zeros(2).type(3),
    lambda L: L.zeros(2).type(L.device("cpu")),
    lambda L: L.zeros(2).type(int),
    lambda L: L.zeros(2).type(L.nn.Parameter),
    lambda L: L.zeros(2).type(L.int64, 1),
    lambda L: L.zeros(2).type(L.int64, non_blocking=1),
    lambda L: L.zeros(2).type(L.int64, False, 3),
    lambda L: L.zeros(2).type(L.int64, foo=3),
    lambda L: L.zeros(2).type(L.int64, dtype=L.int64),
    lambda L: L.zeros(2).type(L.int64, memory_format=3),
    lambda L: L.zeros(1, 2, 2, 2).type(L.float64, memory_format=L.channels_last).stride(),
    lambda L: L.zeros(1, 2, 2, 2).type(memory_format=L.channels_last),
])
def test_type_arguments_and_errors(call):
    assert_parity(call)


def test_type_where_graft_differs_from_torch_1_13():
    x = graft.zeros(2)
    # PyTorch 2.x: the CPU types of its declared dtypes only (1.13 also took 'torch.ComplexFloatTensor')
    with pytest.raises(ValueError, match="^invalid type: 'torch.ComplexFloatTensor'$"):
        x.type("torch.ComplexFloatTensor")
    with pytest.raises(ValueError, match="^invalid type: 'torch.sparse.BoolTensor'$"):
        x.type("torch.sparse.BoolTensor")
    # a sparse type name converts the dtype and leaves the layout, as in PyTorch
    assert torch.zeros(2).type("torch.sparse.LongTensor").layout == torch.strided
    assert x.type("torch.sparse.LongTensor").dtype == graft.int64
    # dtypes graft does not have
    for name in ("ByteTensor", "CharTensor", "ShortTensor"):
        torch.zeros(2).type("torch." + name)  # valid in PyTorch
        with pytest.raises(NotImplementedError, match=f"^Tensor.type\\('torch.{name}'\\): graft has no "):
            x.type("torch." + name)
    # the 16-bit floats convert as PyTorch's
    for name, dtype in (("HalfTensor", graft.float16), ("BFloat16Tensor", graft.bfloat16)):
        assert str(torch.zeros(2).type("torch." + name).dtype) == str(dtype).replace("graft", "torch")
        assert x.type("torch." + name).dtype == dtype and x.type(dtype).type() == "torch." + name
    with pytest.raises(RuntimeError, match="graft was built without CUDA support"):
        x.type("torch.cuda.FloatTensor")
    # meta tensors: PyTorch 2.x's 'torch.meta.FloatTensor' (1.13 raised "Unimplemented backend Meta")
    assert graft.zeros(2, device="meta").type() == "torch.meta.FloatTensor"
    assert graft.zeros(2, device="meta").type(graft.int64).type() == "torch.meta.LongTensor"
    with pytest.warns(UserWarning, match="^This overload of type is deprecated:\n\ttype\\(object dtype, bool async"):
        assert x.type(graft.int64, **{"async": True}).dtype == graft.int64


def test_type_conversion_keeps_the_graph():
    for lib in (torch, graft):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a.type(lib.float64)
        assert b.dtype == lib.float64 and b.grad_fn is not None
        (b * b).sum().backward()
        assert a.grad.tolist() == [2.0, 4.0]
    assert graft.nn.Parameter(graft.zeros(2)).type() == "torch.FloatTensor"


def test_graft_messages_keep_graft_type_names():
    m = graft.nn.Linear(1, 1)
    with pytest.raises(TypeError, match=re.escape("cannot assign 'graft.FloatTensor' as parameter 'weight'")):
        m.weight = graft.zeros(1)


@pytest.mark.parametrize("call", [
    lambda L: L.LongTensor([1, 2]),
    lambda L: L.FloatTensor([[1, 2], [3, 4]]),
    lambda L: L.DoubleTensor((2, 3)),  # a tuple is data, not a size
    lambda L: L.IntTensor([True, False]),
    lambda L: L.BoolTensor([1, 0]),
    lambda L: L.LongTensor([1.5, -2.5]),
    lambda L: L.FloatTensor(np.array([1, 2])),
    lambda L: L.FloatTensor(range(3)),
    lambda L: L.FloatTensor(),
    lambda L: L.FloatTensor([]),
    lambda L: L.FloatTensor(()),
    lambda L: L.FloatTensor(0),
    lambda L: L.FloatTensor(device="cpu"),
    lambda L: L.FloatTensor([1], device=L.device("cpu")),
    lambda L: L.FloatTensor(L.tensor(3.0)),
    lambda L: L.FloatTensor(L.zeros(2, requires_grad=True)),
    uninit(lambda L: L.FloatTensor(L.Size([]))),
    lambda L: L.Tensor([1.0, 2.0]),
    lambda L: L.Tensor([[1, 2]]),
    lambda L: L.Tensor(),
    lambda L: L.Tensor(L.tensor([1, 2])),  # torch.Tensor(tensor) takes any dtype
    uninit(lambda L: L.FloatTensor(2, 3)),
    uninit(lambda L: L.DoubleTensor(L.Size([2, 2]))),
    uninit(lambda L: L.FloatTensor(np.int64(3))),
    uninit(lambda L: L.FloatTensor(2, True)),
    uninit(lambda L: L.LongTensor(2, device="cpu")),
    uninit(lambda L: L.Tensor(2, 3)),
    uninit(lambda L: L.Tensor(L.Size([4]))),
    # errors
    lambda L: L.FloatTensor(L.tensor([1, 2])),
    lambda L: L.LongTensor(L.tensor([1.0])),
    lambda L: L.FloatTensor(3.5),
    lambda L: L.FloatTensor(None),
    lambda L: L.FloatTensor({1: 2}),
    lambda L: L.FloatTensor(True),
    lambda L: L.FloatTensor("ab"),
    lambda L: L.FloatTensor([[1], [2, 3]]),
    lambda L: L.FloatTensor(-1),
    lambda L: L.FloatTensor(2, 3.0),
    lambda L: L.FloatTensor(2, [3]),
    lambda L: L.FloatTensor(2 ** 70),
    lambda L: L.FloatTensor(2, device="cuda"),
    lambda L: L.FloatTensor([1, 2], device="meta"),
    lambda L: L.FloatTensor(L.zeros(2), device="cpu"),
    lambda L: L.FloatTensor(L.zeros(2), 1),
    lambda L: L.FloatTensor(2, 3, foo=1),
    lambda L: L.FloatTensor([1], foo=1),
    lambda L: L.FloatTensor(requires_grad=True),
    lambda L: L.Tensor(2, dtype=L.float64),
    lambda L: L.LongTensor([2 ** 63]),
])
def test_legacy_constructors(call):
    assert_parity(call)


def test_legacy_constructor_message_describes_lists_as_pytorch_2():
    # 2.x's format_invalid_args names a list's element types ("list of [int]"; 1.13 said "list")
    with pytest.raises(TypeError) as info:
        graft.FloatTensor([1], 2)
    assert str(info.value) == (
        "new() received an invalid combination of arguments - got (list, int), but expected one of:\n"
        " * (*, graft.device device)\n"
        "      didn't match because some of the arguments have invalid types: (!list of [int]!, !int!)\n"
        " * (graft.Storage storage)\n * (Tensor other)\n * (tuple of ints size, *, graft.device device)\n"
        " * (object data, *, graft.device device)\n")


def test_legacy_constructor_of_a_tensor_is_an_alias():
    for lib in (torch, graft):
        base = lib.tensor([1.0, 2.0], requires_grad=True)
        alias = lib.FloatTensor(base)
        assert type(alias) is lib.Tensor and alias.requires_grad and alias.grad_fn is not None
        (alias * 3).sum().backward()
        assert base.grad.tolist() == [3.0, 3.0]
        data = lib.tensor([1, 2])
        lib.Tensor(data)[0] = 7  # shares the storage
        assert data.tolist() == [7, 2]
        p = lib.nn.Parameter(lib.zeros(2))
        assert type(lib.Tensor(p)) is lib.Tensor and type(lib.FloatTensor([1.0])) is lib.Tensor


def test_legacy_constructors_make_cpu_tensors_under_another_default_device():
    graft.set_default_device("meta")
    try:
        assert graft.FloatTensor(2).device.type == "cpu" and graft.Tensor([1.0]).device.type == "cpu"
    finally:
        graft.set_default_device(None)


def test_legacy_types_in_isinstance():
    values = [[0, 1]]
    for lib in (torch, graft):
        tensors = [lib.tensor(values, dtype=getattr(lib, d)) for d in DTYPES] + [lib.nn.Parameter(lib.zeros(1))]
        got = [[isinstance(t, getattr(lib, name)) for name in LEGACY] for t in tensors]
        assert got == [[i == j for j in range(5)] for i in range(5)] + [[True, False, False, False, False]]
        assert not isinstance(lib.zeros(1, device="meta"), lib.FloatTensor)
        assert not isinstance(1.0, lib.FloatTensor) and not isinstance([1.0], lib.FloatTensor)
        assert not issubclass(lib.FloatTensor, lib.Tensor)
        assert lib.FloatTensor.dtype == lib.float32 and lib.LongTensor.is_cuda is False
        assert lib.FloatTensor.__name__ == "FloatTensor"
    assert not hasattr(graft, "ByteTensor") and not hasattr(graft, "uint8")  # no uint8 dtype in graft


NEW_CALLS = [
    lambda L, x: x.new_zeros(2, 3),
    lambda L, x: x.new_zeros((2, 3)),
    lambda L, x: x.new_zeros([2, 3]),
    lambda L, x: x.new_zeros(L.Size([2])),
    lambda L, x: x.new_zeros(()),
    lambda L, x: x.new_zeros([]),
    lambda L, x: x.new_zeros(size=(2,)),
    lambda L, x: x.new_zeros(np.int64(2)),
    lambda L, x: x.new_zeros(L.tensor(2)),
    lambda L, x: x.new_zeros(2, True),
    lambda L, x: x.new_zeros(2, dtype=L.int64),
    lambda L, x: x.new_zeros(2, dtype=None, device=None),
    lambda L, x: x.new_zeros(2, 3, device="cpu", pin_memory=False),
    lambda L, x: x.new_ones(2, requires_grad=True),
    lambda L, x: x.new_ones((2, 1), dtype=L.int32),
    lambda L, x: x.new_full((2,), 3),
    lambda L, x: x.new_full([2], fill_value=3, dtype=L.int32),
    lambda L, x: x.new_full(size=(2,), fill_value=1.0),
    lambda L, x: x.new_full((2,), True),
    lambda L, x: x.new_full((2,), L.tensor(2.5)),
    lambda L, x: x.new_full((2,), 1.5, dtype=L.int64),
    lambda L, x: x.new_tensor([1, 2]),
    lambda L, x: x.new_tensor(3),
    lambda L, x: x.new_tensor((1, 2), dtype=L.int32),
    lambda L, x: x.new_tensor([True]),
    lambda L, x: x.new_tensor(np.array([1, 2])),
    lambda L, x: x.new_tensor([1.0], requires_grad=True),
    lambda L, x: x.new_tensor(L.tensor([1, 2])),
    lambda L, x: x.new_tensor(L.tensor([1.0], requires_grad=True)),
    uninit(lambda L, x: x.new_empty(2, 3)),
    uninit(lambda L, x: x.new_empty((2,), dtype=L.int32)),
    # errors
    lambda L, x: x.new_zeros(),
    lambda L, x: x.new_zeros(2.5),
    lambda L, x: x.new_zeros("a"),
    lambda L, x: x.new_zeros(True),
    lambda L, x: x.new_zeros(-1),
    lambda L, x: x.new_zeros(2, (3,)),
    lambda L, x: x.new_zeros([2, 3.0]),
    lambda L, x: x.new_zeros((2,), 3),
    lambda L, x: x.new_zeros(L.tensor([2, 3])),
    lambda L, x: x.new_zeros(2, foo=1),
    lambda L, x: x.new_zeros(2, out=None),
    lambda L, x: x.new_ones(1, 2, size=3),
    lambda L, x: x.new_zeros(2, dtype="float"),
    lambda L, x: x.new_zeros(2, requires_grad=1),
    lambda L, x: x.new_zeros(2, device=1.5),
    lambda L, x: x.new_empty(2, memory_format=L.contiguous_format),
    lambda L, x: x.new_full(2, 3),
    lambda L, x: x.new_full((2,)),
    lambda L, x: x.new_full((2,), 1, 2),
    lambda L, x: x.new_full((2,), "a"),
    lambda L, x: x.new_full((2,), None),
    lambda L, x: x.new_full((2,), L.tensor([2.0])),
    lambda L, x: x.new_tensor(),
    lambda L, x: x.new_tensor([1], 2),
    lambda L, x: x.new_tensor("a"),
]


@pytest.mark.parametrize("index", range(len(NEW_CALLS)))
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_new_factories(index, dtype):
    call = NEW_CALLS[index]

    def program(L):
        return call(L, L.zeros(2, 3, dtype=getattr(L, dtype)))
    program.__doc__ = call.__doc__
    assert_parity(program)


def test_new_factories_inherit_the_device_and_not_the_graph():
    m = graft.zeros(2, dtype=graft.float64, device="meta")
    for r in (m.new_zeros(3), m.new_ones(3), m.new_empty(3), m.new_full((3,), 1.0), m.new_tensor([1.0, 2.0, 3.0])):
        assert r.device.type == "meta" and r.dtype == graft.float64 and r.shape == (3,)
    assert m.new_zeros(2, device="cpu").device.type == "cpu"
    graft.set_default_device("meta")
    try:
        assert graft.zeros(1, device="cpu").new_zeros(2).device.type == "cpu"
    finally:
        graft.set_default_device(None)
    for lib in (torch, graft):
        x = lib.ones(2, requires_grad=True)
        assert not x.new_zeros(2).requires_grad and x.new_zeros(2).grad_fn is None
        src = lib.tensor([1.0, 2.0], requires_grad=True) * 2
        with pytest.warns(UserWarning, match="^To copy construct from a tensor, it is recommended to use sourceTensor"):
            copy = x.new_tensor(src)
        assert copy.is_leaf and not copy.requires_grad and copy.tolist() == [2.0, 4.0]
        with lib.no_grad():
            src[0] = 9.0
        assert copy.tolist() == [2.0, 4.0]  # a copy, not a view


def test_new_tensor_warning_is_pytorch_2s():
    with pytest.warns(UserWarning) as record:
        graft.zeros(1).new_tensor(graft.zeros(2))
    assert str(record[0].message) == (
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
        "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).")


def test_device_predicates():
    for lib in (torch, graft):
        x = lib.zeros(1)
        assert x.is_xpu is False and x.is_mps is False
    assert graft.zeros(1, device="meta").is_xpu is False
