"""Graph and memory lifecycle from Python: the behaviours of section 15 (items 1-28) of the
PyTorch semantics reference, checked against graft with PyTorch's exact texts, plus what
Python adds (references, `del`, reference cycles and gc, the accumulation leaks).

Memory is read with graft._C._cpu_memory_allocated(): one float32 tensor of 1000 elements
takes one 4096-byte block, a scalar tensor a 512-byte block."""
import contextlib
import gc
import re

import pytest

import graft
from graft.autograd import Function
from graft.autograd.graph import saved_tensors_hooks

BLOCK = 4096  # graft.ones(1000): 4000 bytes, rounded to the allocator's 512-byte granularity
SECOND_BACKWARD = re.escape(
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
    "saved tensors after calling backward.")


def allocated():
    return graft._C._cpu_memory_allocated()


@contextlib.contextmanager
def gc_disabled():
    """Keeps the cyclic collector from running on its own inside a measurement."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def big(requires_grad=False):
    return graft.ones(1000, requires_grad=requires_grad)


# ---- 1-3: graph construction ----

def test_01_requires_grad_propagation():
    x = graft.ones(3, requires_grad=True)
    c = graft.ones(3)
    assert (x + c).requires_grad and not (c + c).requires_grad
    with graft.no_grad():
        assert not (x + c).requires_grad
    # integer and bool outputs never require grad
    assert not (x > 0).requires_grad
    assert not x.argmax().requires_grad
    m = graft.ones(2, 3, requires_grad=True).max(0)
    assert m.values.requires_grad and not m.indices.requires_grad


def test_02_is_leaf_iff_no_grad_fn():
    x = graft.ones(2, requires_grad=True)
    y = x * 2
    assert x.is_leaf and x.grad_fn is None
    assert not y.is_leaf and y.grad_fn is not None
    with graft.no_grad():
        z = x * 2
    assert z.is_leaf and z.grad_fn is None
    d = y.detach()
    assert d.is_leaf and not d.requires_grad
    assert graft.ones(1).is_leaf


def test_03_next_functions():
    a = graft.ones(2, requires_grad=True)
    b = graft.ones(2)
    edges = (a * b).grad_fn.next_functions
    assert edges[0][0].name() == "torch::autograd::AccumulateGrad" and edges[0][1] == 0
    assert edges[1] == (None, 0)
    y = a * b
    (prev, nr), = y.sum().grad_fn.next_functions
    assert prev.name() == "MulBackward0" and nr == 0
    # every consumer of a leaf shares its AccumulateGrad while a graph keeps it alive
    u, v = a * 2, a * 3
    assert u.grad_fn.next_functions[0][0] is v.grad_fn.next_functions[0][0]


# ---- 4-7: backward() ----

def test_04_implicit_gradient_only_for_scalars():
    x = graft.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_05_gradient_shape_mismatch_and_dtype_cast():
    x = graft.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "Mismatch in shape: grad_output[0] has a shape of torch.Size([4]) and output[0] has a shape of "
            "torch.Size([3]).")):
        (x * 2).backward(graft.ones(4))
    (x * 2).backward(graft.ones(3, dtype=graft.float64))  # a real dtype mismatch is cast silently
    assert x.grad.dtype == graft.float32 and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_06_grad_accumulates_in_place_without_create_graph():
    x = graft.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    g1, ptr = x.grad, x.grad.data_ptr()
    (x * 2).sum().backward()
    assert x.grad is g1 and x.grad.data_ptr() == ptr and x.grad.tolist() == [4.0, 4.0, 4.0]
    (x * 3 + x * 4).sum().backward()  # a leaf used twice gets the sum
    assert x.grad.tolist() == [11.0, 11.0, 11.0]


def test_06_grad_accumulates_out_of_place_with_create_graph():
    x = graft.ones(2, requires_grad=True)
    warning = re.escape("Using backward() with create_graph=True will create a reference cycle between the "
                        "parameter and its gradient which can cause a memory leak.")
    with pytest.warns(UserWarning, match=warning):
        (x * x).sum().backward(create_graph=True)
    g1 = x.grad
    assert g1.requires_grad and g1.tolist() == [2.0, 2.0]
    with pytest.warns(UserWarning, match=warning):
        (x * x).sum().backward(create_graph=True)
    assert x.grad is not g1 and x.grad.grad_fn.name() == "AddBackward0" and x.grad.tolist() == [4.0, 4.0]
    x.grad = None  # breaks the parameter <-> gradient cycle


def test_07_retain_graph_defaults_to_create_graph():
    x = graft.ones(2, requires_grad=True)
    y = x.exp().sum()
    g, = graft.autograd.grad(y, x, create_graph=True)
    g2, = graft.autograd.grad(y, x)  # the graph was retained by create_graph=True
    assert g2.tolist() == pytest.approx([2.718281828459045] * 2)
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        graft.autograd.grad(y, x)  # ... and freed by the call without it
    z = x.exp().sum()
    z.backward()
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        z.backward()


# ---- 8-12: what backward frees ----

def test_08_backward_frees_saved_tensors_but_nodes_survive():
    x = big(requires_grad=True)
    gc.collect()
    base = allocated()
    y = x.exp()  # saves its result
    loss = (y * y).sum()  # MulBackward0 saves y twice
    del y
    assert allocated() - base == BLOCK + 512  # y, alive only through the graph; the sum
    loss.backward()  # releases y; x.grad is allocated
    assert allocated() - base == BLOCK + 512
    del loss
    assert allocated() - base == BLOCK  # only x.grad remains


def test_08_next_functions_survive_backward():
    x = graft.ones(2, requires_grad=True)
    y = x.exp().sum()
    y.backward()
    (exp_node, _), = y.grad_fn.next_functions
    assert exp_node.name() == "ExpBackward0"
    assert exp_node.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"


def test_09_second_backward_and_saved_tensors_after_release():
    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = graft.ones(2, requires_grad=True)
    y = x.sigmoid().sum()
    y.backward()
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        y.backward()
    z = Keep.apply(x)
    z.sum().backward()
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        z.grad_fn.saved_tensors


def test_10_second_backward_depends_on_what_was_saved():
    a = graft.ones(2, requires_grad=True)
    s = a.sum()  # SumBackward0 saves only sizes
    s.backward()
    s.backward()
    assert a.grad.tolist() == [2.0, 2.0]
    t = (a + a).sum()  # AddBackward0 saves only alpha
    t.backward()
    t.backward()
    assert a.grad.tolist() == [6.0, 6.0]
    u = (a * 2).sum()  # mul by a Python number saves the wrapped scalar tensor
    u.backward()
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        u.backward()


def test_11_nodes_not_executed_keep_their_saved_tensors():
    a = graft.ones(2, requires_grad=True)
    b = graft.ones(2, requires_grad=True)
    loss = a.exp().sum() + b.exp().sum()
    loss.backward(inputs=[a])
    assert b.grad is None
    loss.backward(inputs=[b])
    assert a.grad.tolist() == pytest.approx([2.718281828459045] * 2)
    assert b.grad.tolist() == pytest.approx([2.718281828459045] * 2)
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        loss.backward()


def test_12_backward_inputs():
    x1 = graft.ones(2, requires_grad=True)
    x2 = graft.ones(2, requires_grad=True)
    (x1 * x2 * 3).sum().backward(inputs=[x1])
    assert x1.grad.tolist() == [3.0, 3.0] and x2.grad is None
    with pytest.raises(RuntimeError, match=re.escape("`inputs` argument to `backward()` cannot be empty.")):
        (x1 * 2).sum().backward(inputs=[])
    y = x1 * 2
    (y * y).sum().backward(inputs=[y])  # a non-leaf input gets its .grad
    assert y.grad.tolist() == [4.0, 4.0]


# ---- 13-16: .grad of non-leaves, autograd.grad, higher order ----

def test_13_non_leaf_grad():
    x = graft.ones(3, requires_grad=True)
    y = 2 * x
    with pytest.warns(UserWarning, match=re.escape(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed.")):
        assert y.grad is None
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert y.grad.tolist() == [2.0, 2.0, 2.0]


def test_14_autograd_grad():
    x = graft.ones(2, requires_grad=True)
    unused = graft.ones(2, requires_grad=True)
    r = graft.autograd.grad([(2 * x).sum(), (3 * x).sum()], x)
    assert isinstance(r, tuple) and r[0].tolist() == [5.0, 5.0]
    assert x.grad is None
    with pytest.raises(RuntimeError, match=re.escape(
            "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if "
            "this is the desired behavior.")):
        graft.autograd.grad((x * 2).sum(), [x, unused])
    gx, gu = graft.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gu is None
    gx, gu = graft.autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
    assert gu.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        graft.autograd.grad((x * 2).sum(), graft.ones(2))


def test_15_hessian_vector_product():
    w = graft.tensor([1.0, 2.0], requires_grad=True)
    f = (w * w * w).sum() + w[0] * w[1]
    g, = graft.autograd.grad(f, w, create_graph=True)
    assert g.grad_fn is not None and g.tolist() == [5.0, 13.0]  # 3w^2 + (w1, w0)
    hv, = graft.autograd.grad(g, w, grad_outputs=graft.tensor([1.0, 0.0]))
    assert hv.tolist() == [6.0, 1.0]


def test_16_linear_derivative_does_not_require_grad():
    x = graft.ones(2, requires_grad=True)
    g, = graft.autograd.grad((2 * x).sum(), x, create_graph=True)
    assert not g.requires_grad
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        graft.autograd.grad(g.sum(), x)


# ---- 17-22: detach, clone, in-place and versions ----

def test_17_detach_and_data():
    a = graft.ones(3, requires_grad=True)
    d = a.detach()
    assert d.data_ptr() == a.data_ptr() and d.is_leaf and not d.requires_grad
    v = a._version
    d.add_(0)
    assert a._version == v + 1  # shared version counter
    e = a.data
    e.add_(0)
    assert a._version == v + 1 and e.data_ptr() == a.data_ptr()  # .data: its own counter


def test_18_clone_is_differentiable_and_copies():
    a = graft.ones(2, requires_grad=True)
    c = a.clone()
    assert c.grad_fn.name() == "CloneBackward0" and c.data_ptr() != a.data_ptr()
    (c * 3).sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]


def test_19_in_place_on_leaves():
    a = graft.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "a leaf Variable that requires grad is being used in an in-place operation.")):
        a.mul_(2)
    with pytest.raises(RuntimeError, match=re.escape(
            "a view of a leaf Variable that requires grad is being used in an in-place operation.")):
        a[0].mul_(2)
    v = a._version
    with graft.no_grad():
        a.mul_(2)
    assert a._version == v + 1 and a.tolist() == [2.0, 2.0]


def test_20_version_error_text():
    a = graft.ones(3, requires_grad=True)
    b = a * 1
    c = b * b
    b.add_(1)  # rebases b onto AddBackward0
    with pytest.raises(RuntimeError, match=re.escape(
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.FloatTensor [3]], which is output 0 of AddBackward0, is at version 1; expected version 0 "
            "instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
            "with torch.autograd.set_detect_anomaly(True).")):
        c.sum().backward()
    leaf = graft.ones(3, requires_grad=True)
    s = leaf.exp()
    r = s * leaf
    with graft.no_grad():
        leaf.add_(1)
    with pytest.raises(RuntimeError, match=re.escape(
            "[torch.FloatTensor [3]] is at version 1; expected version 0 instead.")):
        r.sum().backward()


def test_21_only_saved_tensors_are_version_checked_and_views_share_counters():
    a = graft.ones(3, requires_grad=True)
    b = a * 1
    c = b + b  # saves nothing
    b.add_(1)
    c.sum().backward()
    assert a.grad.tolist() == [2.0, 2.0, 2.0]
    base = graft.ones(4)
    view = base[1:]
    v = base._version
    view.add_(1)
    assert base._version == v + 1 and view._version == base._version


def test_22_in_place_on_views_of_non_leaves():
    a = graft.ones(3, requires_grad=True)
    b = a * 1
    b[1:].mul_(3)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    assert b.grad_fn.next_functions[0][0].name() == "MulBackward0"
    b.sum().backward()
    assert a.grad.tolist() == [1.0, 3.0, 3.0]
    parts = (a * 1).split(1)
    with pytest.raises(RuntimeError, match=re.escape(
            "Output 0 of SplitBackward0 is a view and is being modified inplace. This view is the output of a "
            "function that returns multiple views. Such functions do not allow the output views to be modified "
            "inplace. You should replace the inplace operation by an out-of-place one.")):
        parts[0].mul_(2)


# ---- 23-25: custom Functions ----

class _Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 2 * x


def test_23_custom_function_gradient_count_and_shape():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad):
            return grad

    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return graft.ones(5)

    x = graft.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "function TooFewBackward returned an incorrect number of gradients (expected 2, got 1)")):
        TooFew.apply(x, x).sum().backward()
    with pytest.raises(RuntimeError, match=re.escape(
            "Function WrongShapeBackward returned an invalid gradient at index 0 - got [5] but expected shape "
            "compatible with [3]")):
        WrongShape.apply(x).sum().backward()


def test_24_custom_function_ctx_flags():
    seen = {}

    class Flags(Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen["needs"] = ctx.needs_input_grad
            ctx.set_materialize_grads(False)
            idx = graft.tensor([0, 1])
            ctx.mark_non_differentiable(idx)
            y.add_(k)
            ctx.mark_dirty(y)
            return x * k, idx, y

        @staticmethod
        def backward(ctx, gx, gidx, gy):
            seen["grads"] = (gidx, gy)
            return gx * 2, None, None

    x = graft.ones(2, requires_grad=True)
    y = graft.ones(2)
    out, idx, same = Flags.apply(x, y, 2)
    assert seen["needs"] == (True, False, False)
    assert same is y and not idx.requires_grad and y.tolist() == [3.0, 3.0]
    out.sum().backward()
    assert seen["grads"] == (None, None) and x.grad.tolist() == [2.0, 2.0]


def test_25_custom_function_double_backward_and_once_differentiable():
    from graft.autograd.function import once_differentiable

    class SquareOnce(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 2 * x

    x = graft.tensor([3.0], requires_grad=True)
    g, = graft.autograd.grad(_Square.apply(x), x, create_graph=True)
    gg, = graft.autograd.grad(g, x)
    assert g.tolist() == [6.0] and gg.tolist() == [2.0]
    g, = graft.autograd.grad(SquareOnce.apply(x), x, graft.ones(1, requires_grad=True), create_graph=True)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.backward()


# ---- 26-28: hooks and anomaly mode ----

def test_26_tensor_hooks_run_before_accumulation():
    x = graft.ones(2, requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]
    y = x * 1

    def shrink(g):
        return g[:1]

    y.register_hook(shrink)
    with pytest.raises(RuntimeError, match=re.escape("hook 'shrink' has changed the size of value")):
        y.sum().backward()


def test_27_saved_tensors_hooks_pack_once_unpack_each_access():
    counts = {"pack": 0, "unpack": 0}

    def pack(t):
        counts["pack"] += 1
        return t.detach()

    def unpack(t):
        counts["unpack"] += 1
        return t

    x = graft.ones(2, requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = (x * x).exp()  # mul saves two tensors, exp one
    assert counts == {"pack": 3, "unpack": 0}
    y.sum().backward()
    assert counts == {"pack": 3, "unpack": 3}
    with saved_tensors_hooks(lambda t: t.detach().mul_(2), lambda t: t):
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place."):
            (x * 1).exp()


def test_27_packed_output_kept_by_the_graph_until_backward():
    # A pack hook that keeps the saved output itself (not detached) makes a cycle
    # output -> grad_fn -> packed -> output that gc cannot see; backward breaks it.
    x = big(requires_grad=True)
    gc.collect()
    base = allocated()
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp()  # saves its result: the packed object is y itself
    s = y.sum()
    del y
    gc.collect()
    assert allocated() - base == BLOCK + 512
    s.backward()  # releases the packed output
    del s
    assert allocated() - base == BLOCK  # x.grad
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = x.exp()
    del y  # detached in pack: no cycle, freed at once
    assert allocated() - base == BLOCK


def test_28_anomaly_mode():
    x = graft.zeros(1, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with graft.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match=re.escape(
                    "Function 'SqrtBackward0' returned nan values in its 0th output.")):
                (x.sqrt() * 0).sum().backward()


# ---- what Python adds: references, del, cycles, accumulation leaks ----

def test_del_releases_memory_at_once():
    gc.collect()
    base = allocated()
    with gc_disabled():
        a = big()
        assert allocated() - base == BLOCK
        b = a  # a second reference keeps it
        del a
        assert allocated() - base == BLOCK
        del b
        assert allocated() == base


def test_graph_keeps_an_intermediate_that_python_dropped():
    x = big(requires_grad=True)
    gc.collect()
    base = allocated()
    with gc_disabled():
        y = x.exp()
        loss = y.sum()
        del y  # ExpBackward0 saved it
        assert allocated() - base == BLOCK + 512
        del loss  # the graph goes, and y with it
        assert allocated() == base


def test_reference_cycle_frees_only_at_gc_collect():
    gc.collect()
    base = allocated()
    with gc_disabled():
        cycle = [big()]
        cycle.append(cycle)
        del cycle
        assert allocated() - base == BLOCK

        class Holder:
            pass

        h = Holder()
        h.tensor = big()
        h.me = h
        del h
        assert allocated() - base == 2 * BLOCK
        gc.collect()
        assert allocated() == base


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True to a scalar")
def test_total_loss_accumulating_the_graph_leaks_per_iteration():
    w = big(requires_grad=True)
    gc.collect()
    base = allocated()
    with gc_disabled():
        total_loss = 0
        held = []
        for _ in range(3):
            loss = (w.exp() * 2).sum()  # ExpBackward0 saves a 4096-byte result
            total_loss += loss  # keeps every iteration's graph
            held.append(allocated() - base)
        del loss
        growth = [b - a for a, b in zip(held, held[1:])]
        assert growth[0] == growth[1] >= BLOCK
        assert total_loss.grad_fn.name() == "AddBackward0"
        del total_loss
        assert allocated() == base

        total = 0.0
        for _ in range(3):
            loss = (w.exp() * 2).sum()
            total += loss.item()
            del loss
            assert allocated() == base  # nothing kept between iterations
        assert total == pytest.approx(3 * 2 * 1000 * 2.718281828459045, rel=1e-5)


def test_retain_graph_in_a_loop_keeps_a_growing_graph_until_detached():
    w = graft.full((1000,), 0.5, requires_grad=True)
    gc.collect()
    base = allocated()
    with gc_disabled():
        h = graft.zeros(1000)
        sizes = []
        for _ in range(3):
            h = (h * w).tanh() + 1  # tanh saves its result; h carries the whole history
            h.sum().backward(retain_graph=True)  # without it the second iteration would fail
            sizes.append(allocated() - base)
        growth = [b - a for a, b in zip(sizes, sizes[1:])]
        assert growth[0] == growth[1] > 0
        h = h.detach()  # cut the history: the retained graph goes
        assert allocated() - base == 2 * BLOCK  # h and w.grad
        del h
        w.grad = None
        assert allocated() == base


def test_create_graph_keeps_the_graph_through_param_grad_until_set_to_none():
    p = big(requires_grad=True)
    gc.collect()
    base = allocated()
    with gc_disabled():
        h = p.exp()
        loss = (h * h).sum()
        with pytest.warns(UserWarning, match="Using backward\\(\\) with create_graph=True"):
            loss.backward(create_graph=True)
        del h, loss
        gc.collect()
        kept = allocated() - base
        assert kept > 2 * BLOCK  # p.grad, plus h and the double-backward graph it keeps
        assert p.grad.grad_fn is not None
        p.grad = None  # breaks the cycle p -> p.grad -> graph -> p
        assert allocated() == base


def test_python_list_of_outputs_keeps_every_graph():
    w = big(requires_grad=True)
    gc.collect()
    base = allocated()
    with gc_disabled():
        outputs = []
        for _ in range(3):
            outputs.append(w.exp().sum())  # each keeps its saved exp result
        assert allocated() - base == 3 * (BLOCK + 512)
        outputs.clear()
        assert allocated() == base
        detached = [w.exp().sum().detach() for _ in range(3)]
        assert allocated() - base == 3 * 512  # only the values
        del detached
        assert allocated() == base


def test_accumulate_grad_and_copy_slices_names_as_pytorch():
    # name() keeps PyTorch's C++ namespace; the repr and a tensor's grad_fn=<...> show the class name
    a = graft.ones(2, requires_grad=True)
    acc = (a * 2).grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert repr(acc).startswith("<AccumulateGrad object at ")
    b = a.clone()
    b[0] = 5
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    assert repr(b).endswith("grad_fn=<CopySlices>)")
