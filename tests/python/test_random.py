"""The default generator's state from Python: graft.get_rng_state / set_rng_state (an int64
tensor in graft, a uint8 ByteTensor in PyTorch), graft.random's manual_seed / seed /
initial_seed and fork_rng, with PyTorch's error types (and texts where the representation
allows). Draws after set_rng_state repeat exactly: factories, dropout masks, nn.init."""
import pytest

import graft
import graft.nn as nn
import graft.nn.functional as F


def _draws():
    return [graft.rand(4), graft.randn(2, 3, dtype=graft.float64), graft.randint(0, 1000, (5,)),
            graft.randperm(10), graft.rand_like(graft.zeros(3)),
            F.dropout(graft.ones(64), p=0.5, training=True)]


def _assert_same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert graft.equal(x, y), (x, y)


def test_state_round_trips_and_draws_repeat():
    graft.manual_seed(2024)
    graft.randn(5)  # mid-block
    state = graft.get_rng_state()
    assert state.dtype is graft.int64 and state.dim() == 1 and not state.requires_grad
    first = _draws()
    second = _draws()
    assert not graft.equal(first[0], second[0])
    graft.set_rng_state(state)
    _assert_same(first, _draws())
    _assert_same(second, _draws())
    graft.random.set_rng_state(state)
    assert graft.equal(graft.random.get_rng_state(), state)
    _assert_same(first, _draws())


def test_dropout_masks_and_init_repeat():
    layer = nn.Dropout(0.3)
    x = graft.ones(8, 16)
    state = graft.get_rng_state()
    m1 = layer(x)
    w1 = nn.init.kaiming_uniform_(graft.empty(4, 4))
    graft.set_rng_state(state)
    m2 = layer(x)
    w2 = nn.init.kaiming_uniform_(graft.empty(4, 4))
    assert graft.equal(m1, m2) and graft.equal(w1, w2)
    assert graft.equal(m1 == 0, m2 == 0) and 0 < int((m1 == 0).sum()) < 128


def test_the_state_is_a_copy():
    state = graft.get_rng_state()
    kept = state.clone()
    state[3] = 12345  # editing the tensor changes neither the generator ...
    assert graft.equal(graft.get_rng_state(), kept)
    graft.set_rng_state(kept)
    kept[4] = 1  # ... nor, after set_rng_state, the restored generator
    assert not graft.equal(graft.get_rng_state(), kept)


def test_initial_seed_and_seed():
    graft.manual_seed(7)
    assert graft.initial_seed() == 7 and graft.random.initial_seed() == 7
    state = graft.get_rng_state()
    graft.manual_seed(8)
    graft.set_rng_state(state)  # as PyTorch, the state carries the initial seed
    assert graft.initial_seed() == 7
    s = graft.seed()
    assert isinstance(s, int) and 0 <= s < 2 ** 64 and graft.initial_seed() == s
    graft.random.manual_seed(s)
    a = graft.rand(3)
    graft.random.manual_seed(s)
    assert graft.equal(a, graft.rand(3))


def test_manual_seed_range_as_pytorch():
    graft.manual_seed(-1)  # negative seeds wrap: 2**64 + seed
    assert graft.initial_seed() == 2 ** 64 - 1
    graft.manual_seed(-2 ** 63)
    assert graft.initial_seed() == 2 ** 63
    graft.manual_seed(2 ** 64 - 1)
    assert graft.initial_seed() == 2 ** 64 - 1
    graft.manual_seed(3.7)  # int(seed)
    assert graft.initial_seed() == 3
    graft.manual_seed(graft.tensor(5))
    assert graft.initial_seed() == 5
    for bad in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(RuntimeError, match="^Overflow when unpacking long$"):
            graft.manual_seed(bad)
    with pytest.raises(ValueError, match="invalid literal for int"):
        graft.manual_seed("a")
    assert graft.initial_seed() == 5  # nothing changed


def test_bad_states_raise_and_change_nothing():
    state = graft.get_rng_state()
    n = state.numel()
    with pytest.raises(TypeError, match=r"^RNG state must be a torch\.LongTensor$"):
        graft.set_rng_state(state.double())
    with pytest.raises(TypeError, match=r"^RNG state must be a torch\.LongTensor$"):
        graft.set_rng_state(state.int())
    with pytest.raises(TypeError, match=r"^expected a torch\.LongTensor, but got list$"):
        graft.set_rng_state(state.tolist())
    with pytest.raises(TypeError, match=r"^expected a torch\.LongTensor, but got NoneType$"):
        graft.set_rng_state(None)
    with pytest.raises(RuntimeError, match=rf"^Expected a graft RNG state of size {n} but found the input RNG "
                                           r"state size to be 10$"):
        graft.set_rng_state(state[:10])
    with pytest.raises(RuntimeError, match="^RNG state must be contiguous$"):
        graft.set_rng_state(graft.stack([state, state], 1)[:, 0])
    assert graft.equal(graft.get_rng_state(), state)


def test_fork_rng_restores_the_state():
    state = graft.get_rng_state()
    with graft.random.fork_rng():
        graft.rand(100)
    assert graft.equal(graft.get_rng_state(), state)
    with pytest.raises(ZeroDivisionError):
        with graft.random.fork_rng(devices=[]):
            graft.rand(3)
            1 / 0
    assert graft.equal(graft.get_rng_state(), state)
    with graft.random.fork_rng():  # nested: each level restores what it saw
        graft.rand(2)
        inner = graft.get_rng_state()
        with graft.random.fork_rng():
            graft.rand(2)
        assert graft.equal(graft.get_rng_state(), inner)
    assert graft.equal(graft.get_rng_state(), state)
    with graft.random.fork_rng(enabled=False):
        graft.rand(2)
    assert not graft.equal(graft.get_rng_state(), state)


def test_fork_rng_devices_without_cuda():
    with graft.random.fork_rng(device_type="cpu"):
        graft.rand(2)
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
        with graft.random.fork_rng(devices=[0]):
            pass
    with pytest.raises(RuntimeError, match=r"^torch has no module of `xpu`"):
        with graft.random.fork_rng(device_type="xpu"):
            pass
    graft.cuda.manual_seed(1)  # queued forever without CUDA, as PyTorch's: no error
    graft.cuda.manual_seed_all(1)


def test_same_error_types_as_torch():
    torch = pytest.importorskip("torch", reason="PyTorch (Debian python3-torch) is not installed")
    for lib in (torch, graft):
        state = lib.get_rng_state()
        with pytest.raises(TypeError):
            lib.set_rng_state(state.float())
        with pytest.raises(TypeError):
            lib.set_rng_state([1, 2])
        with pytest.raises(RuntimeError):
            lib.set_rng_state(state[:10])
        with pytest.raises(RuntimeError):
            lib.manual_seed(2 ** 64)
        lib.manual_seed(-5)
        assert lib.initial_seed() == 2 ** 64 - 5
        # the same program gives the same draws again in both
        lib.set_rng_state(state)
        a = lib.randn(6)
        lib.set_rng_state(state)
        with lib.random.fork_rng():
            assert lib.equal(a, lib.randn(6))
        assert lib.equal(a, lib.randn(6))
