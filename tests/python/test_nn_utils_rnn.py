"""graft.nn.utils.rnn and the recurrent layers on PackedSequence, against PyTorch (float64):
values, batch_sizes and indices, gradients to the inputs and the weights, and error texts."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.nn.utils.rnn as grnn  # noqa: E402
from torch.nn.utils import rnn as trnn  # noqa: E402

RTOL, ATOL = 1e-7, 1e-9


def rand(*shape, seed=0):
    """Standard normal float64 values of ``shape``."""
    return np.random.default_rng(seed).standard_normal(shape)


def both(a, grad=True):
    """The NumPy array ``a`` as a torch and a graft leaf tensor."""
    floating = a.dtype.kind == "f"
    return (torch.tensor(a, requires_grad=grad and floating), graft.tensor(a, requires_grad=grad and floating))


def close(g, t):
    """Asserts graft tensor ``g`` has torch tensor ``t``'s shape and values."""
    assert tuple(g.shape) == tuple(t.shape), (tuple(g.shape), tuple(t.shape))
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=RTOL, atol=ATOL)


def same_index(g, t):
    """Both None, or equal int64 tensors."""
    assert (g is None) == (t is None)
    if t is not None:
        assert g.dtype == graft.int64
        assert g.tolist() == t.tolist()


def close_packed(g, t):
    close(g.data, t.data)
    same_index(g.batch_sizes, t.batch_sizes)
    same_index(g.sorted_indices, t.sorted_indices)
    same_index(g.unsorted_indices, t.unsorted_indices)


def backward_both(t_outs, g_outs, seed=7):
    """Backpropagates the same random weighting of the paired outputs in torch and in graft."""
    rng = np.random.default_rng(seed)
    t_loss, g_loss = 0, 0
    for t, g in zip(t_outs, g_outs):
        w = rng.standard_normal(tuple(t.shape))
        t_loss = t_loss + (t * torch.tensor(w)).sum()
        g_loss = g_loss + (g * graft.tensor(w)).sum()
    t_loss.backward()
    g_loss.backward()


def close_grads(pairs):
    for t, g in pairs:
        close(g.grad, t.grad)


def raises_as_torch(t_fn, g_fn, exc=RuntimeError):
    """Both calls raise ``exc`` with the same message; returns it."""
    with pytest.raises(exc) as t_err:
        t_fn()
    with pytest.raises(exc) as g_err:
        g_fn()
    assert str(g_err.value) == str(t_err.value)
    return str(g_err.value)


# --- pad_sequence / unpad_sequence -------------------------------------------------------------

def three_sequences(trailing=(3,)):
    return [rand(4, *trailing, seed=1), rand(2, *trailing, seed=2), rand(5, *trailing, seed=3)]


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_values_and_grads(batch_first):
    pairs = [both(a) for a in three_sequences((2, 3))]
    t = trnn.pad_sequence([p[0] for p in pairs], batch_first=batch_first, padding_value=-2.5)
    g = grnn.pad_sequence([p[1] for p in pairs], batch_first=batch_first, padding_value=-2.5)
    close(g, t)
    backward_both([t], [g])
    close_grads(pairs)


def test_pad_sequence_no_trailing_dims_and_int_dtype():
    seqs = [np.array([1, 2, 3]), np.array([4]), np.array([5, 6])]
    t = trnn.pad_sequence([torch.tensor(s) for s in seqs], padding_value=7.9)
    g = grnn.pad_sequence([graft.tensor(s) for s in seqs], padding_value=7.9)
    assert g.dtype == graft.int64
    assert g.tolist() == t.tolist()


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_left(batch_first):
    # left padding is right padding of the time-reversed sequences, reversed again
    pairs = [both(a) for a in three_sequences()]
    time = 1 if batch_first else 0
    t = trnn.pad_sequence([p[0].flip(0) for p in pairs], batch_first=batch_first, padding_value=3.0).flip(time)
    g = grnn.pad_sequence([p[1] for p in pairs], batch_first=batch_first, padding_value=3.0, padding_side="left")
    close(g, t)
    backward_both([t], [g])
    close_grads(pairs)


def test_pad_sequence_errors():
    raises_as_torch(lambda: trnn.pad_sequence([]), lambda: grnn.pad_sequence([]))
    raises_as_torch(lambda: trnn.pad_sequence(3), lambda: grnn.pad_sequence(3))
    a, b = rand(2, 3), rand(3, 4)
    raises_as_torch(lambda: trnn.pad_sequence([torch.tensor(a), torch.tensor(b)]),
                    lambda: grnn.pad_sequence([graft.tensor(a), graft.tensor(b)]))
    with pytest.raises(RuntimeError, match="^Expected padding_side to be one of left or right, but got up.$"):
        grnn.pad_sequence([graft.tensor(a)], padding_side="up")


def test_pad_sequence_of_a_tensor_unbinds_it():
    a = rand(3, 2)
    close(grnn.pad_sequence(graft.tensor(a)), trnn.pad_sequence(torch.tensor(a)))


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence(batch_first):
    t_in, g_in = both(rand(5, 3, 2) if not batch_first else rand(3, 5, 2))
    lengths = [5, 2, 3]
    # PyTorch transposes its argument in place: give it a copy
    t = trnn.unpad_sequence(t_in * 1.0, torch.tensor(lengths), batch_first=batch_first)
    g = grnn.unpad_sequence(g_in, graft.tensor(lengths), batch_first=batch_first)
    assert len(g) == 3
    for gs, ts in zip(g, t):
        close(gs, ts)
    assert tuple(g_in.shape) == tuple(t_in.shape)  # graft's leaves its argument as it is
    backward_both(t, g)
    close_grads([(t_in, g_in)])


# --- pack_padded_sequence / pad_packed_sequence ------------------------------------------------

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_padded_sorted(batch_first, as_tensor):
    lengths = [5, 3, 3, 1]
    t_in, g_in = both(rand(4, 6, 2) if batch_first else rand(6, 4, 2))  # one step more than the longest
    t_len = torch.tensor(lengths) if as_tensor else lengths
    g_len = graft.tensor(lengths) if as_tensor else lengths
    t = trnn.pack_padded_sequence(t_in, t_len, batch_first=batch_first)
    g = grnn.pack_padded_sequence(g_in, g_len, batch_first=batch_first)
    assert isinstance(g, grnn.PackedSequence) and isinstance(g, tuple)
    close_packed(g, t)
    backward_both([t.data], [g.data])
    close_grads([(t_in, g_in)])


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_padded_unsorted(batch_first):
    lengths = [2, 4, 1, 4, 3]  # ties: the sort must keep their order as PyTorch's does
    t_in, g_in = both(rand(5, 4, 3) if batch_first else rand(4, 5, 3))
    t = trnn.pack_padded_sequence(t_in, torch.tensor(lengths), batch_first=batch_first, enforce_sorted=False)
    g = grnn.pack_padded_sequence(g_in, graft.tensor(lengths), batch_first=batch_first, enforce_sorted=False)
    close_packed(g, t)
    backward_both([t.data], [g.data])
    close_grads([(t_in, g_in)])


def test_pack_padded_no_trailing_dims():
    t_in, g_in = both(rand(3, 2))
    close_packed(grnn.pack_padded_sequence(g_in, [3, 1]), trnn.pack_padded_sequence(t_in, [3, 1]))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("total_length", [None, 7])
def test_pad_packed_sequence(batch_first, total_length):
    lengths = [2, 5, 1, 3]
    t_pad, g_pad = both(rand(5, 4, 3), grad=False)
    t_packed = trnn.pack_padded_sequence(t_pad, lengths, enforce_sorted=False)
    g_packed = grnn.pack_padded_sequence(g_pad, lengths, enforce_sorted=False)
    t_data, g_data = both(t_packed.data.numpy())  # differentiate from the packed data itself
    t_packed = trnn.PackedSequence(t_data, t_packed.batch_sizes, t_packed.sorted_indices, t_packed.unsorted_indices)
    g_packed = grnn.PackedSequence(g_data, g_packed.batch_sizes, g_packed.sorted_indices, g_packed.unsorted_indices)
    t, t_len = trnn.pad_packed_sequence(t_packed, batch_first, -1.5, total_length)
    g, g_len = grnn.pad_packed_sequence(g_packed, batch_first, -1.5, total_length)
    close(g, t)
    same_index(g_len, t_len)
    backward_both([t], [g])
    close_grads([(t_data, g_data)])


def test_pad_packed_sorted_round_trip():
    t_in, g_in = both(rand(4, 3, 2))
    t, t_len = trnn.pad_packed_sequence(trnn.pack_padded_sequence(t_in, [4, 4, 2]), batch_first=True)
    g, g_len = grnn.pad_packed_sequence(grnn.pack_padded_sequence(g_in, [4, 4, 2]), batch_first=True)
    close(g, t)
    same_index(g_len, t_len)
    backward_both([t], [g])
    close_grads([(t_in, g_in)])


@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_sequence_round_trip(enforce_sorted):
    arrays = [rand(5, 2, seed=1), rand(3, 2, seed=2), rand(1, 2, seed=3)]
    if not enforce_sorted:
        arrays = [arrays[1], arrays[2], arrays[0]]
    pairs = [both(a) for a in arrays]
    t = trnn.pack_sequence([p[0] for p in pairs], enforce_sorted=enforce_sorted)
    g = grnn.pack_sequence([p[1] for p in pairs], enforce_sorted=enforce_sorted)
    close_packed(g, t)
    t_seqs, g_seqs = trnn.unpack_sequence(t), grnn.unpack_sequence(g)
    assert len(g_seqs) == len(arrays)
    for gs, ts, a in zip(g_seqs, t_seqs, arrays):
        close(gs, ts)
        np.testing.assert_array_equal(gs.detach().numpy(), a)
    backward_both(t_seqs, g_seqs)
    close_grads(pairs)


# --- errors ------------------------------------------------------------------------------------

def test_pack_errors():
    t_in, g_in = both(rand(3, 2, 4), grad=False)
    cases = [([2, 3], True), ([3, 0], True), ([3, -1], False), ([3, 2, 1], True), ([0, 2], False)]
    for lengths, enforce in cases:
        raises_as_torch(lambda: trnn.pack_padded_sequence(t_in, lengths, enforce_sorted=enforce),
                        lambda: grnn.pack_padded_sequence(g_in, lengths, enforce_sorted=enforce))
    raises_as_torch(lambda: trnn.pack_padded_sequence(t_in, torch.tensor([[3, 2]])),
                    lambda: grnn.pack_padded_sequence(g_in, graft.tensor([[3, 2]])))
    raises_as_torch(lambda: trnn.pack_padded_sequence(torch.zeros(0, 2, 4), [3, 2]),
                    lambda: grnn.pack_padded_sequence(graft.zeros(0, 2, 4), [3, 2]))
    raises_as_torch(lambda: trnn.pack_sequence([t_in[:, 0], t_in[:2, 1], t_in[:, 1]]),
                    lambda: grnn.pack_sequence([g_in[:, 0], g_in[:2, 1], g_in[:, 1]]))


def test_error_texts():
    g_in = graft.zeros(3, 2, 1)
    with pytest.raises(RuntimeError) as err:
        grnn.pack_padded_sequence(g_in, [2, 3])
    assert str(err.value) == (
        "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
        "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
        "do not need ONNX exportability.")
    with pytest.raises(RuntimeError) as err:
        grnn.pack_padded_sequence(g_in, [3, 0])
    assert str(err.value) == ("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                              "that is <= 0")


def test_pad_packed_total_length_error():
    t_in, g_in = both(rand(3, 2, 4), grad=False)
    msg = raises_as_torch(lambda: trnn.pad_packed_sequence(trnn.pack_padded_sequence(t_in, [3, 2]), total_length=2),
                          lambda: grnn.pad_packed_sequence(grnn.pack_padded_sequence(g_in, [3, 2]), total_length=2),
                          ValueError)
    assert msg == ("Expected total_length to be at least the length of the longest sequence in input, but got "
                   "total_length=2 and max sequence length being 3")


# --- PackedSequence ----------------------------------------------------------------------------

def test_packed_sequence_class():
    g = grnn.pack_padded_sequence(graft.tensor(rand(3, 2, 2)), [2, 3], enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = g
    assert g._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert g.to(graft.float64) is g and g.double() is g and g.cpu() is g
    f = g.float()
    assert f.data.dtype == graft.float32 and f.batch_sizes is batch_sizes
    assert f.sorted_indices.tolist() == [1, 0] and f.unsorted_indices.tolist() == [1, 0]
    assert not g.is_cuda and not g.is_pinned()
    assert g.long().data.dtype == graft.int64
    rebuilt = grnn.PackedSequence(data, batch_sizes, sorted_indices)  # unsorted_indices computed
    assert rebuilt.unsorted_indices.tolist() == [1, 0]
    pair = grnn.PackedSequence((data, batch_sizes))
    assert pair.data is data and pair.batch_sizes is batch_sizes and pair.sorted_indices is None
    assert repr(pair).startswith("PackedSequence(data=tensor(")
    perm = [2, 0, 3, 1]
    assert grnn.invert_permutation(graft.tensor(perm)).tolist() == \
        trnn.invert_permutation(torch.tensor(perm)).tolist()
    assert grnn.invert_permutation(None) is None


def test_importable_as_torch_names():
    import graft.nn.utils.rnn as module
    assert graft.nn.utils.rnn is module
    assert graft.nn.utils.rnn.PackedSequence is grnn.PackedSequence
    for name in trnn.__all__:
        assert hasattr(module, name), name


# --- recurrent layers on PackedSequence --------------------------------------------------------

def make_layers(cls, layers=1, bidirectional=False, batch_first=False, **kw):
    """The torch layer and a graft twin holding the same float64 weights."""
    t = getattr(torch.nn, cls)(3, 4, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                               **kw).double()
    g = getattr(graft.nn, cls)(3, 4, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first,
                               **kw).double()
    state = {k: graft.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()}
    result = g.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    return t, g


def hidden_pairs(cls, count, seed=11):
    """The initial state pairs (torch, graft): h, or h and c for LSTM; each [count, 5, 4]."""
    pairs = [both(rand(count, 5, 4, seed=seed + i)) for i in range(2 if cls == "LSTM" else 1)]
    return pairs


def flat_states(cls, hidden):
    return list(hidden) if cls == "LSTM" else [hidden]


CONFIGS = [  # (layers, bidirectional, batch_first, with hx, enforce_sorted)
    (1, False, False, False, False),
    (1, False, True, True, False),
    (2, False, False, True, False),
    (1, True, False, False, False),
    (1, True, True, True, False),
    (2, True, False, True, False),
    (2, True, True, False, False),
    (2, True, False, True, True),
]


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("layers,bidirectional,batch_first,with_hx,enforce_sorted", CONFIGS)
def test_packed_recurrent_layer(cls, layers, bidirectional, batch_first, with_hx, enforce_sorted):
    t_layer, g_layer = make_layers(cls, layers, bidirectional, batch_first)
    lengths = [6, 4, 4, 2, 1] if enforce_sorted else [3, 6, 1, 4, 4]
    t_in, g_in = both(rand(5, 6, 3) if batch_first else rand(6, 5, 3))
    t_packed = trnn.pack_padded_sequence(t_in, lengths, batch_first, enforce_sorted)
    g_packed = grnn.pack_padded_sequence(g_in, lengths, batch_first, enforce_sorted)
    hx = hidden_pairs(cls, layers * (2 if bidirectional else 1)) if with_hx else []
    t_hx = [p[0] for p in hx]
    g_hx = [p[1] for p in hx]
    if cls != "LSTM":
        t_hx, g_hx = (t_hx[0], g_hx[0]) if hx else (None, None)
    elif not hx:
        t_hx, g_hx = None, None
    t_out, t_hidden = t_layer(t_packed, t_hx)
    g_out, g_hidden = g_layer(g_packed, g_hx)
    assert isinstance(g_out, grnn.PackedSequence)
    close_packed(g_out, t_out)
    t_states, g_states = flat_states(cls, t_hidden), flat_states(cls, g_hidden)
    for g, t in zip(g_states, t_states):
        close(g, t)
    backward_both([t_out.data] + t_states, [g_out.data] + g_states)
    close_grads([(t_in, g_in)] + hx + list(zip(t_layer.parameters(), g_layer.parameters())))


def test_packed_lstm_pipeline_grads():
    # pack -> LSTM -> pad, gradients of the padded output to the padded input and every weight
    t_layer, g_layer = make_layers("LSTM", 2, True, True)
    lengths = [2, 5, 3]
    t_in, g_in = both(rand(3, 5, 3))
    t_out, t_len = trnn.pad_packed_sequence(
        t_layer(trnn.pack_padded_sequence(t_in, lengths, True, False))[0], batch_first=True, total_length=6)
    g_out, g_len = grnn.pad_packed_sequence(
        g_layer(grnn.pack_padded_sequence(g_in, lengths, True, False))[0], batch_first=True, total_length=6)
    close(g_out, t_out)
    same_index(g_len, t_len)
    backward_both([t_out], [g_out])
    close_grads([(t_in, g_in)] + list(zip(t_layer.parameters(), g_layer.parameters())))


def test_packed_final_state_is_each_sequences_last_step():
    # h_n of each sequence is what the layer gives for that sequence alone
    _, g_layer = make_layers("GRU", 1, True)
    arrays = [rand(2, 3, seed=1), rand(5, 3, seed=2), rand(3, 3, seed=3)]
    _, h_n = g_layer(grnn.pack_sequence([graft.tensor(a) for a in arrays], enforce_sorted=False))
    for i, a in enumerate(arrays):
        _, alone = g_layer(graft.tensor(a).unsqueeze(1))
        np.testing.assert_allclose(h_n[:, i].detach().numpy(), alone[:, 0].detach().numpy(), rtol=RTOL, atol=ATOL)


def test_packed_dropout_between_layers():
    # dropout=1 zeroes the first layer's output in training: deterministic, so comparable
    t_layer, g_layer = make_layers("LSTM", 2, False, dropout=1.0)
    t_in, g_in = both(rand(4, 2, 3))
    t_out, (t_h, _) = t_layer.train()(trnn.pack_padded_sequence(t_in, [4, 2]))
    g_out, (g_h, _) = g_layer.train()(grnn.pack_padded_sequence(g_in, [4, 2]))
    close(g_out.data, t_out.data)
    close(g_h, t_h)


def test_packed_layer_errors():
    t_layer, g_layer = make_layers("GRU")
    t_packed = trnn.pack_padded_sequence(torch.zeros(3, 2, 3, dtype=torch.double), [3, 2])
    g_packed = grnn.pack_padded_sequence(graft.zeros(3, 2, 3, dtype=graft.float64), [3, 2])
    raises_as_torch(lambda: t_layer(t_packed, torch.zeros(1, 3, 4, dtype=torch.double)),
                    lambda: g_layer(g_packed, graft.zeros(1, 3, 4, dtype=graft.float64)))
    t_wide = trnn.pack_padded_sequence(torch.zeros(3, 2, 5, dtype=torch.double), [3, 2])
    g_wide = grnn.pack_padded_sequence(graft.zeros(3, 2, 5, dtype=graft.float64), [3, 2])
    raises_as_torch(lambda: t_layer(t_wide), lambda: g_layer(g_wide))
    t_lstm, g_lstm = make_layers("LSTM")
    h = (torch.zeros(1, 2, 4, dtype=torch.double), torch.zeros(1, 1, 4, dtype=torch.double))
    raises_as_torch(lambda: t_lstm(t_packed, h),
                    lambda: g_lstm(g_packed, tuple(graft.from_numpy(x.numpy()) for x in h)))
