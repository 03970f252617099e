"""graft.utils.checkpoint: activation checkpointing with torch.utils.checkpoint's semantics.
Gradients equal the un-checkpointed program's exactly (backward, autograd.grad, double
backward, nested checkpoints, dropout through the RNG state), the recomputation happens once
per backward pass, PyTorch's errors and warnings, and the memory it saves as the allocator
counts it."""
import gc
import warnings

import pytest

import graft
import graft.nn as nn
import graft.nn.functional as F
from graft.utils.checkpoint import (CheckpointError, checkpoint, checkpoint_sequential, set_checkpoint_debug_enabled,
                                    set_checkpoint_early_stop)


def _inputs():
    graft.manual_seed(0)
    x = graft.randn(3, 4, dtype=graft.float64, requires_grad=True)
    w = graft.randn(4, 4, dtype=graft.float64, requires_grad=True)
    return x, w


def _f(x, w):
    return (x @ w).tanh().exp() * x + w.sum()


def _equal(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x is None and y is None) or graft.equal(x, y), (x, y)


class _Counted:
    """A function that counts its calls (forward + recomputations)."""

    def __init__(self, fn):
        self.fn = fn
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.fn(*args, **kwargs)


# ---- gradients ----

@pytest.mark.parametrize("use_reentrant", [False, True])
def test_backward_gives_the_same_gradients(use_reentrant):
    x, w = _inputs()
    _f(x, w).sum().backward()
    expected = [x.grad, w.grad]
    x.grad = w.grad = None
    f = _Counted(_f)
    out = checkpoint(f, x, w, use_reentrant=use_reentrant)
    assert f.calls == 1
    assert out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    assert f.calls == 2  # recomputed once, in the backward pass
    _equal([x.grad, w.grad], expected)


def test_autograd_grad_and_grad_outputs():
    x, w = _inputs()
    v = graft.randn(3, 4, dtype=graft.float64)
    expected = graft.autograd.grad(_f(x, w), (x, w), v)
    _equal(graft.autograd.grad(checkpoint(_f, x, w, use_reentrant=False), (x, w), v), expected)
    # only some inputs: the other saved tensors are never unpacked
    _equal(graft.autograd.grad(checkpoint(_f, x, w, use_reentrant=False), (w,), v), expected[1:])
    out = checkpoint(_f, x, w, use_reentrant=False)
    out.backward(v, inputs=[x])
    _equal([x.grad, w.grad], [expected[0], None])


def test_double_backward():
    x, w = _inputs()

    def plain(x, w):
        return _f(x, w).pow(2).sum()

    def checkpointed(x, w):
        return checkpoint(_f, x, w, use_reentrant=False).pow(2).sum()

    assert graft.autograd.gradcheck(checkpointed, (x, w))
    assert graft.autograd.gradgradcheck(checkpointed, (x, w))
    # a Hessian-vector product through the checkpoint equals the plain one exactly
    v = graft.randn(3, 4, dtype=graft.float64)
    results = []
    for fn in (plain, checkpointed):
        gx, = graft.autograd.grad(fn(x, w), x, create_graph=True)
        assert gx.requires_grad
        results.append(graft.autograd.grad((gx * v).sum(), (x, w)))
    _equal(results[0], results[1])
    # and with .backward(create_graph=True) twice
    f = _Counted(_f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # backward(create_graph=True)'s reference-cycle warning
        checkpoint(f, x, w, use_reentrant=False).pow(2).sum().backward(create_graph=True)
    gx = x.grad
    x.grad = w.grad = None
    (gx * v).sum().backward()
    _equal([x.grad, w.grad], results[0])
    assert f.calls == 3  # the forward, the first backward, the second backward


def test_retain_graph_recomputes_per_backward_pass():
    x, w = _inputs()
    f = _Counted(_f)
    out = checkpoint(f, x, w, use_reentrant=False).sum()
    out.backward(retain_graph=True)
    g1 = x.grad.clone()
    out.backward()
    assert f.calls == 3
    assert graft.allclose(x.grad, 2 * g1)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out.backward()


def test_inputs_that_do_not_require_grad_kwargs_and_non_tensor_values():
    x, w = _inputs()
    c = graft.randn(3, 4, dtype=graft.float64)  # requires no grad

    def fn(a, const, scale, *, weight, bias=None, tag="t"):
        h = (a * const).matmul(weight).sigmoid() * scale
        if bias is not None:
            h = h + bias
        return h, tag, scale, None

    b = graft.randn(4, dtype=graft.float64, requires_grad=True)
    h, tag, scale, none = fn(x, c, 2.5, weight=w, bias=b, tag="u")
    expected = graft.autograd.grad(h.sum(), (x, w, b))
    out = checkpoint(fn, x, c, 2.5, weight=w, bias=b, tag="u", use_reentrant=False)
    assert out[1:] == ("u", 2.5, None)
    _equal(graft.autograd.grad(out[0].sum(), (x, w, b)), expected)
    assert not c.requires_grad and c.grad is None


def test_no_input_requires_grad():
    graft.manual_seed(1)
    lin = nn.Linear(4, 3)
    x = graft.randn(2, 4)
    out = checkpoint(lin, x, use_reentrant=False)  # the parameters still get gradients
    out.sum().backward()
    expected = [lin.weight.grad.clone(), lin.bias.grad.clone()]
    lin.zero_grad()
    lin(x).sum().backward()
    _equal([lin.weight.grad, lin.bias.grad], expected)

    # nothing requires grad: the output does not either
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True. Gradients will be None$"):
        out = checkpoint(lambda t: t * 2, x, use_reentrant=True)
    assert not out.requires_grad
    assert not checkpoint(lambda t: t * 2, x, use_reentrant=False).requires_grad


def test_under_no_grad_it_is_just_a_call():
    x, w = _inputs()
    f = _Counted(_f)
    packed = []
    with graft.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        with graft.no_grad():
            out = checkpoint(f, x, w, use_reentrant=False)
        with graft.inference_mode():
            out2 = checkpoint(f, x, w, use_reentrant=False)
    assert f.calls == 2 and packed == []
    assert out.grad_fn is None and not out.requires_grad and graft.equal(out, _f(x, w).detach())
    assert not out2.requires_grad


def test_module_parameters_and_methods():
    graft.manual_seed(2)
    model = nn.Sequential(nn.Linear(5, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 2))
    x = graft.randn(6, 5, requires_grad=True)
    model(x).pow(2).mean().backward()
    expected = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    checkpoint(model.forward, x, use_reentrant=False).pow(2).mean().backward()
    _equal([p.grad for p in model.parameters()] + [x.grad], expected)


def test_nested_checkpoints():
    x, w = _inputs()

    def inner(a):
        return (a @ w).sin()

    def outer(a):
        h = checkpoint(inner, a, use_reentrant=False)
        return checkpoint(inner, h * a, use_reentrant=False).exp() * a

    expected = graft.autograd.grad((((((x @ w).sin()) * x) @ w).sin().exp() * x).sum(), (x, w))
    out = checkpoint(outer, x, use_reentrant=False)
    _equal(graft.autograd.grad(out.sum(), (x, w)), expected)

    def three_levels(a):
        return checkpoint(outer, a, use_reentrant=False)

    out = checkpoint(three_levels, x, use_reentrant=False)
    _equal(graft.autograd.grad(out.sum(), (x, w)), expected)
    # and double backward through the nesting
    assert graft.autograd.gradgradcheck(lambda a: checkpoint(three_levels, a, use_reentrant=False).sum(), (x,))


def test_backward_inside_the_checkpointed_function():
    x, _ = _inputs()

    def fn(a):
        y = a.sin()
        z = y.cos()
        ga, = graft.autograd.grad(z.sum(), a, create_graph=True)
        return ga * a.cos()

    expected = graft.autograd.grad(fn(x).sum(), x)
    _equal(graft.autograd.grad(checkpoint(fn, x, use_reentrant=False).sum(), x), expected)
    with set_checkpoint_early_stop(False):
        out = checkpoint(fn, x, use_reentrant=False)
    _equal(graft.autograd.grad(out.sum(), x), expected)


# ---- RNG ----

@pytest.mark.parametrize("use_reentrant", [False, True])
def test_dropout_replays_the_forward_mask(use_reentrant):
    graft.manual_seed(3)
    lin = nn.Linear(16, 16)
    x = graft.randn(8, 16, requires_grad=True)

    def fn(a):
        return F.dropout(lin(a), p=0.5, training=True).tanh()

    state = graft.get_rng_state()
    fn(x).sum().backward()
    after_plain = graft.rand(4)
    expected = [x.grad.clone(), lin.weight.grad.clone()]
    x.grad = None
    lin.zero_grad()
    graft.set_rng_state(state)
    out = checkpoint(fn, x, use_reentrant=use_reentrant)
    out.sum().backward()
    _equal([x.grad, lin.weight.grad], expected)
    # the recomputation does not advance the generator: the next draw is the plain run's
    assert graft.equal(graft.rand(4), after_plain)

    # without preserve_rng_state the recomputation draws a new mask: the gradient is wrong
    x.grad = None
    graft.set_rng_state(state)
    checkpoint(fn, x, use_reentrant=use_reentrant, preserve_rng_state=False).sum().backward()
    assert not graft.equal(x.grad, expected[0])


# ---- checks and errors ----

def test_recomputation_must_save_the_same_tensors():
    x, w = _inputs()
    mode = {"extra": False, "shape": False}

    def fn(a):
        h = a.exp()
        if mode["extra"]:
            h = h.sin()
        if mode["shape"]:
            return (h[:2] * w[:2, :3].sum()).cos()
        return (h * w.sum()).cos()

    out = checkpoint(fn, x, use_reentrant=False, early_stop=False)
    mode["extra"] = True
    with pytest.raises(CheckpointError, match="trying to save more tensors during recomputation than during the "
                                              "original forward pass"):
        out.sum().backward()
    mode["extra"] = False
    mode["shape"] = True
    out = checkpoint(fn, x, use_reentrant=False)
    mode["shape"] = False
    with pytest.raises(CheckpointError, match="have different metadata than during the forward pass"):
        out.sum().backward()
    assert issubclass(CheckpointError, RuntimeError)


def test_fewer_tensors_and_metadata_checks():
    x, _ = _inputs()
    mode = {"fewer": False}

    def fn(a):
        h = a.exp()
        if not mode["fewer"]:
            h = h.sin()
        return h

    out = checkpoint(fn, x.float(), use_reentrant=False)
    mode["fewer"] = True
    with pytest.raises(CheckpointError, match=r"A different number of tensors was saved during the original forward "
                                              r"and recomputation.\nNumber of tensors saved during forward: 2\n"
                                              r"Number of tensors saved during recomputation: 1.\n"):
        out.sum().backward()
    mode["fewer"] = False

    def grows(a):
        return a[: mode["n"]].exp().sum() * a.sum()

    mode["n"] = 2
    out = checkpoint(grows, x, use_reentrant=False)
    mode["n"] = 3
    with pytest.raises(CheckpointError, match=r"(?s)Recomputed values for the following tensors have different "
                                              r"metadata than during the forward pass.\ntensor at position 0:\n"
                                              r"saved metadata: \{'shape': graft.Size\(\[2, 4\]\)"):
        out.backward()
    mode["n"] = 2
    out = checkpoint(grows, x, use_reentrant=False, determinism_check="none")
    mode["n"] = 3
    with pytest.raises(RuntimeError, match="^The size of tensor a") as error:
        out.backward()  # not checked: the backward formula gets whatever was recomputed
    assert not isinstance(error.value, CheckpointError)
    with pytest.raises(ValueError, match=r"^determinism_check should be one of \['default', 'none'\], but got "
                                         r"strict$"):
        checkpoint(grows, x, use_reentrant=False, determinism_check="strict")


def test_debug_reports_where_tensors_were_saved():
    x, _ = _inputs()
    mode = {"n": 2}

    def grows(a):
        return a[: mode["n"]].exp().sum() * a.sum()

    out = checkpoint(grows, x, use_reentrant=False, debug=True)
    mode["n"] = 3
    with pytest.raises(CheckpointError, match=r"(?s)different metadata.*saved during the original forward.*"
                                              r"in grows.*saved during recomputation.*in grows"):
        out.backward()
    mode["n"] = 2
    with set_checkpoint_debug_enabled(True):
        out = checkpoint(grows, x, use_reentrant=False)
    mode["n"] = 3
    with pytest.raises(CheckpointError, match="saved during the original forward"):
        out.backward()
    with pytest.raises(ValueError, match="^debug=True is incompatible with non-default context_fn$"):
        checkpoint(grows, x, use_reentrant=False, debug=True,
                   context_fn=lambda: (graft.no_grad(), graft.no_grad()))


def test_unpacking_twice_in_one_backward_raises():
    class TwiceSaved(graft.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            a, = ctx.saved_tensors
            return g * 2

    x, _ = _inputs()
    out = checkpoint(lambda a: TwiceSaved.apply(a.sin()), x, use_reentrant=False)
    with pytest.raises(CheckpointError, match=r"^torch.utils.checkpoint: Unpack is being triggered for a tensor that "
                                              r"was already unpacked once. If you are calling ctx.saved_tensors in "
                                              r"backward, make sure to do so only once."):
        out.sum().backward()


def test_an_input_modified_in_place_after_the_forward_is_caught():
    x, w = _inputs()
    a = x * 1
    out = checkpoint(_f, a, w, use_reentrant=False)
    with graft.no_grad():
        a.add_(1)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been modified "
                                           "by an inplace operation"):
        out.sum().backward()


def test_early_stop():
    x, _ = _inputs()
    log = []

    def fn(a):
        h = a.exp()  # saves its result: the one tensor saved
        log.append("after")
        return h.sum() + h.mean()  # these save nothing

    checkpoint(fn, x, use_reentrant=False).sum().backward()
    assert log == ["after"]  # the recomputation stopped once exp's result was back
    del log[:]
    with set_checkpoint_early_stop(False):
        out = checkpoint(fn, x, use_reentrant=False)
    out.sum().backward()
    assert log == ["after", "after"]
    del log[:]
    checkpoint(fn, x, use_reentrant=False, early_stop=False).sum().backward()
    assert log == ["after", "after"]


def test_context_fn():
    x, w = _inputs()
    log = []

    class Ctx:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            log.append(self.name + " in")

        def __exit__(self, *exc):
            log.append(self.name + " out")

    out = checkpoint(_f, x, w, use_reentrant=False, context_fn=lambda: (Ctx("forward"), Ctx("recompute")))
    assert log == ["forward in", "forward out"]
    out.sum().backward()
    assert log == ["forward in", "forward out", "recompute in", "recompute out"]

    class Swallow:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return True

    def failing(a):
        raise ValueError("boom")

    with pytest.raises(RuntimeError, match="the forward context provided by context_fn suppressed an exception"):
        checkpoint(failing, x, use_reentrant=False, context_fn=lambda: (Swallow(), Swallow()))


def test_reentrant_variant_errors():
    x, w = _inputs()
    out = checkpoint(_f, x, w, use_reentrant=True)
    message = (r"^When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad\(\) or passing an "
               r"`inputs` parameter to .backward\(\). To resolve this error, you can either set use_reentrant=False, "
               r"or call .backward\(\) without passing the `inputs` argument.$")
    with pytest.raises(RuntimeError, match=message):
        graft.autograd.grad(out.sum(), x, retain_graph=True)
    with pytest.raises(RuntimeError, match=message):
        out.sum().backward(inputs=[x])
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: scale,tag$"):
        checkpoint(_f, x, w, use_reentrant=True, scale=2, tag=1)
    with pytest.raises(ValueError, match=r"^Passing `context_fn` or `debug` is only supported when "
                                         r"use_reentrant=False.$"):
        checkpoint(_f, x, w, use_reentrant=True, debug=True)
    with pytest.raises(RuntimeError, match="^none of output has requires_grad=True, this checkpoint\\(\\) is not "
                                           "necessary$"):
        # the Function's output requires grad, but the recomputed one does not
        checkpoint(lambda a: (a * 2).detach(), x, use_reentrant=True).sum().backward()


def test_use_reentrant_none_warns_and_is_reentrant():
    x, w = _inputs()
    with pytest.warns(UserWarning) as record:
        out = checkpoint(_f, x, w)
    assert str(record[0].message) == (
        "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
        "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
        "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
        "details on the differences between the two variants.")
    assert record[0].filename == __file__  # points at the caller
    with pytest.raises(RuntimeError, match="When use_reentrant=True"):
        graft.autograd.grad(out.sum(), x)


def test_checkpoint_sequential():
    graft.manual_seed(4)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Dropout(0.2), nn.Linear(8, 3),
                          nn.Sigmoid())
    x = graft.randn(5, 6, requires_grad=True)
    state = graft.get_rng_state()
    model(x).sum().backward()
    expected = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    for use_reentrant in (False, True):
        for segments, functions in ((3, model), (2, list(model.children())), (7, model)):
            model.zero_grad()
            x.grad = None
            graft.set_rng_state(state)
            out = checkpoint_sequential(functions, segments, x, use_reentrant=use_reentrant)
            out.sum().backward()
            _equal([p.grad for p in model.parameters()] + [x.grad], expected)
    with pytest.warns(UserWarning) as record:
        checkpoint_sequential(model, 2, x)
    assert len(record) == 1 and str(record[0].message) == (
        "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. In "
        "version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, "
        "but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs "
        "for more details on the differences between the two variants.")
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        checkpoint_sequential(model, 2, x, use_reentrant=False, foo=1)
    out = checkpoint_sequential(model, 2, x, use_reentrant=False, preserve_rng_state=False)
    assert out.shape == (5, 3)


# ---- memory ----

def _deep_mlp():
    graft.manual_seed(5)
    layers = []
    for _ in range(16):
        layers += [nn.Linear(64, 64), nn.ReLU()]
    return nn.Sequential(*layers)


def _measure(model, x, run):
    model.zero_grad(set_to_none=True)
    x.grad = None
    gc.collect()
    base = graft.cpu.memory_allocated()
    graft.cpu.reset_peak_memory_stats()
    out = run(model, x)
    after_forward = graft.cpu.memory_allocated() - base
    out.sum().backward()
    del out
    peak = graft.cpu.max_memory_allocated() - base
    return after_forward, peak, [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_sequential_lowers_peak_memory(use_reentrant):
    """16 x (Linear(64, 64), ReLU) on a batch of 2048: each ReLU output (B*H*4 bytes = 512 KiB)
    is saved (by the ReLU and the next Linear), so a plain forward keeps 16 activations. With 4
    checkpointed segments of 4 layers, a segment keeps only its input: 3 of each checkpointed
    segment's 4 ReLU outputs are not kept, 9 activations in all (the segments' RNG states, a
    few KiB, are kept instead)."""
    model = _deep_mlp()
    x = graft.randn(2048, 64, requires_grad=True)
    act = 2048 * 64 * 4
    rng_state = graft.get_rng_state().numel() * 8
    plain_forward, plain_peak, plain_grads = _measure(model, x, lambda m, t: m(t))
    ckpt_forward, ckpt_peak, ckpt_grads = _measure(
        model, x, lambda m, t: checkpoint_sequential(m, 4, t, use_reentrant=use_reentrant))
    _equal(ckpt_grads, plain_grads)
    assert plain_forward >= 16 * act
    assert plain_forward - ckpt_forward >= 9 * act - 3 * (rng_state + 512)
    # the backward recomputes one segment at a time: its peak stays below the plain run's by
    # at least 7 activations (measured: 8.9 without reentrancy, 7.9 with)
    assert plain_peak - ckpt_peak >= 7 * act, (plain_peak / act, ckpt_peak / act)


def test_no_leak_when_the_output_is_dropped_or_kept():
    x, w = _inputs()
    gc.collect()
    base = graft.cpu.memory_allocated()
    out = checkpoint(_f, x * 1, w, use_reentrant=False)
    del out  # the graph (and the frame its hooks hold) is freed at once: no cycle
    assert graft.cpu.memory_allocated() == base
    out = checkpoint(_f, x * 1, w, use_reentrant=False)
    out.sum().backward(retain_graph=True)
    del out
    x.grad = w.grad = None
    assert graft.cpu.memory_allocated() == base
