"""Tests of graft.amp.GradScaler and its deprecated spellings graft.cuda.amp / graft.cpu.amp.

The reference is PyTorch: torch 1.13 (installed here) for the disabled scaler and its warning, and
for the arithmetic, replayed by hand on CPU tensors because 1.13's scaler and its kernels refuse
CPU tensors (the schedule is the one PyTorch 2.x's CPU scaler runs).
"""
import pickle
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the reference: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402

FIX = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
CUDA_WARNING = "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."
CUDA_ALIAS_WARNING = ("`torch.cuda.amp.GradScaler(args...)` is deprecated. "
                      "Please use `torch.amp.GradScaler('cuda', args...)` instead.")
CPU_ALIAS_WARNING = ("`torch.cpu.amp.GradScaler(args...)` is deprecated. "
                     "Please use `torch.amp.GradScaler('cpu', args...)` instead.")
NEW_SCALE_REASON = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                    "torch.FloatTensor with requires_grad=False.")
X = np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75], [-2.0, 1.0, 0.125], [0.3, 0.7, -1.1]], dtype=np.float32)
W = np.array([[0.2, -0.4, 0.6], [-0.1, 0.3, -0.5]], dtype=np.float32)
B = np.array([0.05, -0.15], dtype=np.float32)


def exact(text):
    """A pytest ``match`` pattern that matches ``text`` literally and completely."""
    return "^" + re.escape(text) + "$"


def cpu_scaler(**kwargs):
    """An enabled graft scaler that really scales on the CPU."""
    return graft.amp.GradScaler("cpu", **kwargs)


def graft_model(lr=0.1):
    model = graft.nn.Linear(3, 2)
    with graft.no_grad():
        model.weight.copy_(graft.tensor(W))
        model.bias.copy_(graft.tensor(B))
    return model, graft.optim.SGD(model.parameters(), lr=lr)


def torch_model(lr=0.1):
    model = torch.nn.Linear(3, 2)
    with torch.no_grad():
        model.weight.copy_(torch.tensor(W))
        model.bias.copy_(torch.tensor(B))
    return model, torch.optim.SGD(model.parameters(), lr=lr)


def scaled_backward(scaler, model, opt, poison=False):
    """One forward/backward of the graft model through ``scaler``; ``poison`` makes the grads inf/nan."""
    opt.zero_grad()
    loss = model(graft.tensor(X)).pow(2).sum()
    if poison:
        loss = loss * float("inf")
    scaler.scale(loss).backward()


def torch_replay(steps, poisoned, init_scale, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    """PyTorch's CPU grad-scaling schedule replayed by hand with torch 1.13 tensors.

    Returns the weights after every step and the (scale, growth tracker) after every update.
    """
    model, opt = torch_model()
    scale = torch.full((), init_scale, dtype=torch.float32)
    tracker = 0
    weights, schedule = [], []
    for step in range(steps):
        opt.zero_grad()
        loss = model(torch.tensor(X)).pow(2).sum()
        if step in poisoned:
            loss = loss * float("inf")
        (loss * scale).backward()
        inv_scale = scale.double().reciprocal().float()
        found_inf = False
        with torch.no_grad():
            for p in model.parameters():
                found_inf |= not bool(torch.isfinite(p.grad).all())
                p.grad.mul_(inv_scale)
        if not found_inf:
            opt.step()
        if found_inf:
            scale, tracker = (scale.double() * backoff_factor).float(), 0
        elif tracker + 1 == growth_interval:
            grown = (scale.double() * growth_factor).float()
            scale, tracker = (grown if bool(torch.isfinite(grown)) else scale), 0
        else:
            tracker += 1
        weights.append(model.weight.detach().numpy().copy())
        schedule.append((scale.item(), tracker))
    return weights, schedule


def test_training_loop_skips_the_inf_step_and_backs_off():
    model, opt = graft_model()
    scaler = cpu_scaler(init_scale=1024.0, growth_interval=3)
    poisoned = {2}
    ref_weights, ref_schedule = torch_replay(6, poisoned, 1024.0, growth_interval=3)
    schedule = []
    for step in range(6):
        scaled_backward(scaler, model, opt, poison=step in poisoned)
        before = model.weight.detach().numpy().copy()
        scaler.step(opt)
        scaler.update()
        after = model.weight.detach().numpy()
        if step in poisoned:
            np.testing.assert_array_equal(after, before)
        else:
            assert not np.array_equal(after, before)
        np.testing.assert_allclose(after, ref_weights[step], rtol=1e-6, atol=1e-7)
        schedule.append((scaler.get_scale(), scaler._get_growth_tracker()))
    assert schedule == ref_schedule
    assert schedule == [(1024.0, 1), (1024.0, 2), (512.0, 0), (512.0, 1), (512.0, 2), (1024.0, 0)]


def test_scaled_loss_is_loss_times_scale():
    scaler = cpu_scaler(init_scale=3.0)
    loss = graft.tensor([1.5, -2.25, 7.0])
    np.testing.assert_array_equal(scaler.scale(loss).numpy(), (torch.tensor([1.5, -2.25, 7.0]) * 3.0).numpy())
    assert scaler._scale.dtype == graft.float32 and tuple(scaler._scale.shape) == ()
    assert scaler._growth_tracker.dtype == graft.int32 and tuple(scaler._growth_tracker.shape) == ()
    assert scaler._scale.device.type == "cpu"


def test_unscale_multiplies_by_the_float32_reciprocal_formed_in_float64():
    values = [0.1, 0.7, 1.3, 2.9, 5.5, 7.7, 1.0, 10.0]
    ref = torch.tensor(values) * torch.tensor(3.0).double().reciprocal().float()
    assert not torch.equal(ref, torch.tensor(values) / 3.0)  # the test tells the two apart
    param = graft.nn.Parameter(graft.zeros(len(values)))
    opt = graft.optim.SGD([param], lr=1.0)
    scaler = cpu_scaler(init_scale=3.0)
    scaler.scale(param.sum()).backward()
    param.grad.copy_(graft.tensor(values))
    scaler.unscale_(opt)
    np.testing.assert_array_equal(param.grad.numpy(), ref.numpy())
    found = scaler._found_inf_per_device(opt)
    assert list(found) == [param.device] and found[param.device].item() == 0.0
    assert found[param.device].dtype == graft.float32


def test_unscale_records_inf_and_nan():
    for bad in (float("inf"), float("-inf"), float("nan")):
        param = graft.nn.Parameter(graft.zeros(2))
        opt = graft.optim.SGD([param], lr=1.0)
        scaler = cpu_scaler(init_scale=4.0)
        scaler.scale(param.sum()).backward()
        param.grad.copy_(graft.tensor([8.0, bad]))
        scaler.unscale_(opt)
        assert scaler._found_inf_per_device(opt)[param.device].item() == 1.0
        assert param.grad[0].item() == 2.0  # still unscaled, as PyTorch's kernel does
        assert scaler.step(opt) is None
        np.testing.assert_array_equal(param.detach().numpy(), [0.0, 0.0])
        scaler.update()
        assert scaler.get_scale() == 2.0


def test_growth_after_growth_interval_clean_steps():
    model, opt = graft_model(lr=0.0)
    scaler = cpu_scaler(init_scale=8.0, growth_factor=3.0, growth_interval=3)
    seen = []
    for _ in range(7):
        scaled_backward(scaler, model, opt)
        scaler.step(opt)
        scaler.update()
        seen.append((scaler.get_scale(), scaler._get_growth_tracker()))
    assert seen == [(8.0, 1), (8.0, 2), (24.0, 0), (24.0, 1), (24.0, 2), (72.0, 0), (72.0, 1)]


def test_growth_that_overflows_float32_keeps_the_scale():
    param = graft.nn.Parameter(graft.tensor([1.0]))
    opt = graft.optim.SGD([param], lr=0.0)
    scaler = cpu_scaler(init_scale=2.0**127, growth_interval=1)
    scaler.scale(param.sum()).backward()  # grad 2**127: finite
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2.0**127 and scaler._get_growth_tracker() == 0


def test_backoff_rounds_a_float64_product_to_float32():
    ref = (torch.tensor(3.0).double() * 0.3).float().item()
    assert ref != (torch.tensor(3.0) * torch.tensor(0.3)).item()  # the test tells the two apart
    model, opt = graft_model()
    scaler = cpu_scaler(init_scale=3.0, backoff_factor=0.3)
    scaled_backward(scaler, model, opt, poison=True)
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == ref


def test_several_optimizers_share_one_scale():
    model_a, opt_a = graft_model()
    model_b, opt_b = graft_model()
    scaler = cpu_scaler(init_scale=16.0)
    scaled_backward(scaler, model_a, opt_a)
    scaled_backward(scaler, model_b, opt_b, poison=True)
    before_a, before_b = model_a.weight.detach().numpy().copy(), model_b.weight.detach().numpy().copy()
    scaler.step(opt_a)
    scaler.step(opt_b)
    assert not np.array_equal(model_a.weight.detach().numpy(), before_a)
    np.testing.assert_array_equal(model_b.weight.detach().numpy(), before_b)
    scaler.update()
    assert scaler.get_scale() == 8.0 and scaler._get_growth_tracker() == 0


def test_unscale_before_step_unscales_once():
    model, opt = graft_model(lr=0.5)
    scaler = cpu_scaler(init_scale=64.0)
    scaled_backward(scaler, model, opt)
    scaler.unscale_(opt)
    grads = model.weight.grad.numpy().copy()
    scaler.step(opt)
    np.testing.assert_allclose(model.weight.detach().numpy(), W - 0.5 * grads, rtol=1e-6)
    ref_model, ref_opt = torch_model()
    ref_model(torch.tensor(X)).pow(2).sum().backward()
    np.testing.assert_allclose(grads, ref_model.weight.grad.numpy(), rtol=1e-6)


def test_step_returns_the_optimizer_result_and_passes_positional_closure():
    model, opt = graft_model()
    scaler = cpu_scaler()

    def closure():
        return "closure result"

    scaled_backward(scaler, model, opt)
    assert scaler.step(opt, closure) == "closure result"
    scaler.update()
    scaled_backward(scaler, model, opt)
    with pytest.raises(RuntimeError, match=exact("Closure use is not currently supported if GradScaler is enabled.")):
        scaler.step(opt, closure=closure)


def test_stage_errors():
    model, opt = graft_model()
    scaler = cpu_scaler()
    scaled_backward(scaler, model, opt)
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match=exact(
            "unscale_() has already been called on this optimizer since the last update().")):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match=exact("unscale_() is being called after step().")):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match=exact("step() has already been called since the last update().")):
        scaler.step(opt)
    scaler.update()
    scaled_backward(scaler, model, opt)
    scaler.unscale_(opt)  # update() made every optimizer READY again
    scaler.step(opt)


@pytest.mark.parametrize("call", ["unscale_", "step", "update"])
def test_calls_before_scale_are_refused(call):
    model, opt = graft_model()
    scaler = cpu_scaler()
    args = () if call == "update" else (opt,)
    with pytest.raises(AssertionError, match=exact(f"Attempted {call} but _scale is None.  " + FIX)):
        getattr(scaler, call)(*args)


def test_missing_inf_checks():
    model, opt = graft_model()
    scaler = cpu_scaler()
    scaler.scale(graft.tensor(1.0))
    with pytest.raises(AssertionError, match=exact("No inf checks were recorded prior to update.")):
        scaler.update()
    with pytest.raises(AssertionError, match=exact("No inf checks were recorded for this optimizer.")):
        scaler.step(opt)  # no parameter has a gradient


def test_factor_checks():
    with pytest.raises(AssertionError, match=exact("The growth factor must be > 1.0.")):
        cpu_scaler(growth_factor=1.0)
    with pytest.raises(AssertionError, match=exact("The backoff factor must be < 1.0.")):
        cpu_scaler(backoff_factor=1.0)
    graft.amp.GradScaler("cpu", growth_factor=1.0, enabled=False)  # not checked when disabled


def test_update_with_new_scale():
    scaler = cpu_scaler()
    scaler.scale(graft.tensor(1.0))
    scaler.update(128.0)
    assert scaler.get_scale() == 128.0
    scaler.update(graft.tensor(0.25))
    assert scaler.get_scale() == 0.25
    with pytest.raises(RuntimeError):
        torch.zeros(()).copy_(torch.tensor([0.5]))  # PyTorch's 0-d scale refuses a shape-[1] source too
    with pytest.raises(RuntimeError):
        scaler.update(graft.tensor([0.5]))
    for bad in (graft.tensor([1.0, 2.0]), graft.tensor(3.0, requires_grad=True)):
        with pytest.raises(AssertionError, match=exact(NEW_SCALE_REASON)):
            scaler.update(bad)
    with pytest.raises(AttributeError):
        scaler.update(2)  # only a Python float or a tensor is accepted
    assert scaler.get_scale() == 0.25


def test_update_resets_the_optimizer_states():
    model, opt = graft_model()
    scaler = cpu_scaler()
    scaled_backward(scaler, model, opt)
    scaler.step(opt)
    assert len(scaler._per_optimizer_states) == 1
    scaler.update(4.0)
    assert len(scaler._per_optimizer_states) == 0


def test_factor_and_interval_accessors():
    scaler = cpu_scaler(growth_factor=3.0, backoff_factor=0.25, growth_interval=7)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor(), scaler.get_growth_interval()) == (3.0, 0.25, 7)
    scaler.set_growth_factor(4.0)
    scaler.set_backoff_factor(0.125)
    scaler.set_growth_interval(9)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor(), scaler.get_growth_interval()) == (4.0, 0.125, 9)
    assert scaler.is_enabled() and scaler.get_scale() == 2.0**16  # before the first scale(): init_scale


def test_state_dict_round_trip():
    model, opt = graft_model()
    scaler = cpu_scaler(init_scale=256.0, growth_factor=4.0, backoff_factor=0.25, growth_interval=5)
    for poison in (False, True, False, False):
        scaled_backward(scaler, model, opt, poison=poison)
        scaler.step(opt)
        scaler.update()
    state = scaler.state_dict()
    assert state == {"scale": 64.0, "growth_factor": 4.0, "backoff_factor": 0.25, "growth_interval": 5,
                     "_growth_tracker": 2}
    assert list(state) == ["scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"]
    fresh = cpu_scaler()
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state
    assert fresh.scale(graft.tensor(1.0)).item() == 64.0
    used = cpu_scaler()
    used.scale(graft.tensor(1.0))
    used.load_state_dict(state)  # tensors already made: filled in place
    assert used.state_dict() == state and used._growth_tracker.item() == 2


def test_load_state_dict_errors():
    scaler = cpu_scaler()
    with pytest.raises(RuntimeError, match=exact("The source state dict is empty, possibly because it was saved "
                                                 "from a disabled instance of GradScaler.")):
        scaler.load_state_dict(graft.amp.GradScaler("cpu", enabled=False).state_dict())
    with pytest.raises(KeyError):
        scaler.load_state_dict({"scale": 2.0})


def test_pickle():
    model, opt = graft_model()
    scaler = cpu_scaler(init_scale=32.0, growth_interval=10)
    scaled_backward(scaler, model, opt)
    scaler.step(opt)
    with pytest.raises(AssertionError, match=exact("A GradScaler instance may only be pickled at the beginning "
                                                   "of an iteration, or at the end after scaler.update().")):
        pickle.dumps(scaler)
    scaler.update()
    copy = pickle.loads(pickle.dumps(scaler))
    assert copy._scale is None and copy._growth_tracker is None
    assert copy.state_dict() == scaler.state_dict() == {
        "scale": 32.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 10, "_growth_tracker": 1}


def test_scale_maps_iterables():
    scaler = cpu_scaler(init_scale=4.0)
    a, b, c = graft.tensor([1.0, 2.0]), graft.tensor(3.0), graft.tensor([[0.5]])
    out = scaler.scale([a, (b, [c]), (t for t in (a, b))])
    assert type(out) is list and type(out[1]) is tuple and type(out[1][1]) is list
    assert isinstance(out[2], map)
    np.testing.assert_array_equal(out[0].numpy(), [4.0, 8.0])
    assert out[1][0].item() == 12.0 and out[1][1][0].numpy().tolist() == [[2.0]]
    assert [t.numpy().tolist() for t in out[2]] == [[4.0, 8.0], 12.0]
    with pytest.raises(ValueError, match=exact("outputs must be a Tensor or an iterable of Tensors")):
        scaler.scale([a, 1.0])


def test_scale_keeps_the_outputs_dtype():
    scaler = cpu_scaler(init_scale=3.0)
    out = scaler.scale(graft.tensor([0.1], dtype=graft.float64))
    ref = torch.tensor([0.1], dtype=torch.float64) * torch.full((), 3.0)
    assert out.dtype == graft.float64
    assert out.item() == ref.item()


class CountingOptimizer:
    """A stand-in optimizer that counts its steps and returns what it was called with."""

    def __init__(self, params):
        self.param_groups = [{"params": list(params)}]
        self.calls = 0

    def step(self, *args, **kwargs):
        self.calls += 1
        return args, kwargs


def disabled_behaviour(scaler):
    """What a disabled scaler does, as a comparable tuple (works for graft's and torch's)."""
    outputs = object()
    opt = CountingOptimizer([])
    return (scaler.scale(outputs) is outputs, scaler.unscale_(opt), scaler.step(opt, 1, closure="c"), opt.calls,
            scaler.update(), scaler.update(5.0), scaler.get_scale(), scaler.state_dict(),
            scaler.load_state_dict({}), scaler.is_enabled())


def test_disabled_scaler_passes_through():
    expected = (True, None, ((1,), {"closure": "c"}), 1, None, None, 1.0, {}, None, False)
    assert disabled_behaviour(graft.amp.GradScaler("cpu", enabled=False)) == expected
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # disabled by the caller: no CUDA warning
        assert disabled_behaviour(graft.amp.GradScaler(enabled=False)) == expected
        assert disabled_behaviour(torch.cuda.amp.GradScaler(enabled=False)) == expected


def test_cuda_scaler_warns_and_disables_without_cuda():
    assert not graft.cuda.is_available()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = graft.amp.GradScaler()
        reference = torch.cuda.amp.GradScaler()  # torch here has no CUDA either
    assert [(w.category, str(w.message)) for w in caught] == [(UserWarning, CUDA_WARNING)] * 2
    assert not scaler.is_enabled() and not reference.is_enabled()
    assert disabled_behaviour(scaler) == disabled_behaviour(reference)
    with pytest.warns(UserWarning, match=exact(CUDA_WARNING)):
        graft.amp.GradScaler("cuda", init_scale=8.0)


def test_deprecated_cuda_alias():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = graft.cuda.amp.GradScaler(init_scale=8.0)
    assert [(w.category, str(w.message)) for w in caught] == [(FutureWarning, CUDA_ALIAS_WARNING),
                                                              (UserWarning, CUDA_WARNING)]
    assert caught[0].filename == __file__  # attributed to the caller
    assert isinstance(scaler, graft.amp.GradScaler) and scaler._device == "cuda" and not scaler.is_enabled()
    with pytest.warns(FutureWarning, match=exact(CUDA_ALIAS_WARNING)):
        graft.cuda.amp.GradScaler(enabled=False)
    assert graft.cuda.amp.grad_scaler.GradScaler is graft.cuda.amp.GradScaler


def test_deprecated_cpu_alias():
    with pytest.warns(FutureWarning, match=exact(CPU_ALIAS_WARNING)):
        scaler = graft.cpu.amp.GradScaler(init_scale=8.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=4)
    assert isinstance(scaler, graft.amp.GradScaler) and scaler._device == "cpu" and scaler.is_enabled()
    assert scaler.state_dict() == {"scale": 8.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 4,
                                   "_growth_tracker": 0}
    assert scaler.scale(graft.tensor(2.0)).item() == 16.0


class AmpAwareOptimizer(CountingOptimizer):
    """An optimizer that handles scaling itself and reads the scaler's grad_scale / found_inf."""

    _step_supports_amp_scaling = True

    def step(self, *args, **kwargs):
        self.seen = (self.grad_scale, self.found_inf)
        return super().step(*args, **kwargs)


class LegacyAmpAwareOptimizer(CountingOptimizer):
    """An optimizer that handles scaling itself and takes the scaler as a ``grad_scaler`` keyword."""

    _step_supports_amp_scaling = True

    def step(self, grad_scaler=None):
        self.seen = grad_scaler
        return "stepped"


def test_optimizer_that_supports_amp_scaling():
    param = graft.nn.Parameter(graft.tensor([1.0, 2.0]))
    opt = AmpAwareOptimizer([param])
    scaler = cpu_scaler(init_scale=4.0)
    scaler.scale(param.sum()).backward()
    scaler.step(opt, 7)
    grad_scale, found_inf = opt.seen
    assert grad_scale is scaler._scale and found_inf.item() == 0.0
    assert not hasattr(opt, "grad_scale") and not hasattr(opt, "found_inf")
    np.testing.assert_array_equal(param.grad.numpy(), [4.0, 4.0])  # left scaled for the optimizer
    scaler.update()
    scaler.scale(param.sum()).backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    assert opt.seen[0] is None  # already unscaled
    legacy = LegacyAmpAwareOptimizer([param])
    scaler.update()
    with pytest.warns(FutureWarning, match="GradScaler is going to stop passing itself as a keyword argument"):
        assert scaler.step(legacy) == "stepped"
    assert legacy.seen is scaler


def test_subpackages_are_attributes():
    import graft.amp.grad_scaler as module

    assert graft.amp.GradScaler is module.GradScaler
    assert [s.name for s in module.OptState] == ["READY", "UNSCALED", "STEPPED"]
    assert issubclass(graft.cuda.amp.GradScaler, graft.amp.GradScaler)
    assert issubclass(graft.cpu.amp.GradScaler, graft.amp.GradScaler)
