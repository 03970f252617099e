"""nn.Transformer, TransformerEncoder, TransformerDecoder and TransformerDecoderLayer against
PyTorch: torch's weights are copied into graft (state_dict through NumPy) and outputs, input
gradients and parameter gradients compared, with masks, batch_first, norm_first; the causal mask,
the nested-tensor path's zeroed padding, the construction warning, errors, reprs and the
initialisation."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.nn as gnn  # noqa: E402
from nn_parity_utils import rand, run_both  # noqa: E402

tnn = torch.nn


def quiet(make):
    """make() with the enable_nested_tensor warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make()


def causal(n):
    return np.triu(np.ones((n, n), dtype=bool), k=1)


@pytest.mark.parametrize("kw", [dict(), dict(norm_first=True, activation="gelu"), dict(batch_first=True)])
def test_decoder_layer(kw):
    t = tnn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, **kw)
    g = gnn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, **kw)
    bf = kw.get("batch_first", False)
    tgt, mem = (rand(3, 5, 8), rand(3, 6, 8, seed=1)) if bf else (rand(5, 3, 8), rand(6, 3, 8, seed=1))
    run_both(torch, t, g, [tgt, mem], train=True)
    kpm = np.zeros((3, 6), dtype=bool)
    kpm[1, 4:] = True
    run_both(torch, t, g, [tgt, mem], kwargs={"tgt_mask": causal(5), "memory_key_padding_mask": kpm})


def test_decoder_layer_unbatched():
    t = tnn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0)
    g = gnn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0)
    run_both(torch, t, g, [rand(5, 4), rand(3, 4, seed=1)], kwargs={"tgt_mask": causal(5)})


@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True, norm_first=True)])
def test_encoder_stack(kw):
    t = quiet(lambda: tnn.TransformerEncoder(tnn.TransformerEncoderLayer(8, 2, 16, 0.0, **kw), 2,
                                             norm=tnn.LayerNorm(8)))
    g = quiet(lambda: gnn.TransformerEncoder(gnn.TransformerEncoderLayer(8, 2, 16, 0.0, **kw), 2,
                                             norm=gnn.LayerNorm(8)))
    x = rand(3, 5, 8) if kw.get("batch_first") else rand(5, 3, 8)
    kpm = np.zeros((3, 5), dtype=bool)
    kpm[0, 3:] = True
    run_both(torch, t, g, [x], train=True, kwargs={"mask": causal(5), "src_key_padding_mask": kpm})
    run_both(torch, t, g, [x], kwargs={"src_key_padding_mask": kpm})


def test_decoder_stack_detects_the_causal_mask():
    t = tnn.TransformerDecoder(tnn.TransformerDecoderLayer(8, 2, 16, 0.0), 3)
    g = gnn.TransformerDecoder(gnn.TransformerDecoderLayer(8, 2, 16, 0.0), 3)
    mask = np.triu(np.full((4, 4), -np.inf), k=1)
    run_both(torch, t, g, [rand(4, 2, 8), rand(6, 2, 8, seed=1)], kwargs={"tgt_mask": mask})
    assert len(g.layers) == 3 and g.num_layers == 3 and g.norm is None


@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True), dict(norm_first=True, activation="gelu")])
def test_transformer(kw):
    t = quiet(lambda: tnn.Transformer(8, 2, 2, 2, 16, dropout=0.0, **kw))
    g = quiet(lambda: gnn.Transformer(8, 2, 2, 2, 16, dropout=0.0, **kw))
    assert list(g.state_dict()) == list(t.state_dict())
    bf = kw.get("batch_first", False)
    src, tgt = (rand(2, 6, 8), rand(2, 4, 8, seed=1)) if bf else (rand(6, 2, 8), rand(4, 2, 8, seed=1))
    skpm = np.zeros((2, 6), dtype=bool)
    skpm[1, 5:] = True
    masks = {"tgt_mask": tnn.Transformer.generate_square_subsequent_mask(4).numpy(), "src_key_padding_mask": skpm,
             "memory_key_padding_mask": skpm}
    run_both(torch, t, g, [src, tgt], train=True, kwargs=masks)


def test_generate_square_subsequent_mask():
    g = gnn.Transformer.generate_square_subsequent_mask(5)
    np.testing.assert_array_equal(g.numpy(), tnn.Transformer.generate_square_subsequent_mask(5).numpy())
    assert g.dtype == graft.float32
    assert gnn.Transformer.generate_square_subsequent_mask(3, dtype=graft.float64).dtype == graft.float64


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_nested_tensor_path_zeroes_padded_positions():
    # eval mode, no gradient needed, batch_first, a left-aligned padding mask: PyTorch runs nested
    # tensors and the padded positions come out as zeros (before the final norm)
    t = tnn.TransformerEncoder(tnn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True), 2)
    g = gnn.TransformerEncoder(gnn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True), 2)
    kpm = np.zeros((2, 4), dtype=bool)
    kpm[0, 2:] = True
    with torch.no_grad(), graft.no_grad():
        t_out, g_out = run_both(torch, t, g, [rand(2, 4, 8)], grad=False, kwargs={"src_key_padding_mask": kpm})
    assert not g_out[0].numpy()[0, 2:].any()
    # with gradients, the padded positions are computed as any other
    _, g_out = run_both(torch, t, g, [rand(2, 4, 8)], kwargs={"src_key_padding_mask": kpm})
    assert g_out[0].detach().numpy()[0, 2:].all()


def test_enable_nested_tensor_warning():
    # PyTorch 2.x's warning (1.13 gave none)
    with pytest.warns(UserWarning, match=r"^enable_nested_tensor is True, but self.use_nested_tensor is False "
                                         r"because encoder_layer.self_attn.batch_first was not True\(use batch_first"):
        enc = gnn.TransformerEncoder(gnn.TransformerEncoderLayer(8, 2), 1)
    assert enc.enable_nested_tensor and not enc.use_nested_tensor
    with pytest.warns(UserWarning, match="because encoder_layer.norm_first was True"):
        gnn.TransformerEncoder(gnn.TransformerEncoderLayer(8, 2, batch_first=True, norm_first=True), 1)
    with pytest.warns(UserWarning, match="because encoder_layer.self_attn.num_heads is odd"):
        gnn.TransformerEncoder(gnn.TransformerEncoderLayer(9, 3, batch_first=True), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gnn.TransformerEncoder(gnn.TransformerEncoderLayer(8, 2, batch_first=True), 1)
        gnn.TransformerEncoder(gnn.TransformerEncoderLayer(8, 2), 1, enable_nested_tensor=False)


def test_activation_relu_or_gelu():
    assert gnn.TransformerEncoderLayer(4, 2).activation_relu_or_gelu == 1
    assert gnn.TransformerEncoderLayer(4, 2, activation="gelu").activation_relu_or_gelu == 2
    assert gnn.TransformerEncoderLayer(4, 2, activation=gnn.GELU()).activation_relu_or_gelu == 2
    assert gnn.TransformerEncoderLayer(4, 2, activation=graft.tanh).activation_relu_or_gelu == 0


def test_mismatched_mask_types_warn_and_bad_types_raise():
    enc = gnn.TransformerEncoder(gnn.TransformerEncoderLayer(4, 2, 8, 0.0), 1, enable_nested_tensor=False)
    x = graft.randn(3, 2, 4)
    with pytest.warns(UserWarning, match="^Support for mismatched src_key_padding_mask and mask is deprecated. "
                                         "Use same type for both instead.$"):
        enc(x, mask=graft.zeros(3, 3), src_key_padding_mask=graft.zeros(2, 3, dtype=graft.bool))
    with pytest.raises(AssertionError, match="^only bool and floating types of mask are supported$"):
        enc(x, mask=graft.zeros(3, 3, dtype=graft.int64))


def test_layers_are_independent_copies():
    layer = gnn.TransformerDecoderLayer(4, 2, 8)
    dec = gnn.TransformerDecoder(layer, 2)
    w0, w1 = dec.layers[0].linear1.weight, dec.layers[1].linear1.weight
    assert w0 is not w1 and w0 is not layer.linear1.weight
    np.testing.assert_array_equal(w0.detach().numpy(), w1.detach().numpy())
    assert len(list(dec.parameters())) == 2 * len(list(layer.parameters()))


def test_errors():
    g = quiet(lambda: gnn.Transformer(8, 2, 1, 1, 16))
    with pytest.raises(RuntimeError, match="^the batch number of src and tgt must be equal$"):
        g(graft.randn(3, 2, 8), graft.randn(3, 4, 8))
    with pytest.raises(RuntimeError, match="^the feature number of src and tgt must be equal to d_model$"):
        g(graft.randn(3, 2, 6), graft.randn(3, 2, 6))
    with pytest.raises(RuntimeError, match="^activation should be relu/gelu, not tanh$"):
        gnn.TransformerDecoderLayer(4, 2, activation="tanh")


def test_reprs_match_torch():
    assert repr(gnn.TransformerDecoderLayer(4, 2, 8)) == repr(tnn.TransformerDecoderLayer(4, 2, 8))
    t = quiet(lambda: tnn.Transformer(4, 2, 1, 2, 8))
    g = quiet(lambda: gnn.Transformer(4, 2, 1, 2, 8))
    assert repr(g) == repr(t)


def test_custom_encoder_decoder_and_attributes():
    enc = gnn.Identity()
    dec = gnn.TransformerDecoder(gnn.TransformerDecoderLayer(4, 2, 8), 1)
    g = gnn.Transformer(4, 2, custom_encoder=enc, custom_decoder=dec, batch_first=True)
    assert g.encoder is enc and g.decoder is dec and g.d_model == 4 and g.nhead == 2 and g.batch_first


def test_initialisation_is_xavier_uniform():
    graft.manual_seed(0)
    g = quiet(lambda: gnn.Transformer(16, 2, 1, 1, 64))
    w = g.encoder.layers[0].linear1.weight.detach().numpy()
    bound = math.sqrt(6.0 / (16 + 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound
    b = g.encoder.layers[0].linear1.bias.detach().numpy()  # 1-D: Linear's default, U(+-1/sqrt(fan_in))
    assert np.abs(b).max() <= 1 / math.sqrt(16)
    np.testing.assert_array_equal(g.decoder.norm.weight.detach().numpy(), np.ones(16))
