"""graft.autograd.Function: custom Functions written in Python, run by the C++ engine
(PyTorch's semantics, reference section 6). Expected values are worked out by hand or were
taken from torch 1.13."""
import gc
import re
import threading
import warnings

import pytest

import graft
from graft.autograd import Function
from graft.autograd.function import BackwardCFunction, FunctionCtx, once_differentiable


def _f64(values, requires_grad=True):
    return graft.tensor(values, dtype=graft.float64, requires_grad=requires_grad)


class Cube(Function):
    """x^3 with a backward written with graft ops (so it is differentiable again)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 3 * x * x


class CubeOnce(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 3 * x * x


class Scale(Function):
    """x * k for a Python number k (a non-tensor input, kept as a ctx attribute)."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None


# ---- apply, forward and backward ----

def test_apply_forward_backward_values():
    x = _f64([1.0, 2.0, 3.0])
    y = Cube.apply(x)
    assert y.tolist() == [1.0, 8.0, 27.0]
    assert y.requires_grad and not y.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0, 27.0]


def test_node_name_and_next_functions():
    x = graft.ones(2, requires_grad=True)
    w = graft.ones(2)
    y = Scale.apply(x * 1, 2.0)
    assert y.grad_fn.name() == "ScaleBackward"
    assert repr(y.grad_fn).startswith("<ScaleBackward object at ")
    (prev, nr), = y.grad_fn.next_functions  # only tensor inputs have an edge
    assert prev.name() == "MulBackward0" and nr == 0
    z = Cube.apply(w)  # no input requires grad: no node
    assert z.grad_fn is None and not z.requires_grad


def test_forward_runs_without_recording_and_backward_in_create_graph_mode():
    modes = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            modes["forward"] = graft.is_grad_enabled()
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            modes.setdefault("backward", []).append(graft.is_grad_enabled())
            return grad * 2

    x = graft.ones(2, requires_grad=True)
    Probe.apply(x).sum().backward()
    g, = graft.autograd.grad(Probe.apply(x).sum(), x, create_graph=True)
    assert modes == {"forward": False, "backward": [False, True]}


def test_no_grad_call_site_gives_no_history():
    x = graft.ones(2, requires_grad=True)
    needs = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            needs.append(ctx.needs_input_grad)
            return x * 2

    with graft.no_grad():
        y = Probe.apply(x)
    assert y.grad_fn is None and not y.requires_grad
    assert needs == [(False,)]


def test_ctx_attributes_and_non_tensor_arguments():
    x = graft.ones(3, requires_grad=True)
    y = Scale.apply(x, 4.0)
    assert y.grad_fn.k == 4.0  # grad_fn IS the ctx
    y.grad_fn.extra = "set from outside"
    assert y.grad_fn.extra == "set from outside"
    del y.grad_fn.extra
    with pytest.raises(AttributeError, match="'BackwardCFunction' object has no attribute 'extra'"):
        y.grad_fn.extra
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    assert y.grad_fn.k == 4.0  # attributes outlive backward (only saved tensors are released)


def test_ctx_is_the_grad_fn_type():
    seen = {}

    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            seen["forward"] = type(ctx)
            return x + 1

        @staticmethod
        def backward(ctx, grad):
            seen["backward"] = type(ctx)
            return grad

    x = graft.ones(1, requires_grad=True)
    y = Keep.apply(x)
    y.backward()
    assert seen == {"forward": BackwardCFunction, "backward": BackwardCFunction}
    assert FunctionCtx is BackwardCFunction
    assert isinstance(y.grad_fn, graft.autograd.graph.Node)
    assert y.grad_fn._forward_cls is Keep


def test_keyword_arguments_bind_to_forward_parameters():
    class Affine(Function):
        @staticmethod
        def forward(ctx, x, w, b=None, scale=1.0):
            ctx.save_for_backward(w)
            ctx.scale = scale
            return x * w * scale if b is None else x * w * scale + b

        @staticmethod
        def backward(ctx, grad):
            w, = ctx.saved_tensors
            return grad * w * ctx.scale, None, grad, None

    x = graft.ones(2, requires_grad=True)
    w = graft.tensor([2.0, 3.0])
    b = graft.zeros(2, requires_grad=True)
    y = Affine.apply(x, w=w, b=b, scale=10.0)
    assert y.grad_fn.needs_input_grad == (True, False, True, False)
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 30.0] and b.grad.tolist() == [1.0, 1.0]


def test_setup_context_style():
    class Mul(Function):
        @staticmethod
        def forward(x, y, alpha=2.0):
            return x * y * alpha

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y, alpha = inputs  # defaults are bound, as PyTorch 2.x does
            ctx.save_for_backward(x, y)
            ctx.alpha = alpha

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return grad * y * ctx.alpha, grad * x * ctx.alpha, None

    x = graft.tensor([1.0, 2.0], requires_grad=True)
    y = graft.tensor([3.0, 4.0], requires_grad=True)
    Mul.apply(x, y).sum().backward()
    assert x.grad.tolist() == [6.0, 8.0] and y.grad.tolist() == [2.0, 4.0]


def test_tuple_and_non_tensor_outputs():
    class Split(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, "label", x * 3, None

        @staticmethod
        def backward(ctx, g1, g_label, g2, g_none):
            assert g_label is None and g_none is None
            return g1 * 2 + g2 * 3

    x = graft.ones(2, requires_grad=True)
    a, label, b, nothing = Split.apply(x)
    assert label == "label" and nothing is None
    assert a.grad_fn is b.grad_fn and a.output_nr == 0 and b.output_nr == 2
    (a.sum() + b.sum()).backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_returning_an_input_gives_a_new_tensor_object():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = graft.ones(2, requires_grad=True)
    y = Identity.apply(x)
    assert y is not x and y._base is x
    assert y.grad_fn.name() == "IdentityBackward"


# ---- saved tensors ----

def test_saved_tensors_are_released_after_backward():
    x = graft.ones(2, requires_grad=True)
    y = Cube.apply(x)
    ctx = y.grad_fn
    assert ctx.saved_tensors[0] is x  # a saved input is the same Python object
    y.sum().backward(retain_graph=True)
    assert ctx.saved_tensors[0] is x
    y.sum().backward()
    with pytest.raises(RuntimeError, match=re.escape(
            "Trying to backward through the graph a second time (or directly access saved tensors after they have "
            "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
            "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
            "if you need to access saved tensors after calling backward.")):
        ctx.saved_tensors
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_saved_tensors_keep_none_and_are_version_checked():
    class SaveBoth(Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            ctx.save_for_backward(x, None, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            x, nothing, out = ctx.saved_tensors
            assert nothing is None
            return grad * out / x

    a = graft.ones(2, requires_grad=True)
    x = a * 1
    y = SaveBoth.apply(x)
    saved_out = y.grad_fn.saved_tensors[2]
    assert saved_out is not y and saved_out.grad_fn is y.grad_fn  # a saved output is relinked to its node
    y.sum().backward(retain_graph=True)
    assert a.grad.tolist() == [2.0, 2.0]
    with graft.no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError, match=re.escape(
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.FloatTensor [2]], which is output 0 of MulBackward0, is at version 1; expected version 0 "
            "instead.")):
        y.sum().backward()


def test_save_for_backward_rejects_non_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        Bad.apply(graft.ones(1, requires_grad=True))


# ---- ctx flags ----

def test_needs_input_grad():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen.append(ctx.needs_input_grad)
            return x * y * k

        @staticmethod
        def backward(ctx, grad):
            seen.append(ctx.needs_input_grad)
            return grad, None, None

    x = graft.ones(2, requires_grad=True)
    Probe.apply(x, graft.ones(2), 2).sum().backward()
    assert seen == [(True, False, False), (True, False, False)]
    with pytest.raises(AttributeError):
        Probe.apply(x, graft.ones(2), 2).grad_fn.needs_input_grad = (False,)


def test_mark_dirty_returns_the_input_with_a_bumped_version():
    class MulTwo_(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    a = graft.ones(2, requires_grad=True)
    b = a * 1
    v0 = b._version
    c = MulTwo_.apply(b)
    assert c is b
    assert b._version == v0 + 2  # mul_ in forward, then mark_dirty's bump, as PyTorch
    assert b.grad_fn.name() == "MulTwo_Backward"
    assert b.tolist() == [2.0, 2.0]
    (c * c).sum().backward()
    assert a.grad.tolist() == [8.0, 8.0]  # d/da (2a)^2 = 8a


def test_mark_dirty_errors():
    class NotReturned(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 1

    class OnLeaf(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

    class NotATensor(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(3)
            return x

    a = graft.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "Some elements marked as dirty during the forward method were not returned as output. The inputs that "
            "are modified inplace must all be outputs of the Function.")):
        NotReturned.apply(a * 1)
    with pytest.raises(RuntimeError, match=re.escape(
            "a leaf Variable that requires grad has been used in an in-place operation.")):
        OnLeaf.apply(a)
    with pytest.raises(RuntimeError, match="mark_dirty can only accept variables, but argument 0 is of type int"):
        NotATensor.apply(a)


def test_mark_non_differentiable_output_gets_a_zero_gradient_slot():
    got = []

    class ValuesAndIndices(Function):
        @staticmethod
        def forward(ctx, x):
            idx = graft.tensor([2, 0, 1])
            scaled = x * 2
            ctx.mark_non_differentiable(idx, scaled)
            return x * 3, idx, scaled

        @staticmethod
        def backward(ctx, g, g_idx, g_scaled):
            got.append((g_idx.tolist(), g_scaled.tolist()))
            return g * 3

    x = graft.ones(3, requires_grad=True)
    v, i, s = ValuesAndIndices.apply(x)
    assert v.requires_grad and not i.requires_grad and not s.requires_grad
    v.sum().backward()
    assert got == [([0, 0, 0], [0.0, 0.0, 0.0])]
    assert x.grad.tolist() == [3.0, 3.0, 3.0]

    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable("x")
            return x

    with pytest.raises(RuntimeError, match="mark_non_differentiable only accepts variable arguments, but got str"):
        Bad.apply(x)


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads(materialize):
    got = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            got.append(None if g2 is None else g2.tolist())
            return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

    x = graft.ones(3, requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert got == [[0.0, 0.0, 0.0] if materialize else None]
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


# ---- errors from backward's return value ----

def test_wrong_number_of_gradients():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad):
            return grad

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad, grad, grad

    class TrailingNones(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad, None, None

    x = graft.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "function TooFewBackward returned an incorrect number of gradients (expected 2, got 1)")):
        TooFew.apply(x, x).sum().backward()
    with pytest.raises(RuntimeError, match=re.escape(
            "function TooManyBackward returned an incorrect number of gradients (expected 1, got 3)")):
        TooMany.apply(x).sum().backward()
    TrailingNones.apply(x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_wrong_gradient_shape_and_broadcast_gradient():
    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return graft.ones(3)

    class Broadcast(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return graft.ones(4, 2)  # summed down to [2]

    x = graft.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "Function WrongShapeBackward returned an invalid gradient at index 0 - got [3] but expected shape "
            "compatible with [2]")):
        WrongShape.apply(x).sum().backward()
    Broadcast.apply(x).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_a_gradient_on_another_device_is_refused_unless_it_is_0d():
    class OnMeta(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return graft.ones(2, device="meta")

    x = graft.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "Function OnMetaBackward returned an invalid gradient at index 0 - expected device cpu but got meta")):
        OnMeta.apply(x).sum().backward()
    assert x.grad is None

    class ZeroDimOnMeta(Function):  # a 0-d gradient is moved (here out of meta, which has no data)
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, grad):
            return graft.ones((), device="meta")

    s = graft.ones((), requires_grad=True)
    with pytest.raises(RuntimeError, match="Cannot copy out of meta tensor; no data!"):
        ZeroDimOnMeta.apply(s).backward()


def test_gradient_for_non_tensor_input_and_non_tensor_gradient():
    class GradForK(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    class ReturnsInt(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return 3

    x = graft.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "function GradForKBackward returned a gradient different than None at position 2, but the "
            "corresponding forward input was not a Variable")):
        GradForK.apply(x, 2).sum().backward()
    with pytest.raises(RuntimeError, match=re.escape("expected Variable or None (got int)")):
        ReturnsInt.apply(x).sum().backward()


def test_gradient_for_input_not_requiring_grad_is_ignored_and_dtype_cast():
    class Both(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad):
            return grad.double() * 5, grad * 7

    x = graft.ones(2, requires_grad=True)
    y = graft.ones(2)
    Both.apply(x, y).sum().backward()
    assert x.grad.dtype == graft.float32 and x.grad.tolist() == [5.0, 5.0]
    assert y.grad is None


def test_python_exception_from_backward_keeps_type_and_message():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            raise KeyError("no gradient today")

    class MyError(Exception):
        pass

    class Custom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            raise MyError("custom failure")

    x = graft.ones(2, requires_grad=True)
    with pytest.raises(KeyError, match="no gradient today"):
        Boom.apply(x).sum().backward()
    with pytest.raises(MyError, match="custom failure"):
        graft.autograd.grad(Custom.apply(x).sum(), x)
    y = Boom.apply(x)
    with pytest.raises(KeyError):
        y.sum().backward()
    assert x.grad is None


def test_exception_from_forward_propagates_and_frees():
    class Fails(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x * 2)
            raise ValueError("forward failed")

    x = graft.ones(1000, requires_grad=True)
    gc.collect()
    before = graft._C._cpu_memory_allocated()
    with pytest.raises(ValueError, match="forward failed"):
        Fails.apply(x)
    gc.collect()
    assert graft._C._cpu_memory_allocated() == before


def test_legacy_and_missing_methods():
    x = graft.ones(1, requires_grad=True)
    with pytest.warns(DeprecationWarning, match="should not be instantiated. Methods on autograd functions are all "
                                                "static, so you should invoke them on the class itself."):
        f = Cube()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method is deprecated"):
        f(x)

    class NoForward(Function):
        pass

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="You must implement the forward function for custom "
                                                  "autograd.Function."):
        NoForward.apply(x)
    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp method for your "
                                                  "custom autograd.Function to use it with backward mode AD."):
        NoBackward.apply(x).sum().backward()

    class Vjp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, grad):
            return grad * 2

    Vjp.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0]


# ---- double backward ----

def test_double_backward_hand_checked():
    x = _f64([1.0, 2.0])
    y = Cube.apply(x)
    g, = graft.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [3.0, 12.0] and g.requires_grad
    gg, = graft.autograd.grad(g.sum(), x)
    assert gg.tolist() == [6.0, 12.0]  # d2/dx2 x^3 = 6x


def test_double_backward_through_saved_output():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            out, = ctx.saved_tensors
            return grad * out

    x = _f64([0.0, 1.0])
    g, = graft.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    gg, = graft.autograd.grad(g.sum(), x)
    assert gg.tolist() == pytest.approx([1.0, 2.718281828459045])


def test_gradcheck_and_gradgradcheck_on_python_function():
    x = _f64([0.5, -1.5, 2.0])
    assert graft.autograd.gradcheck(Cube.apply, (x,))
    assert graft.autograd.gradgradcheck(Cube.apply, (x,))
    assert graft.autograd.gradcheck(Scale.apply, (x, 3.0))


def test_once_differentiable():
    x = _f64([1.0, 2.0])
    y = CubeOnce.apply(x)
    g, = graft.autograd.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [3.0, 12.0]
    assert not g.requires_grad  # the grad_outputs did not require grad: the dependency on x is lost

    y = CubeOnce.apply(x)
    v = graft.ones(2, dtype=graft.float64, requires_grad=True)
    g, = graft.autograd.grad(y, x, v, create_graph=True)
    assert g.grad_fn.name() == "DelayedError"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.sum().backward()


def test_once_differentiable_runs_without_recording():
    modes = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            modes.append(graft.is_grad_enabled())
            return grad * 2

    x = graft.ones(1, requires_grad=True)
    graft.autograd.grad(Probe.apply(x).sum(), x, create_graph=True)
    assert modes == [False]


# ---- threads and lifetime ----

def test_backward_on_a_background_thread_while_main_thread_runs_python():
    x = _f64([1.0, 2.0, 3.0])
    started = threading.Event()
    release = threading.Event()
    result = {}

    class Waits(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            started.set()
            # blocks until the main thread, running Python meanwhile, lets it go
            assert release.wait(10)
            x, = ctx.saved_tensors
            return grad * 2 * x

    def work():
        try:
            y = Waits.apply(x)
            y.sum().backward()
            result["grad"] = x.grad.tolist()
        except BaseException as e:  # noqa: BLE001 (reported below)
            result["error"] = e

    t = threading.Thread(target=work)
    t.start()
    assert started.wait(10)
    total = sum(i * i for i in range(1000))  # Python on the main thread while backward waits
    release.set()
    t.join(10)
    assert not t.is_alive()
    assert total == 332833500
    assert result == {"grad": [2.0, 4.0, 6.0]}


def test_graph_of_a_custom_function_is_freed_with_its_output():
    gc.collect()
    before = graft._C._cpu_memory_allocated()
    x = graft.ones(1000, requires_grad=True)
    y = Cube.apply(x + x)  # saves an intermediate (x + x)
    y.grad_fn.note = "attribute"
    held = graft._C._cpu_memory_allocated() - before
    assert held == 3 * 4096  # x, x + x (saved), y
    del y
    assert graft._C._cpu_memory_allocated() - before == 4096  # freed at once, no gc needed
    del x


def test_saved_tensors_freed_by_backward_while_ctx_lives():
    x = graft.ones(1000, requires_grad=True)
    y = Cube.apply(x + x)
    ctx = y.grad_fn
    gc.collect()
    before = graft._C._cpu_memory_allocated()
    y.sum().backward(retain_graph=True)  # keeps the saved (x + x); x.grad is allocated
    assert graft._C._cpu_memory_allocated() - before == 4096
    y.sum().backward()  # releases the saved (x + x); x.grad is accumulated in place
    assert graft._C._cpu_memory_allocated() - before == 0
    assert ctx.name() == "CubeBackward"
    del ctx, y, x


def test_warnings_inside_backward_become_python_warnings():
    class Warns(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            warnings.warn("from backward", UserWarning)
            return grad

    x = graft.ones(1, requires_grad=True)
    with pytest.warns(UserWarning, match="from backward"):
        Warns.apply(x).backward()


def test_reentrant_backward_inside_a_python_backward():
    class Recompute(Function):
        """exp(x) * x, recomputed and differentiated by a nested autograd.grad in backward."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp() * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            with graft.enable_grad():
                xd = x.detach().requires_grad_()
                gx, = graft.autograd.grad(xd.exp() * xd, xd, grad)
            return gx

    x = _f64([0.0, 1.0])
    Recompute.apply(x).sum().backward()
    assert x.grad.tolist() == pytest.approx([1.0, 2 * 2.718281828459045])  # (1 + x) e^x
