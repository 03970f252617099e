"""The meta device from Python: tensors with sizes, strides and dtype but no data, what runs on
them (ops, autograd, modules, optimizers), what refuses with PyTorch's errors, the default
device, and graft.utils.memory.estimate against real CPU runs of the same steps."""
import copy

import pytest

import graft
import graft.nn as nn
import graft.nn.functional as F

try:
    import torch
except ImportError:  # the parity checks below need Debian's python3-torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="parity: PyTorch (python3-torch) is not installed")


def test_meta_tensors_have_metadata_and_no_data():
    x = graft.empty(2, 3, device="meta")
    assert x.device == graft.device("meta") and x.device.type == "meta"
    assert repr(x.device) == "device(type='meta')"
    assert x.shape == (2, 3) and x.stride() == (3, 1) and x.dtype == graft.float32
    assert x.data_ptr() == 0
    assert not x.is_cpu and not x.is_cuda
    assert repr(x) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(graft.zeros((), device="meta", dtype=graft.float64)) == \
        "tensor(..., device='meta', size=(), dtype=graft.float64)"
    w = graft.ones(2, device="meta", requires_grad=True)
    assert repr(w) == "tensor(..., device='meta', size=(2,), requires_grad=True)"
    assert repr(w * 2) == "tensor(..., device='meta', size=(2,), grad_fn=<MulBackward0>)"


@needs_torch
def test_printing_and_refusals_match_pytorch():
    for lib in (graft, torch):
        x = lib.empty(2, 3, device="meta")
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            x.tolist()
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            x.to("cpu")
        with pytest.raises(NotImplementedError, match=r"^Could not run 'aten::_local_scalar_dense' with arguments "
                                                      r"from the 'Meta' backend\. This could be because the operator "
                                                      r"doesn't exist for this backend"):
            x.sum().item()
        with pytest.raises(NotImplementedError, match=r"^Could not run 'aten::nonzero' with arguments from the "
                                                      r"'Meta' backend"):
            lib.nonzero(x)
        with pytest.raises(NotImplementedError, match=r"'aten::nonzero'"):
            x[x > 0]
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            lib.zeros(2, 3).copy_(x)
        assert lib.empty(2, 3, device="meta").copy_(lib.ones(2, 3)).device.type == "meta"
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            x.numpy()
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least "
                                               "two devices, meta and cpu!"):
            lib.ones(2, 3) + x
        y = x + lib.tensor(2.0)  # a 0-d CPU tensor goes with any device
        assert y.device.type == "meta"
        assert repr(lib.empty(3, device="meta", dtype=lib.float64)).replace("torch.", "graft.") == \
            "tensor(..., device='meta', size=(3,), dtype=graft.float64)"


@needs_torch
def test_output_metadata_matches_pytorch():
    def run(lib):
        x = lib.empty(4, 3, device="meta", requires_grad=True)
        w = lib.empty(5, 3, device="meta", requires_grad=True)
        y = (x @ w.t()).relu().sum(0, keepdim=True).t()
        z = lib.cat([x, x], 1).transpose(0, 1)[1:, ::2]
        loss = y.sum() + z.exp().mean()
        loss.backward()
        return [(t.shape, t.stride(), str(t.dtype).split(".")[-1], t.device.type)
                for t in (y, z, loss, x.grad, w.grad)]
    assert run(graft) == run(torch)


def test_to_meta_keeps_strides_and_modules_move():
    a = graft.randn(3, 4).t()
    m = a.to("meta")
    assert m.device.type == "meta" and m.stride() == a.stride()
    lin = nn.Linear(3, 4)
    lin.to("meta")
    assert lin.weight.device.type == "meta" and isinstance(lin.weight, nn.Parameter)
    out = lin(graft.empty(2, 3, device="meta"))
    assert out.shape == (2, 4) and out.device.type == "meta"


def test_default_device_and_the_device_context():
    assert graft.get_default_device() == graft.device("cpu")
    with graft.device("meta"):
        assert graft.get_default_device() == graft.device("meta")
        assert graft.zeros(2).device.type == "meta"
        assert graft.tensor([1.0, 2.0]).device.type == "meta"
        assert graft.zeros(2, device="cpu").device.type == "cpu"
        lin = nn.Linear(4, 2)  # parameters made without memory, init skipped
        assert lin.weight.device.type == "meta"
        assert graft.eye(3).device.type == "meta" and graft.randperm(4).device.type == "meta"
    m = graft.empty(2, device="meta")
    assert graft.zeros_like(m, device=None).device.type == "meta"
    assert graft.ones_like(m, dtype=graft.float64).device.type == "meta"
    assert graft.get_default_device() == graft.device("cpu")
    assert graft.zeros(2).device.type == "cpu"
    try:
        graft.set_default_device("meta")
        assert graft.ones(1).device.type == "meta"
    finally:
        graft.set_default_device(None)
    assert graft.ones(1).device.type == "cpu"


def test_meta_tensors_take_meta_memory_not_cpu_memory():
    cpu_before = graft._C._memory_allocated("cpu")
    meta_before = graft._C._memory_allocated("meta")
    big = graft.empty(1 << 28, device="meta")  # 1 GiB that nobody allocates
    assert graft._C._memory_allocated("meta") - meta_before == 1 << 30
    assert graft._C._memory_allocated("cpu") == cpu_before
    del big
    assert graft._C._memory_allocated("meta") == meta_before
    graft._C._empty_cache("meta")


# ---- graft.utils.memory.estimate against real CPU runs of the same step ----

class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 7 * 7, 10)
        self.drop = nn.Dropout(0.25)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.bn(self.c2(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


class _LSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.fc = nn.Linear(32, 50)

    def forward(self, x):
        h, _ = self.lstm(self.emb(x))
        return self.fc(h)


def _build(kind, optimizer):
    graft.manual_seed(0)
    if kind == "mlp":
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
        x, y = graft.randn(16, 32), graft.randint(0, 10, (16,))
    elif kind == "cnn":
        model = _CNN()
        x, y = graft.randn(8, 1, 28, 28), graft.randint(0, 10, (8,))
    else:
        model = _LSTM()
        x, y = graft.randint(0, 50, (4, 12)), graft.randint(0, 50, (4, 12))
    opt = {"sgd": lambda p: graft.optim.SGD(p, lr=0.1, momentum=0.9),
           "adam": lambda p: graft.optim.Adam(p, lr=1e-3),
           "adamw": lambda p: graft.optim.AdamW(p, lr=1e-3)}[optimizer](model.parameters())
    return model, opt, x, y


def _step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    out = model(x)
    loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()


@pytest.mark.parametrize("kind,optimizer", [("mlp", "sgd"), ("mlp", "adam"), ("cnn", "adamw"), ("lstm", "adam")])
def test_estimate_equals_the_allocated_peak_of_a_real_cpu_run(kind, optimizer):
    cpu = graft.device("cpu")
    base = graft._C._memory_allocated(cpu)
    model, opt, x, y = _build(kind, optimizer)
    graft._C._reset_peak_memory_stats(cpu)
    for _ in range(2):
        _step(model, opt, x, y)
    real_peak = graft._C._max_memory_allocated(cpu) - base
    real_after = graft._C._memory_allocated(cpu) - base

    meta_base = graft._C._memory_allocated("meta")
    with graft.device("meta"):
        mmodel, mopt, mx, my = _build(kind, optimizer)
    est = graft.utils.memory.estimate(_step, mmodel, mopt, mx, my, steps=2)
    assert real_peak > 0
    assert est.peak_allocated - meta_base == real_peak
    assert est.allocated_after - meta_base == real_after
    assert est.peak_reserved >= est.peak_allocated
    assert est.by_category["optimizer_state"] > 0 and est.by_category["parameter"] > 0
    assert graft.get_default_device() == cpu
    assert "peak allocated" in str(est) and "peak_allocated=" in repr(est)


def test_estimate_moves_tensor_arguments_and_refuses_cpu_modules():
    seen = []
    graft._C._empty_cache("meta")
    est = graft.utils.memory.estimate(lambda a: seen.append((a.device.type, (a * 2).device.type)), graft.ones(1000))
    assert seen == [("meta", "meta")]
    assert est.peak_allocated == 8192  # the argument and its double, 4000 bytes each rounded to 4096
    with pytest.raises(ValueError, match=r"estimate\(\): argument 0 is a module whose parameter '0.weight' is on "
                                         r"cpu; build it under `with graft.device\(\"meta\"\):`"):
        graft.utils.memory.estimate(lambda m: None, nn.Sequential(nn.Linear(2, 2)))
    model = copy.deepcopy(nn.Linear(2, 2))
    model.to("meta")
    graft.utils.memory.estimate(lambda m: m(graft.empty(3, 2)).sum().backward(), model)
    assert model.weight.grad.device.type == "meta"
    with pytest.raises(ValueError, match="steps must be a positive int"):
        graft.utils.memory.estimate(lambda: None, steps=0)
    with pytest.raises(TypeError, match="expects a callable"):
        graft.utils.memory.estimate(3)


def test_estimate_restores_the_default_device_when_the_step_raises():
    def step(x):
        return x.sum().item()  # a value a meta step cannot have
    with pytest.raises(NotImplementedError, match="aten::_local_scalar_dense"):
        graft.utils.memory.estimate(step, graft.ones(3))
    assert graft.get_default_device() == graft.device("cpu")


def test_estimate_sees_a_model_too_large_for_this_machine():
    # 4 x 8192 x 8192 float32 weights (1 GiB) plus their gradients and Adam's two moments:
    # measured without taking any of it
    with graft.device("meta"):
        model = nn.Sequential(*[nn.Linear(8192, 8192, bias=False) for _ in range(4)])
        opt = graft.optim.Adam(model.parameters())
        x = graft.randn(64, 8192)

    def step():
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    cpu_before = graft._C._memory_allocated("cpu")
    est = graft.utils.memory.estimate(step, steps=2)
    weights = 4 * 8192 * 8192 * 4
    assert est.peak_allocated >= 4 * weights  # weights, gradients, exp_avg, exp_avg_sq
    assert est.by_category["optimizer_state"] >= 2 * weights
    assert graft._C._memory_allocated("cpu") == cpu_before


def test_the_default_device_is_per_thread():
    # PyTorch 2.x keeps the default device in a device context of the thread
    import threading
    seen = {}

    def other():
        seen["start"] = graft.get_default_device().type
        with graft.device("meta"):
            seen["inside"] = graft.zeros(1).device.type
            barrier.wait()  # the main thread looks while this one is inside its block
            barrier.wait()
        seen["end"] = graft.get_default_device().type

    barrier = threading.Barrier(2, timeout=60)
    with graft.device("meta"):
        t = threading.Thread(target=other)
        t.start()
        barrier.wait()
        assert graft.zeros(1).device.type == "meta"
    assert graft.zeros(1).device.type == "cpu"  # the other thread is still inside its block
    barrier.wait()
    t.join(60)
    assert seen == {"start": "cpu", "inside": "meta", "end": "cpu"}


def test_the_rng_state_lives_on_the_cpu_under_a_meta_default():
    with graft.device("meta"):
        state = graft.get_rng_state()
        with graft.random.fork_rng():
            graft.randn(3)
    assert state.device.type == "cpu" and state.dtype == graft.int64
    graft.set_rng_state(state)


class _Checkpointed(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Dropout(0.1), nn.Linear(64, 64), nn.Tanh())
        self.b = nn.Linear(64, 10)

    def forward(self, x):
        from graft.utils.checkpoint import checkpoint
        return self.b(checkpoint(self.a, x, use_reentrant=False))


def _checkpointed_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    opt.step()


def test_a_checkpointed_step_estimates_to_the_byte():
    cpu = graft.device("cpu")
    base = graft._C._memory_allocated(cpu)
    graft.manual_seed(0)
    model = _Checkpointed()
    opt = graft.optim.Adam(model.parameters(), lr=1e-3)
    x, y = graft.randn(16, 32), graft.randint(0, 10, (16,))
    graft._C._reset_peak_memory_stats(cpu)
    for _ in range(2):
        _checkpointed_step(model, opt, x, y)
    real_peak = graft._C._max_memory_allocated(cpu) - base
    meta_base = graft._C._memory_allocated("meta")
    with graft.device("meta"):
        mmodel = _Checkpointed()
        mopt = graft.optim.Adam(mmodel.parameters(), lr=1e-3)
    est = graft.utils.memory.estimate(_checkpointed_step, mmodel, mopt, graft.empty(16, 32),
                                      graft.empty(16, dtype=graft.int64), steps=2)
    # checkpoint keeps the generator's state for its recomputation: on the CPU, whatever the
    # estimated device, so the real CPU run holds one more block than the estimate (its state)
    state_block = (graft.get_rng_state().numel() * 8 + 511) // 512 * 512
    assert real_peak > 0 and est.peak_allocated - meta_base == real_peak - state_block


def test_concurrent_estimates_and_training_do_not_disturb_each_other():
    import threading

    def increment(parts):
        est = graft.utils.memory.estimate(_step, *parts, steps=2)
        return est.peak_allocated - est.allocated_before  # what the two steps added at their peak

    with graft.device("meta"):
        models = [_build("mlp", "adam") for _ in range(5)]  # a fresh model (and optimizer) per estimate
    alone = increment(models[0])
    results, errors = [], []

    def estimating(parts):
        try:
            results.append(increment(parts))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def training():
        try:
            model, opt, x, y = _build("mlp", "sgd")  # this thread's default device is the cpu
            for _ in range(20):
                _step(model, opt, x, y)
                assert model[0].weight.device.type == "cpu" and graft.zeros(1).device.type == "cpu"
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=estimating, args=(m,)) for m in models[1:]]
    threads.append(threading.Thread(target=training))
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert alone > 0 and results == [alone] * 4  # each estimate ran alone on the meta allocator
