"""Autograd from Python: tensor hooks, retain_grad, anomaly mode, grad modes (context managers
and decorators, generators included), inference mode, saved-tensor hooks, gradcheck and
gradgradcheck. Expected texts are PyTorch's (2.x where it differs from 1.13)."""
import inspect
import re
import threading

import pytest

import graft
from graft.autograd import Function
from graft.autograd.gradcheck import GradcheckError
from graft.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks


def _f64(values, requires_grad=True):
    return graft.tensor(values, dtype=graft.float64, requires_grad=requires_grad)


# ---- tensor hooks ----

def test_hook_replaces_the_gradient_and_runs_before_leaf_accumulation():
    x = graft.ones(3, requires_grad=True)
    seen = []
    # The hook reads x.grad through `box`, cleared at the end: a closure over x itself would be a
    # cycle x -> hook -> x through the C++ hook list, which Python's gc cannot see.
    box = [x]

    def times_ten(grad):
        seen.append((box[0].grad, grad.tolist()))
        return grad * 10

    x.register_hook(times_ten)
    (x * 2).sum().backward()
    box.clear()
    assert seen == [(None, [2.0, 2.0, 2.0])]  # .grad not yet written when the hook runs
    assert x.grad.tolist() == [20.0, 20.0, 20.0]


def test_hook_returning_none_keeps_the_gradient():
    x = graft.ones(2, requires_grad=True)
    calls = []
    x.register_hook(lambda g: calls.append(g.tolist()))
    (x * 3).sum().backward()
    assert calls == [[3.0, 3.0]] and x.grad.tolist() == [3.0, 3.0]


def test_hook_on_non_leaf_changes_what_flows_upstream():
    x = graft.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 3)
    (y * y).sum().backward()  # d/dy = 2y = 4, tripled = 12, times dy/dx = 2
    assert x.grad.tolist() == [24.0, 24.0]


def test_removed_hook_no_longer_runs():
    x = graft.ones(2, requires_grad=True)
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    handle.remove()  # removing twice is harmless
    x.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    with x.register_hook(lambda g: g * 5):
        x.sum().backward()
    x.sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]  # 1 + 5 + 1


def test_hooks_run_in_registration_order():
    x = graft.ones(1, requires_grad=True)
    y = x * 1
    y.register_hook(lambda g: g + 1)
    y.register_hook(lambda g: g * 10)
    y.backward()
    assert x.grad.tolist() == [20.0]


def test_hook_size_change_error_names_the_python_function():
    x = graft.ones(2, requires_grad=True)
    y = x * 2

    def grow(grad):
        return graft.ones(4)

    y.register_hook(grow)
    with pytest.raises(RuntimeError, match=re.escape("hook 'grow' has changed the size of value")):
        y.sum().backward()
    z = x * 3
    z.register_hook(lambda g: g[:1])
    with pytest.raises(RuntimeError, match=re.escape("hook '<lambda>' has changed the size of value")):
        z.sum().backward()


def test_hook_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        graft.ones(2).register_hook(lambda g: g)


def test_exception_in_hook_propagates():
    x = graft.ones(2, requires_grad=True)

    def fails(grad):
        raise ZeroDivisionError("hook failed")

    x.register_hook(fails)
    with pytest.raises(ZeroDivisionError, match="hook failed"):
        x.sum().backward()


# ---- retain_grad ----

def test_retain_grad_accumulates_and_sees_hooked_values():
    x = graft.ones(3, requires_grad=True)
    y = 2 * x
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert y.grad.tolist() == [2.0, 2.0, 2.0]
    z = x * 3
    z.retain_grad()
    z.register_hook(lambda g: g * 100)  # 2.x: .grad is written after every tensor hook
    z.sum().backward()
    assert z.grad.tolist() == [100.0, 100.0, 100.0]


def test_non_leaf_grad_warns_unless_retained():
    x = graft.ones(2, requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match=re.escape(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
            "be populated during autograd.backward().")):
        assert y.grad is None
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        graft.ones(1).retain_grad()


# ---- anomaly mode ----

def test_anomaly_nan_error():
    x = graft.zeros(1, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled") as record_nan:
        with graft.autograd.detect_anomaly():
            y = x.sqrt() * 0  # sqrt'(0) = inf, times 0 = nan
            with pytest.raises(RuntimeError, match=re.escape(
                    "Function 'SqrtBackward0' returned nan values in its 0th output.")):
                y.sum().backward()
    # like every error inside a node, the NaN error first reports the forward call (PyTorch too)
    traces = [str(w.message) for w in record_nan if "Error detected in SqrtBackward0" in str(w.message)]
    assert len(traces) == 1 and "test_autograd_misc.py" in traces[0] and "x.sqrt()" in traces[0]
    assert not graft._C.is_anomaly_enabled()
    y = x.sqrt() * 0
    y.sum().backward()  # without anomaly mode the nan goes through
    assert x.grad.isnan().tolist() == [True]


def test_anomaly_check_nan_false_lets_nan_through():
    x = graft.zeros(1, requires_grad=True)
    with pytest.warns(UserWarning):
        with graft.autograd.detect_anomaly(check_nan=False):
            (x.sqrt() * 0).sum().backward()
    assert x.grad.isnan().tolist() == [True]


def test_anomaly_warning_shows_the_python_line_of_the_forward_call():
    class Fails(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            raise ValueError("bad backward")

    x = graft.ones(1, requires_grad=True)
    with pytest.warns(UserWarning) as record:
        with graft.autograd.detect_anomaly():
            line = inspect.currentframe().f_lineno + 1
            y = Fails.apply(x)
            with pytest.raises(ValueError, match="bad backward"):
                y.sum().backward()
    messages = [str(w.message) for w in record]
    detected = [m for m in messages if m.startswith("Error detected in FailsBackward. Traceback of forward call "
                                                    "that caused the error:\n")]
    assert len(detected) == 1
    assert f'File "{__file__}", line {line}, in test_anomaly_warning_shows_the_python_line_of_the_forward_call' \
        in detected[0]
    assert "y = Fails.apply(x)" in detected[0]


def test_anomaly_mode_changes_the_version_error_hint():
    x = graft.ones(2, requires_grad=True)
    with pytest.warns(UserWarning):
        with graft.autograd.set_detect_anomaly(True):
            y = x.sigmoid()
            with graft.no_grad():
                y.add_(1)
            with pytest.raises(RuntimeError, match=re.escape(
                    "Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
                    "variable in question was changed in there or anywhere later. Good luck!")):
                y.sum().backward()


# ---- grad modes ----

def test_grad_modes_as_context_managers():
    x = graft.ones(1, requires_grad=True)
    with graft.no_grad():
        assert not graft.is_grad_enabled()
        assert not (x * 2).requires_grad
        with graft.enable_grad():
            assert (x * 2).requires_grad
    assert graft.is_grad_enabled()
    with graft.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert graft.is_grad_enabled()
    graft.set_grad_enabled(False)  # a plain call sets the mode until changed
    try:
        assert not graft.is_grad_enabled()
    finally:
        graft.set_grad_enabled(True)


def test_grad_modes_as_decorators():
    x = graft.ones(1, requires_grad=True)

    @graft.no_grad()
    def doubled(t):
        return t * 2

    @graft.enable_grad()
    def tripled(t):
        return t * 3

    assert not doubled(x).requires_grad
    with graft.no_grad():
        assert tripled(x).requires_grad
    assert doubled.__name__ == "doubled"


def test_grad_mode_decorator_on_generator_applies_only_inside():
    x = graft.ones(1, requires_grad=True)

    @graft.no_grad()
    def gen():
        for _ in range(2):
            yield graft.is_grad_enabled(), (x * 2).requires_grad

    outside = []
    for inside in gen():
        outside.append(graft.is_grad_enabled())
        assert inside == (False, False)
    assert outside == [True, True]


def test_grad_mode_is_thread_local():
    seen = []
    with graft.no_grad():
        t = threading.Thread(target=lambda: seen.append(graft.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_inference_mode_errors():
    with graft.inference_mode():
        assert graft.is_inference_mode_enabled()
        t = graft.ones(2)
    assert t.is_inference() and not graft.is_inference_mode_enabled()
    with pytest.raises(RuntimeError, match=re.escape(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
            "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
            "details.")):
        t.add_(1)
    with pytest.raises(RuntimeError, match=re.escape(
            "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")):
        t.requires_grad_()
    w = graft.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal "
            "tensor and use it in autograd.")):
        w * t
    assert not t.clone().is_inference()


def test_inference_mode_decorator():
    @graft.inference_mode()
    def make():
        return graft.ones(1)

    @graft.inference_mode
    def make_bare():
        return graft.ones(1)

    assert make().is_inference() and make_bare().is_inference()


# ---- saved-tensor hooks ----

def test_saved_tensors_hooks_pack_once_unpack_every_access():
    x = graft.ones(3, requires_grad=True)
    packed, unpacked = [], []

    def pack(t):
        packed.append(t)
        return ("box", t)

    def unpack(box):
        unpacked.append(box[0])
        return box[1]

    with saved_tensors_hooks(pack, unpack):
        y = x * x  # saves self and other
        z = y.exp()  # saves its result
    assert len(packed) == 3 and unpacked == []
    assert packed[0] is x and packed[1] is x
    z.sum().backward()
    assert unpacked == ["box"] * 3
    assert x.grad.tolist() == pytest.approx([2 * 2.718281828459045] * 3)


def test_saved_tensors_hooks_on_custom_function_and_nesting():
    log = []

    class Save(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 2

    x = graft.ones(2, requires_grad=True)
    with saved_tensors_hooks(lambda t: log.append("outer pack") or t, lambda t: log.append("outer unpack") or t):
        with saved_tensors_hooks(lambda t: log.append("inner pack") or t,
                                 lambda t: log.append("inner unpack") or t):
            y = Save.apply(x)
        w = Save.apply(x)
    assert log == ["inner pack", "outer pack"]
    saved = y.grad_fn.saved_tensors[0]
    assert saved is not x and saved.tolist() == [1.0, 1.0]  # unpacked into a new tensor object
    (y.sum() + w.sum()).backward()
    # backward runs w's node (created last) first
    assert log == ["inner pack", "outer pack", "inner unpack", "outer unpack", "inner unpack"]


def test_saved_tensors_hooks_errors():
    x = graft.ones(2, requires_grad=True)

    def modifies(t):
        t.detach().add_(1)
        return t

    with saved_tensors_hooks(modifies, lambda t: t):
        with pytest.raises(RuntimeError, match=re.escape(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                "can not be modified by in-place operations as this can lead to unexpected side-effects. Please open "
                "an issue if you need to perform in-place operations on the input to a pack hook.")):
            (x * 1).exp()
    with saved_tensors_hooks(lambda t: 3, lambda box: box):
        y = x.exp()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got result "
                                        "of type int"):
        y.sum().backward()


def test_disable_saved_tensors_hooks():
    x = graft.ones(2, requires_grad=True)
    calls = []
    with saved_tensors_hooks(lambda t: calls.append(1) or t.detach(), lambda t: t):
        with disable_saved_tensors_hooks("saved tensors default hooks are disabled"):
            with pytest.raises(RuntimeError, match="saved tensors default hooks are disabled"):
                with save_on_cpu():
                    pass
            x.exp()  # hooks entered before keep working
    assert calls == [1]
    with save_on_cpu():  # enabled again
        y = x.exp()
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx([2.718281828459045] * 2)
    with pytest.raises(NotImplementedError, match="pin_memory=True is not supported"):
        save_on_cpu(pin_memory=True)


# ---- gradcheck ----

class _WrongBackward(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


class _FirstOrderOnly(Function):
    """Right first derivative (3x^2), but computed from a detached x: no second derivative."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        x = x.detach()
        return grad * 3 * x * x


def test_gradcheck_passes():
    x = _f64([0.3, -1.2, 2.0])
    y = _f64([1.5, 0.5, -0.7])
    assert graft.autograd.gradcheck(lambda a, b: (a * b).sin(), (x, y))
    assert graft.autograd.gradcheck(lambda a: a.exp().sum(), x)  # one tensor, not a tuple
    assert graft.autograd.gradcheck(lambda a, k: a * k, (x, 3.0))  # non-tensor passed through
    assert graft.autograd.gradcheck(lambda a, b: (a + b, a * b), [x, y], fast_mode=True)
    assert graft.autograd.gradgradcheck(lambda a, b: (a * b * b).sum(), (x, y))


def test_gradcheck_failure_message():
    x = _f64([1.0, 2.0])
    with pytest.raises(GradcheckError, match=re.escape(
            "Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")) as info:
        graft.autograd.gradcheck(_WrongBackward.apply, (x,))
    assert isinstance(info.value, RuntimeError)
    assert "\nanalytical:" in str(info.value)
    assert graft.autograd.gradcheck(_WrongBackward.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        graft.autograd.gradcheck(_WrongBackward.apply, (x,), fast_mode=True)
    assert graft.autograd.gradcheck.GradcheckError is GradcheckError


def test_gradgradcheck_failure():
    x = _f64([1.0, 2.0])
    assert graft.autograd.gradcheck(_FirstOrderOnly.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        graft.autograd.gradgradcheck(_FirstOrderOnly.apply, (x,))
    assert graft.autograd.gradgradcheck(_FirstOrderOnly.apply, (x,), raise_exception=False) is False
    assert graft.autograd.gradgradcheck(lambda a: a * a * a, (x,), (_f64([1.0, -1.0]),))


def test_gradcheck_nondeterministic_backward():
    calls = [0]

    class Noisy(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            calls[0] += 1
            return grad * (2 + 1e-7 * calls[0])

    x = _f64([1.0])
    with pytest.raises(GradcheckError, match=re.escape(
            "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times gives "
            "different values, although analytical gradient matches numerical gradient.The tolerance for "
            "nondeterminism was 0.0.")):
        graft.autograd.gradcheck(Noisy.apply, (x,))
    assert graft.autograd.gradcheck(Noisy.apply, (x,), nondet_tol=1e-3)


def test_gradcheck_float32_warning_and_input_errors():
    with pytest.warns(UserWarning, match=re.escape(
            "Input #0 requires gradient and is not a double precision floating point or complex. This check will "
            "likely fail if all the inputs are not of double precision floating point or complex. ")):
        graft.autograd.gradcheck(lambda a: a * 2, (graft.ones(2, requires_grad=True),), raise_exception=False)
    with pytest.raises(ValueError, match=re.escape(
            "gradcheck expects at least one input tensor to require gradient, but none of the them have "
            "requires_grad=True.")):
        graft.autograd.gradcheck(lambda a: a * 2, (_f64([1.0], requires_grad=False),))
    with pytest.raises(NotImplementedError, match="check_forward_ad=True is not supported"):
        graft.autograd.gradcheck(lambda a: a * 2, (_f64([1.0]),), check_forward_ad=True)


def test_gradcheck_errors_of_the_function_are_not_gradcheck_errors():
    def fails(a):
        raise IndexError("inside the function")

    with pytest.raises(IndexError, match="inside the function"):
        graft.autograd.gradcheck(fails, (_f64([1.0]),), raise_exception=False)


def test_saved_tensors_hooks_are_per_thread():
    x = graft.ones(2, requires_grad=True)
    packed = []
    results = {}

    def other_thread():
        results["y"] = (x * x).sum()  # the main thread's hooks do not apply here

    with saved_tensors_hooks(lambda t: packed.append(1) or t.detach(), lambda t: t):
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        y = x.exp().sum()
    assert packed == [1]
    (results.pop("y") + y).backward()
    assert x.grad.tolist() == pytest.approx([2 + 2.718281828459045] * 2)


def test_hook_returning_a_non_tensor_is_a_type_error():
    x = graft.ones(2, requires_grad=True)
    x.register_hook(lambda g: 3)
    with pytest.raises(TypeError, match=re.escape("expected Variable, but hook returned 'int'")):
        (x * 2).sum().backward()
