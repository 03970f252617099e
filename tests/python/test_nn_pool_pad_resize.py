"""Pooling, padding and resizing layers against PyTorch: MaxPool1d, AvgPool1d, AdaptiveAvgPool1d,
AdaptiveMaxPool1d/2d, LPPool1d/2d, the padding layers (F.pad's reflect, replicate and circular
modes), Upsample / F.interpolate, PixelShuffle/Unshuffle, ChannelShuffle, Fold/Unfold: values,
gradients, indices, reprs and PyTorch's errors (2.x's where 1.13 differs)."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.nn as gnn  # noqa: E402
import graft.nn.functional as GF  # noqa: E402
from nn_parity_utils import rand, run_both, run_fn_both  # noqa: E402

tnn = torch.nn
TF = torch.nn.functional


def with_ties(*shape):
    """Random values with repeated maxima (ties pick the first, as ATen)."""
    x = np.round(rand(*shape), 1)
    x.reshape(-1)[::5] = 1.5
    return x


@pytest.mark.parametrize("args", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1),
                                  dict(kernel_size=2, dilation=2, ceil_mode=True), dict(kernel_size=(3,), stride=(1,))])
def test_max_pool1d(args):
    for shape in [(2, 3, 9), (3, 9)]:
        run_both(torch, tnn.MaxPool1d(**args), gnn.MaxPool1d(**args), [with_ties(*shape)])
        t, g = TF.max_pool1d(torch.tensor(with_ties(*shape)), return_indices=True, **args), \
            GF.max_pool1d(graft.tensor(with_ties(*shape)), return_indices=True, **args)
        np.testing.assert_array_equal(g[1].numpy(), t[1].numpy())
        np.testing.assert_allclose(g[0].numpy(), t[0].numpy())


def test_max_pool1d_errors():
    x = graft.randn(2, 3, 5)
    with pytest.raises(RuntimeError, match="^max_pool1d\\(\\) padding should be at most half of kernel size, but got "
                                           "padding=2 and kernel_size=2$"):
        GF.max_pool1d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="^max_pool1d\\(\\) kernel_size must be an int, list of ints or tuple of "
                                           "ints of size 1 but got size 2$"):
        GF.max_pool1d(x, (2, 2))
    # PyTorch 2.x refuses an empty output (1.13 returned an empty tensor)
    with pytest.raises(RuntimeError, match="^max_pool1d\\(\\) Invalid computed output size: 0$"):
        GF.max_pool1d(x, 7)
    with pytest.raises(RuntimeError, match="^max_pool1d: Expected 2D or 3D \\(batch mode\\) tensor with optional 0 "
                                           "dim batch size for input"):
        GF.max_pool1d(graft.randn(2, 3, 4, 5), 2)
    with pytest.raises(TypeError, match="^max_pool1d\\(\\): argument 'kernel_size' \\(position 2\\) must be tuple of "
                                        "ints, not float$"):
        GF.max_pool1d(x, 1.5)


@pytest.mark.parametrize("args", [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1),
                                  dict(kernel_size=3, stride=2, padding=1, count_include_pad=False, ceil_mode=True)])
def test_avg_pool1d(args):
    run_both(torch, tnn.AvgPool1d(**args), gnn.AvgPool1d(**args), [rand(2, 3, 9)])
    ints = np.array([[[-7, 2, 3, 9, -4, 5, 8]]])  # integer means truncate towards zero
    np.testing.assert_array_equal(GF.avg_pool1d(graft.tensor(ints), **args).numpy(),
                                  TF.avg_pool1d(torch.tensor(ints), **args).numpy())
    assert repr(gnn.AvgPool1d(**args)) == repr(tnn.AvgPool1d(**args))
    with pytest.raises(RuntimeError, match="\"avg_pool2d\" not implemented for 'Int'"):
        GF.avg_pool1d(graft.tensor(ints).int(), 2)


def test_adaptive_pools_1d():
    for size in (1, 3, 4, 9, 12):
        run_both(torch, tnn.AdaptiveAvgPool1d(size), gnn.AdaptiveAvgPool1d(size), [rand(2, 3, 9)])
        run_both(torch, tnn.AdaptiveMaxPool1d(size), gnn.AdaptiveMaxPool1d(size), [with_ties(2, 3, 9)])
        t = TF.adaptive_max_pool1d(torch.tensor(with_ties(3, 9)), size, return_indices=True)
        g = GF.adaptive_max_pool1d(graft.tensor(with_ties(3, 9)), size, return_indices=True)
        np.testing.assert_array_equal(g[1].numpy(), t[1].numpy())
    with pytest.raises(RuntimeError, match="^adaptive_avg_pool1d\\(\\) argument 'output_size' should contain one int "
                                           "\\(got 2\\)$"):
        GF.adaptive_avg_pool1d(graft.randn(2, 3, 5), (3, 3))
    with pytest.raises(RuntimeError, match="^Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 "
                                           "'self' \\(while checking arguments for adaptive_max_pool1d\\)$"):
        GF.adaptive_max_pool1d(graft.randn(5), 3)


@pytest.mark.parametrize("size", [(3, 2), (5, 4), (2, None), 1, (7, 6), (None, 3)])
def test_adaptive_max_pool2d(size):
    x = with_ties(2, 3, 5, 4)
    x[0, 0, 1, 1] = np.nan  # a NaN is the maximum of its windows
    run_both(torch, tnn.AdaptiveMaxPool2d(size), gnn.AdaptiveMaxPool2d(size), [x])
    t = TF.adaptive_max_pool2d(torch.tensor(x[0]), size, return_indices=True)
    g = GF.adaptive_max_pool2d(graft.tensor(x[0]), size, return_indices=True)
    np.testing.assert_array_equal(g[1].numpy(), t[1].numpy())
    assert repr(gnn.AdaptiveMaxPool2d(size)) == repr(tnn.AdaptiveMaxPool2d(size))


def test_adaptive_max_pool2d_errors_and_empty():
    with pytest.raises(RuntimeError, match="^adaptive_max_pool2d\\(\\): Expected 3D or 4D tensor, but got: "
                                           "\\[5, 4\\]$"):
        GF.adaptive_max_pool2d(graft.randn(5, 4), 2)
    with pytest.raises(RuntimeError, match="non-zero size for non-batch dimensions"):
        GF.adaptive_max_pool2d(graft.randn(2, 3, 0, 4), 2)
    with pytest.raises(RuntimeError, match="\"adaptive_max_pool2d\" not implemented for 'Long'"):
        GF.adaptive_max_pool2d(graft.ones(1, 2, 2, dtype=graft.int64), 1)
    with pytest.raises(TypeError, match="must be tuple of ints, not bool"):
        GF.adaptive_max_pool2d(graft.randn(1, 2, 2), True)
    assert tuple(GF.adaptive_max_pool2d(graft.randn(0, 3, 5, 4), 2).shape) == (0, 3, 2, 2)
    assert tuple(GF.adaptive_max_pool2d(graft.randn(2, 3, 5, 4), 0).shape) == (2, 3, 0, 0)


@pytest.mark.parametrize("p", [1, 2, 3.5])
def test_lp_pool(p):
    x = np.abs(rand(2, 3, 6, 8)) + 0.1
    run_both(torch, tnn.LPPool2d(p, 2), gnn.LPPool2d(p, 2), [x])
    run_both(torch, tnn.LPPool2d(p, (2, 3), stride=(2, 1), ceil_mode=True),
             gnn.LPPool2d(p, (2, 3), stride=(2, 1), ceil_mode=True), [x])
    run_both(torch, tnn.LPPool1d(p, 3, stride=2), gnn.LPPool1d(p, 3, stride=2), [x[:, :, 0]])
    assert repr(gnn.LPPool1d(p, 3)) == repr(tnn.LPPool1d(p, 3))


def test_lp_pool_norm_type_follows_pytorch_2():
    # PyTorch 2.x: p = inf max-pools |x|, p = 0 is refused (1.13 did neither)
    x = graft.randn(2, 3, 6, 8)
    np.testing.assert_allclose(GF.lp_pool2d(x, float("inf"), 2).numpy(), GF.max_pool2d(x.abs(), 2).numpy())
    np.testing.assert_allclose(GF.lp_pool1d(x[:, :, 0], float("inf"), 2).numpy(),
                               GF.max_pool1d(x[:, :, 0].abs(), 2).numpy())
    with pytest.raises(ValueError, match="^norm_type must be a non-zero value, but got 0$"):
        GF.lp_pool2d(x, 0, 2)


PAD_CASES = [((2, 3, 6), (2, 1)), ((3, 6), (1, -2)), ((2, 3, 4, 5), (1, 2, 3, 0)), ((3, 4, 5), (-1, 2, 1, -2)),
             ((1, 2, 3, 4, 5), (1, 1, 2, 0, 0, 2))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes(mode):
    for shape, pad in PAD_CASES:
        if mode == "circular" and len(shape) == len(pad) // 2 + 1:
            continue  # torch 1.13 had no unbatched circular padding (checked below against 2.x's result)
        run_fn_both(torch, lambda x: TF.pad(x, pad, mode), lambda x: GF.pad(x, pad, mode), [rand(*shape)])
    ints = np.arange(12).reshape(1, 2, 6)
    np.testing.assert_array_equal(GF.pad(graft.tensor(ints).double(), (2, 3), mode).numpy(),
                                  TF.pad(torch.tensor(ints).double(), (2, 3), mode).numpy())


def test_pad_modes_follow_pytorch_2():
    # unbatched circular padding and integer reflect / replicate are PyTorch 2.x's
    x = graft.arange(5.0).reshape(1, 5)
    np.testing.assert_array_equal(GF.pad(x, (2, 1), "circular").numpy(), [[3, 4, 0, 1, 2, 3, 4, 0]])
    np.testing.assert_array_equal(GF.pad(x.long(), (2, 1), "reflect").numpy(), [[2, 1, 0, 1, 2, 3, 4, 3]])
    # negative circular pads crop first, then wrap what is left
    np.testing.assert_array_equal(GF.pad(x.reshape(1, 1, 5), (2, -1), "circular").numpy(), [[[2, 3, 0, 1, 2, 3]]])


def test_pad_errors():
    x = graft.randn(1, 2, 3)
    with pytest.raises(RuntimeError, match="^Argument #4: Padding size should be less than the corresponding input "
                                           "dimension, but got: padding \\(3, 0\\) at dimension 2 of input "
                                           "\\[1, 2, 3\\]$"):
        GF.pad(x, (3, 0), "reflect")
    with pytest.raises(RuntimeError, match="^input \\(W: 3\\) is too small. Calculated output W: 0$"):
        GF.pad(x, (-2, -1), "replicate")
    with pytest.raises(RuntimeError, match="^Padding value causes wrapping around more than once.$"):
        GF.pad(x, (4, 0), "circular")
    with pytest.raises(NotImplementedError, match="^Padding size 2 is not supported for 4D input tensor.$"):
        GF.pad(graft.randn(1, 1, 2, 3), (1, 1), "reflect")
    with pytest.raises(NotImplementedError, match="^Unrecognised padding mode bogus$"):
        GF.pad(x, (1, 1), "bogus")
    with pytest.raises(RuntimeError, match="^Padding mode \"reflect\" doesn't take in value argument$"):
        GF.pad(x, (1, 1), "reflect", 1.0)
    with pytest.raises(RuntimeError, match="\"reflection_pad1d\" not implemented for 'Bool'"):
        GF.pad(x.bool(), (1, 1), "reflect")
    with pytest.raises(TypeError, match="^pad\\(\\): argument 'pad' \\(position 2\\) must be tuple of ints, but found "
                                        "element of type float at pos 0$"):
        GF.pad(x, (1.0, 1), "reflect")


@pytest.mark.parametrize("cls, padding, shape", [
    ("ZeroPad2d", (1, 2, 0, 1), (2, 3, 4, 5)), ("ZeroPad2d", 1, (3, 4, 5)), ("ConstantPad1d", 2, (2, 3, 4)),
    ("ConstantPad2d", (1, 0, 2, 1), (2, 3, 4, 5)), ("ConstantPad3d", 1, (1, 2, 3, 4, 5)),
    ("ReflectionPad1d", (2, 1), (2, 3, 5)), ("ReflectionPad2d", 2, (2, 3, 4, 5)),
    ("ReplicationPad1d", 3, (2, 3, 4)), ("ReplicationPad2d", (1, 2, 3, 4), (2, 3, 4, 5)),
])
def test_padding_layers(cls, padding, shape):
    args = (padding, 0.5) if cls.startswith("Constant") else (padding,)
    t, g = getattr(tnn, cls)(*args), getattr(gnn, cls)(*args)
    assert repr(g) == repr(t) and g.padding == t.padding
    run_both(torch, t, g, [rand(*shape)])


def test_padding_layers_of_pytorch_2():
    # ZeroPad1d/3d, ReflectionPad3d, ReplicationPad3d and the CircularPad layers are PyTorch 2.x's
    x = graft.arange(60.0).reshape(1, 3, 4, 5)
    assert repr(gnn.ZeroPad1d(2)) == "ZeroPad1d((2, 2))" and repr(gnn.CircularPad2d(1)) == "CircularPad2d((1, 1, 1, 1))"
    np.testing.assert_array_equal(gnn.CircularPad2d((1, 0, 2, 1))(x).numpy(),
                                  GF.pad(x, (1, 0, 2, 1), "circular").numpy())
    np.testing.assert_array_equal(gnn.ReflectionPad3d(1)(x).numpy(), GF.pad(x, (1,) * 6, "reflect").numpy())
    with pytest.raises(ValueError, match="^expected 2D or 3D input \\(got 4D input\\)$"):
        gnn.CircularPad1d(1)(x)


@pytest.mark.parametrize("shape, kw", [
    ((2, 3, 5), dict(size=8)), ((2, 3, 5), dict(scale_factor=1.7)), ((2, 3, 5), dict(size=3, mode="nearest-exact")),
    ((2, 3, 5), dict(size=8, mode="linear")), ((2, 3, 5), dict(scale_factor=0.6, mode="linear", align_corners=True)),
    ((2, 3, 4, 5), dict(size=(7, 3), mode="bilinear")), ((2, 3, 4, 5), dict(scale_factor=(1.5, 2.3), mode="bilinear")),
    ((2, 3, 4, 5), dict(scale_factor=2, mode="bilinear", align_corners=True)),
    ((2, 3, 4, 5), dict(scale_factor=(1.5, 2.3), mode="bilinear", recompute_scale_factor=True)),
    ((2, 3, 4, 5), dict(size=(7, 3))), ((2, 3, 4, 5), dict(scale_factor=3)),
    ((2, 3, 4, 5), dict(size=(2, 3), mode="area")),
    ((1, 2, 3, 4, 5), dict(size=(4, 5, 6), mode="trilinear")), ((1, 2, 3, 4, 5), dict(scale_factor=1.5)),
    ((2, 3, 4, 5), dict(size=(9, 11), mode="nearest-exact")),
])
def test_interpolate(shape, kw):
    x = rand(*shape).astype(np.float32)
    run_fn_both(torch, lambda t: TF.interpolate(t, **kw), lambda g: GF.interpolate(g, **kw), [x], rtol=1e-5,
                atol=1e-6)
    run_fn_both(torch, lambda t: TF.interpolate(t, **kw), lambda g: GF.interpolate(g, **kw), [x.astype(np.float64)])


def test_interpolate_errors():
    x = graft.randn(2, 3, 4, 5)
    with pytest.raises(ValueError, match="^only one of size or scale_factor should be defined$"):
        GF.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="^either size or scale_factor should be defined$"):
        GF.interpolate(x)
    with pytest.raises(ValueError, match="^align_corners option can only be set with the interpolating modes"):
        GF.interpolate(x, size=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="^Got 4D input, but linear mode needs 3D input$"):
        GF.interpolate(x, size=2, mode="linear")
    with pytest.raises(ValueError, match="^Input and output must have the same number of spatial dimensions"):
        GF.interpolate(x, size=(2, 3, 4))
    with pytest.raises(RuntimeError, match="^Input and output sizes should be greater than 0"):
        GF.interpolate(x, scale_factor=0.1)
    with pytest.raises(RuntimeError, match="^Non-empty 4D data tensor expected"):
        GF.interpolate(graft.randn(1, 0, 4, 5), size=(2, 2))
    with pytest.warns(UserWarning, match="^`nn.functional.upsample_bilinear` is deprecated."):
        GF.upsample_bilinear(x, scale_factor=2)


@pytest.mark.parametrize("make", [
    lambda nn: nn.Upsample(scale_factor=2), lambda nn: nn.Upsample(size=(3, 7), mode="bilinear"),
    lambda nn: nn.Upsample(scale_factor=(1.5, 2), mode="bilinear", align_corners=True),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=2), lambda nn: nn.UpsamplingBilinear2d(size=(6, 3)),
])
def test_upsample_layers(make):
    t, g = make(tnn), make(gnn)
    run_both(torch, t, g, [rand(2, 3, 4, 5)])
    # PyTorch 2.x writes the mode with repr() (1.13: mode=nearest)
    assert repr(g) == repr(t).replace(f"mode={t.mode}", f"mode={t.mode!r}")
    assert (g.size, g.scale_factor, g.mode, g.align_corners) == (t.size, t.scale_factor, t.mode, t.align_corners)


def test_pixel_and_channel_shuffle():
    run_both(torch, tnn.PixelShuffle(2), gnn.PixelShuffle(2), [rand(2, 8, 3, 4)])
    run_both(torch, tnn.PixelShuffle(3), gnn.PixelShuffle(3), [rand(9, 2, 3)])
    run_both(torch, tnn.PixelUnshuffle(2), gnn.PixelUnshuffle(2), [rand(2, 3, 4, 6)])
    run_both(torch, tnn.ChannelShuffle(3), gnn.ChannelShuffle(3), [rand(2, 6, 4)], grad=False)
    run_fn_both(torch, lambda x: TF.channel_shuffle(x, 2), lambda x: GF.channel_shuffle(x, 2), [rand(2, 4, 3, 2)],
                grad=False)
    x = graft.randn(1, 8, 2, 2, requires_grad=True)
    GF.channel_shuffle(x, 4).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((1, 8, 2, 2)))
    for cls, arg in (("PixelShuffle", 2), ("PixelUnshuffle", 3), ("ChannelShuffle", 4)):
        assert repr(getattr(gnn, cls)(arg)) == repr(getattr(tnn, cls)(arg))
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor, but input.size\\(-3\\)=8 is not "
                                           "divisible by 9$"):
        GF.pixel_shuffle(graft.randn(8, 2, 3), 3)
    with pytest.raises(RuntimeError, match="^Number of channels must be divisible by groups. Got 4 channels and 3 "
                                           "groups.$"):
        GF.channel_shuffle(graft.randn(2, 4, 3), 3)
    assert tuple(GF.pixel_unshuffle(graft.randn(2, 0, 6, 3), 3).shape) == (2, 0, 6, 3)  # ATen's copy of an empty input


def test_fold_unfold_layers():
    x = rand(2, 3, 6, 5)
    run_both(torch, tnn.Unfold(2, padding=1, stride=2), gnn.Unfold(2, padding=1, stride=2), [x])
    cols = rand(2, 12, 12)
    run_both(torch, tnn.Fold((6, 5), 2, padding=1, stride=2), gnn.Fold((6, 5), 2, padding=1, stride=2), [cols])
    assert repr(gnn.Fold(4, 2)) == repr(tnn.Fold(4, 2)) and repr(gnn.Unfold((2, 3))) == repr(tnn.Unfold((2, 3)))


def test_no_warnings_in_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gnn.Upsample(scale_factor=2, mode="bilinear")(graft.randn(1, 2, 3, 3))
        gnn.ReflectionPad2d(1)(graft.randn(1, 2, 3, 3))
        gnn.AdaptiveMaxPool2d(2)(graft.randn(1, 2, 3, 3))
