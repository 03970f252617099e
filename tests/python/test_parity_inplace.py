"""In-place ops write in place: PyTorch's nodes and saved tensors for every in-place form, its
version-counter errors exactly where it raises them, no buffer of self's size beyond what
PyTorch's own allocation pattern has (a clone of self where the node reads self's old value),
and the random fills and nn.init drawing into their tensor."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
from graft import nn  # noqa: E402
import graft.nn.functional as F  # noqa: E402

CPU = graft.device("cpu")


def _functional(lib):
    return lib.nn.functional


# in-place forms, each as f(lib, y) on a y that requires grad through one op
INPLACE = {
    "exp_": lambda lib, y: y.exp_(),
    "log_": lambda lib, y: y.log_(),
    "sin_": lambda lib, y: y.sin_(),
    "tanh_": lambda lib, y: y.tanh_(),
    "sigmoid_": lambda lib, y: y.sigmoid_(),
    "relu_": lambda lib, y: y.relu_(),
    "sqrt_": lambda lib, y: y.sqrt_(),
    "abs_": lambda lib, y: y.abs_(),
    "neg_": lambda lib, y: y.neg_(),
    "floor_": lambda lib, y: y.floor_(),
    "erf_": lambda lib, y: y.erf_(),
    "reciprocal_": lambda lib, y: y.reciprocal_(),
    "leaky_relu_": lambda lib, y: _functional(lib).leaky_relu_(y, 0.1),
    "elu_": lambda lib, y: _functional(lib).elu_(y),
    "hardsigmoid": lambda lib, y: _functional(lib).hardsigmoid(y, inplace=True),
    "hardswish": lambda lib, y: _functional(lib).hardswish(y, inplace=True),
    "silu": lambda lib, y: _functional(lib).silu(y, inplace=True),
    "relu(inplace)": lambda lib, y: _functional(lib).relu(y, inplace=True),
    "clamp_": lambda lib, y: y.clamp_(0.6, 0.9),
    "clamp_(tensors)": lambda lib, y: y.clamp_(lib.full((4,), 0.6, dtype=lib.float64), lib.full((4,), 0.9, dtype=lib.float64)),
    "pow_": lambda lib, y: y.pow_(2),
    "pow_(tensor)": lambda lib, y: y.pow_(lib.full((4,), 1.5, dtype=lib.float64)),
    "square_": lambda lib, y: y.square_(),
    "mul_(number)": lambda lib, y: y.mul_(2.0),
    "mul_(tensor)": lambda lib, y: y.mul_(lib.arange(4, dtype=lib.float64)),
    "div_": lambda lib, y: y.div_(lib.arange(1, 5, dtype=lib.float64)),
    "add_": lambda lib, y: y.add_(lib.ones(4, dtype=lib.float64), alpha=3),
    "sub_": lambda lib, y: y.sub_(1.5),
    "masked_fill_": lambda lib, y: y.masked_fill_(lib.tensor([True, False, True, False]), 2.0),
    "index_put_": lambda lib, y: y.index_put_((lib.tensor([1, 2]),), lib.tensor([5.0, 6.0], dtype=lib.float64)),
    "uniform_": lambda lib, y: y.uniform_(),
    "normal_": lambda lib, y: y.normal_(),
    "bernoulli_": lambda lib, y: y.bernoulli_(0.5),
    "random_(from, to)": lambda lib, y: y.random_(1, 5),
    "random_(to)": lambda lib, y: y.random_(5),
    "random_()": lambda lib, y: y.random_(),
    "exponential_": lambda lib, y: y.exponential_(),
    "geometric_": lambda lib, y: y.geometric_(0.5),
    "log_normal_": lambda lib, y: y.log_normal_(),
    "cauchy_": lambda lib, y: y.cauchy_(),
}
RANDOM = {"uniform_", "normal_", "bernoulli_", "random_(from, to)", "random_(to)", "random_()", "exponential_",
          "geometric_", "log_normal_", "cauchy_"}
X = np.array([0.3, 0.7, 1.2, 0.55])


def _run(lib, name):
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    y = x * 1
    out = INPLACE[name](lib, y)
    assert out is y  # the same Python object, as PyTorch's in-place methods return
    (y * lib.arange(1, 5, dtype=lib.float64)).sum().backward()
    return y.grad_fn, x.grad, y


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_forms_record_pytorchs_node_and_gradient(name):
    t_fn, t_grad, t_y = _run(torch, name)
    g_fn, g_grad, g_y = _run(graft, name)
    assert g_fn.name() == t_fn.name()
    # (PyTorch's hardsigmoid backward multiplies by a float32 1/6: 3e-8 relative)
    np.testing.assert_allclose(g_grad.numpy(), t_grad.numpy(), rtol=1e-7, atol=1e-12)
    if name not in RANDOM:
        np.testing.assert_allclose(g_y.detach().numpy(), t_y.detach().numpy(), rtol=1e-12)


def _version_cases(lib):
    """Programs whose backward PyTorch refuses, or allows, because a tensor a node saved was
    written in place afterwards (or, for y.mul_(y), by the op itself)."""
    F_ = _functional(lib)

    def case(first, second=None):
        def run():
            x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
            y = x * 1
            first(y)
            if second:
                second(y)
            y.sum().backward()
            return x.grad
        return run
    return [
        case(lambda y: y.tanh_(), lambda y: y.add_(1)),  # TanhBackward0 saved its result: y
        case(lambda y: y.sigmoid_(), lambda y: y.mul_(2)),
        case(lambda y: y.relu_(), lambda y: y.mul_(2)),
        case(lambda y: y.exp_(), lambda y: y.sub_(1)),
        case(lambda y: F_.leaky_relu_(y, 0.1), lambda y: y.add_(1)),
        case(lambda y: y.mul_(y)),  # MulBackward0 saved y as other, then wrote it
        case(lambda y: y.clamp_(0.5, 0.9), lambda y: y.mul_(2)),  # saved a clone of y: allowed
        case(lambda y: y.sin_(), lambda y: y.mul_(2)),
        case(lambda y: y.pow_(2), lambda y: y.add_(1)),
        case(lambda y: y.add_(1), lambda y: y.mul_(3)),  # AddBackward0 saves nothing
        case(lambda y: y.sqrt_(), lambda y: y[1:].add_(1)),  # a write through a view of y
        case(lambda y: y[:2].tanh_(), lambda y: y.add_(1)),  # the view's result is y's memory
    ]


def test_the_version_error_fires_exactly_where_pytorchs_does():
    for i, (t_run, g_run) in enumerate(zip(_version_cases(torch), _version_cases(graft))):
        outcomes = []
        for run in (t_run, g_run):
            try:
                outcomes.append(("ok", run().numpy().round(12).tolist()))
            except RuntimeError as e:
                outcomes.append(("error", str(e).split(":")[0]))
        assert outcomes[0] == outcomes[1], (i, outcomes)


def test_overlapping_operands_are_refused_as_pytorch_refuses_them():
    def cases(lib):
        return [
            lambda: lib.arange(5.0)[1:].add_(lib.arange(5.0)),  # separate storages: fine
            lambda: (lambda x: x[1:].add_(x[:-1]))(lib.arange(5.0)),  # partial overlap
            lambda: (lambda x: x.add_(x.t()))(lib.ones(3, 3)),
            lambda: (lambda x: x.add_(x[0]))(lib.ones(3, 3)),
            lambda: (lambda x: x[1].add_(x[0]))(lib.ones(3, 3)),  # disjoint rows: fine
            lambda: (lambda x: x.mul_(x))(lib.ones(4)),  # the same elements: fine
            lambda: (lambda x: x.index_put_((lib.tensor([0, 1]),), x[2:4]))(lib.arange(6.0)),
            lambda: lib.zeros(3).expand(2, 3).tanh_(),
            lambda: lib.zeros(3).add_(lib.ones(2, 3)),
            lambda: lib.zeros(3, dtype=lib.int64).add_(1.5),
            lambda: lib.zeros(3, dtype=lib.int64).tanh_(),
            lambda: lib.zeros(3).masked_fill_(lib.ones(2, 3, dtype=lib.bool), 1.0),
            lambda: lib.zeros(3, dtype=lib.float32).add_(lib.ones(3, dtype=lib.float64)),  # cast back: fine
        ]
    for i, (t_case, g_case) in enumerate(zip(cases(torch), cases(graft))):
        outcomes = []
        for run in (t_case, g_case):
            try:
                outcomes.append(("ok", run().tolist()))
            except RuntimeError as e:
                outcomes.append(("error", str(e)))
        assert outcomes[0] == outcomes[1], (i, outcomes)


def _extra_bytes_pytorch_keeps(fn, y):
    """What PyTorch's node keeps of self beyond self itself: a clone (original_self) where its
    formula reads self's old value; the result (self) costs nothing."""
    extra = 0
    for attr in dir(fn):
        if attr.startswith("_saved_"):
            v = getattr(fn, attr)
            if isinstance(v, torch.Tensor) and v.numel() == y.numel() and v.data_ptr() != y.data_ptr():
                extra += v.numel() * v.element_size()
    return extra


MEMORY_OPS = {
    "relu_": lambda lib, y: y.relu_(),
    "tanh_": lambda lib, y: y.tanh_(),
    "sigmoid_": lambda lib, y: y.sigmoid_(),
    "clamp_": lambda lib, y: y.clamp_(-0.5, 0.5),
    "pow_": lambda lib, y: y.pow_(2),
    "mul_": lambda lib, y: y.mul_(3.0),
    "leaky_relu_": lambda lib, y: _functional(lib).leaky_relu_(y, 0.2),
}
N = 1 << 20  # 4 MiB of float32


@pytest.mark.parametrize("name", sorted(MEMORY_OPS))
def test_inplace_peaks_as_pytorchs_allocation_pattern(name):
    # under no_grad: nothing beyond self
    y = graft.randn(N)
    graft.cpu.memory.reset_peak_memory_stats()
    before = graft.cpu.memory.memory_allocated()
    with graft.no_grad():
        MEMORY_OPS[name](graft, y)
    assert graft.cpu.memory.max_memory_allocated() - before < 4096
    assert graft.cpu.memory.memory_allocated() == before
    # recorded: what PyTorch's node keeps (a clone of self where its formula reads self)
    tx = torch.randn(N, requires_grad=True)
    ty = tx * 1
    MEMORY_OPS[name](torch, ty)
    expected = _extra_bytes_pytorch_keeps(ty.grad_fn, ty)
    x = graft.randn(N, requires_grad=True)
    y = x * 1
    graft.cpu.memory.reset_peak_memory_stats()
    before = graft.cpu.memory.memory_allocated()
    MEMORY_OPS[name](graft, y)
    kept = graft.cpu.memory.memory_allocated() - before
    peak = graft.cpu.memory.max_memory_allocated() - before
    assert expected - 4096 < kept < expected + 4096, (kept, expected)
    assert peak < expected + 4096, (peak, expected)
    y.sum().backward()


def test_random_fills_draw_in_place_reproducibly_and_in_logical_order():
    t = graft.empty(4, 6).t()  # a strided self gets the draws a contiguous one would, in order
    graft.manual_seed(7)
    graft.cpu.memory.reset_peak_memory_stats()
    before = graft.cpu.memory.memory_allocated()
    t.uniform_(-2, 3)
    assert graft.cpu.memory.max_memory_allocated() == before
    graft.manual_seed(7)
    c = graft.empty(6, 4).uniform_(-2, 3)
    assert graft.equal(t.contiguous(), c)
    graft.manual_seed(7)
    drawn = graft.rand(6, 4)  # rand is uniform_(0, 1) on a new tensor: the same draws
    graft.manual_seed(7)
    assert graft.equal(graft.empty(6, 4).uniform_(), drawn)
    big = graft.empty(100000)
    assert abs(float(big.uniform_().mean()) - 0.5) < 0.01
    assert abs(float(big.normal_(2, 3).mean()) - 2) < 0.05 and abs(float(big.std()) - 3) < 0.05
    assert abs(float(big.bernoulli_(0.25).mean()) - 0.25) < 0.01
    assert abs(float(big.exponential_(4).mean()) - 0.25) < 0.01
    assert abs(float(big.geometric_(0.5).mean()) - 2) < 0.05 and float(big.min()) >= 1
    ints = graft.empty(10000, dtype=graft.int64).random_(3, 7)
    assert set(ints.unique().tolist()) == {3, 4, 5, 6} if hasattr(ints, "unique") else int(ints.min()) == 3
    assert float(graft.empty(1000).random_().min()) >= 0
    assert graft.empty(1000, dtype=graft.bool).random_().dtype == graft.bool


def test_random_fill_errors_match_pytorch():
    def cases(lib):
        return [
            lambda: lib.zeros(3, dtype=lib.int64).uniform_(),
            lambda: lib.zeros(3).uniform_(2, 1),
            lambda: lib.zeros(3).normal_(0, -1),
            lambda: lib.zeros(3, dtype=lib.int64).normal_(),
            lambda: lib.zeros(3).bernoulli_(1.5),
            lambda: lib.zeros(3).bernoulli_(float("nan")),
            lambda: lib.zeros(3).random_(5, 1),
            lambda: lib.zeros(3, dtype=lib.int32).random_(0, 2 ** 40),
            lambda: lib.zeros(3).exponential_(-1),
            lambda: lib.zeros(3, dtype=lib.int64).exponential_(),
            lambda: lib.zeros(3).geometric_(1.5),
            lambda: lib.zeros(3).log_normal_(1, 0),
            lambda: lib.zeros(3, dtype=lib.int64).log_normal_(),
            lambda: lib.zeros(3, dtype=lib.int64).cauchy_(),
            lambda: lib.zeros(3).expand(2, 3).uniform_(),
            lambda: lib.zeros(3, requires_grad=True).normal_(),
        ]
    for i, (t_case, g_case) in enumerate(zip(cases(torch), cases(graft))):
        outcomes = []
        for run in (t_case, g_case):
            try:
                run()
                outcomes.append("ok")
            except RuntimeError as e:
                outcomes.append(str(e))
        assert outcomes[0] == outcomes[1], (i, outcomes)


def test_nn_init_and_linear_peak_at_their_parameters():
    graft.cpu.memory.reset_peak_memory_stats()
    before = graft.cpu.memory.memory_allocated()
    layer = nn.Linear(2048, 2048)
    params = sum(p.numel() * p.element_size() for p in layer.parameters())
    assert graft.cpu.memory.max_memory_allocated() - before == params
    w = graft.empty(512, 256)
    for init in (lambda: nn.init.kaiming_uniform_(w, a=5 ** 0.5), lambda: nn.init.xavier_normal_(w),
                 lambda: nn.init.trunc_normal_(w, std=0.02), lambda: nn.init.eye_(w)):
        graft.cpu.memory.reset_peak_memory_stats()
        start = graft.cpu.memory.memory_allocated()
        init()
        assert graft.cpu.memory.max_memory_allocated() == start
    assert float(w.sum()) == 256.0 and float(w[3, 3]) == 1.0
    nn.init.trunc_normal_(w, std=1.0, a=-0.5, b=0.5)
    assert float(w.abs().max()) <= 0.5
    del layer


def test_linear_builds_under_a_cap_just_above_its_parameters():
    # the cap is on reserved memory: what is reserved now, the 64 MiB weight, and one 2 MiB
    # block of the small pool for the bias, with 1 MiB to spare (drawing in float64 and scaling
    # out of place, as graft's initialisers once did, needed 192 MiB more)
    graft.cpu.memory.empty_cache()
    total = graft.cpu.memory.mem_get_info()[1]
    need = graft.cpu.memory.memory_reserved() + 4096 * 4096 * 4 + (3 << 20)
    graft.cpu.memory.set_per_process_memory_fraction(need / total)
    try:
        layer = nn.Linear(4096, 4096)
    finally:
        graft.cpu.memory.set_per_process_memory_fraction(1.0)
    assert layer.weight.shape == (4096, 4096) and float(layer.weight.abs().max()) <= 1 / 64


def _vgg_like(inplace):
    """A small CNN with VGG's classifier head, whose ReLU(inplace=True) follows a wide Linear
    (without bias: graft's Linear adds its bias out of place, a second buffer of the activation's
    size that would hide the ReLU's; PyTorch's addmm writes one)."""
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=inplace), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 4 * 4, 8192, bias=False), nn.ReLU(inplace=inplace), nn.Linear(8192, 10))


BATCH = 256
ACTIVATION = BATCH * 8192 * 4  # the head's activation, float32
HEAD_INPUT = BATCH * 8 * 4 * 4 * 4  # the flattened features the head's Linear reads


def _forward(model, x):
    with graft.no_grad():
        model(x)


def _train_step(model, x, y):
    F.cross_entropy(model(x), y).backward()


def _measured(step, inplace, training):
    """The step's allocated peak on the CPU and as the meta estimate predicts it, and (training)
    the peak of its forward pass alone."""
    base = graft.cpu.memory.memory_allocated()
    graft.manual_seed(0)
    model = _vgg_like(inplace).train(training)
    x, y = graft.randn(BATCH, 3, 8, 8), graft.randint(0, 10, (BATCH,))
    graft.cpu.memory.reset_peak_memory_stats()
    with graft.no_grad() if not training else graft.enable_grad():
        out = model(x)
    forward_peak = graft.cpu.memory.max_memory_allocated() - base
    del out
    graft.cpu.memory.reset_peak_memory_stats()
    step(model, x, y) if training else step(model, x)
    real = graft.cpu.memory.max_memory_allocated() - base
    for p in model.parameters():
        p.grad = None
    meta_base = graft._C._memory_allocated("meta")
    with graft.device("meta"):
        graft.manual_seed(0)
        mmodel = _vgg_like(inplace).train(training)
        mx, my = graft.randn(BATCH, 3, 8, 8), graft.randint(0, 10, (BATCH,))
    est = graft.utils.memory.estimate(step, mmodel, mx, my) if training else graft.utils.memory.estimate(step, mmodel, mx)
    assert est.peak_allocated - meta_base == real  # the estimate sees the in-place writes too
    return real, forward_peak


def test_inplace_relu_lowers_a_cnn_forwards_peak_by_an_activation():
    # without the ReLU's second buffer the peak moves to the wide Linear, whose input (the
    # flattened features, HEAD_INPUT bytes) is still alive there
    inference = [_measured(_forward, inplace, training=False)[0] for inplace in (False, True)]
    assert inference[0] - inference[1] == ACTIVATION - HEAD_INPUT
    (step_out, forward_out), (step_in, forward_in) = [_measured(_train_step, inplace, training=True)
                                                      for inplace in (False, True)]
    # a training step's forward holds one activation less at the head's ReLU; the step as a
    # whole peaks in backward here (ReLU's gradient and the weights' gradients), as PyTorch's does
    # (its new peak is at the head's Linear or at the loss, where a little more is alive)
    assert ACTIVATION - HEAD_INPUT <= forward_out - forward_in < ACTIVATION
    assert step_in <= step_out
