"""graft.nn.functional: torch.nn.functional's names and signatures. Convolution, pooling,
normalization, attention and the losses are C++ ops with generated bindings (graft._C._nn, from
src/ops/ops.yaml); their Python layer is here, as in torch.nn.functional: the legacy size_average /
reduce arguments, the size checks PyTorch makes in Python (batch statistics, targets, padding_idx),
return_indices, inplace=, and the activations and small helpers written as compositions of graft
ops."""
import collections.abc
import itertools
import math
import numbers
import warnings

from .. import _C
from ..autograd import function as _autograd_function
from ..autograd.grad_mode import no_grad
from .._tensor_types import _TYPE_NAMES

_nn = _C._nn

# the ops torch.nn.functional takes straight from C++ (generated bindings in _C._nn)
conv1d, conv2d, conv_transpose2d = _nn.conv1d, _nn.conv2d, _nn.conv_transpose2d
avg_pool2d = _nn.avg_pool2d
scaled_dot_product_attention = _nn.scaled_dot_product_attention
layer_norm = _nn.layer_norm
linear, gelu = _nn.linear, _nn.gelu
# the in-place forms torch.nn.functional exports under their own names
leaky_relu_, elu_ = _nn.leaky_relu_, _nn.elu_
# the activations declared in src/ops/ops.yaml (generated bindings in _C._nn)
softplus, logsigmoid, softshrink = _nn.softplus, _nn.log_sigmoid, _nn.softshrink
hardshrink = _C.hardshrink



# ---- the losses: PyTorch's Python layer over the C++ ops (generated bindings in _C._nn) ----
# As torch.nn.functional's: the legacy size_average / reduce arguments become a reduction string
# (with its deprecation warning), the target's size is checked or warned about, and the C++ op
# takes the reduction ('mean', 'sum', 'none').

def _legacy_reduction(size_average, reduce, reduction):
    """`reduction`, or the one PyTorch's legacy size_average / reduce stand for (warned)."""
    if size_average is None and reduce is None:
        if reduction not in ("none", "mean", "sum"):  # as PyTorch's _Reduction.get_enum, whatever its type
            raise ValueError(f"{reduction} is not a valid value for reduction")
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else "mean" if size_average else "sum"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  stacklevel=3)
    return reduction


def _warn_target_size(input, target):
    if not (target.size() == input.size()):
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _warn_target_size(input, target)
    return _nn.mse_loss(input, target, _legacy_reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _warn_target_size(input, target)
    return _nn.l1_loss(input, target, _legacy_reduction(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _warn_target_size(input, target)
    return _nn.smooth_l1_loss(input, target, _legacy_reduction(size_average, reduce, reduction), beta)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    return _nn.cross_entropy(input, target, weight, _legacy_reduction(size_average, reduce, reduction), ignore_index,
                             label_smoothing)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) "
                         "is deprecated. Please ensure they have the same size.")
    return _nn.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not (target.size() == input.size()):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _nn.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)

def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    return _nn.nll_loss(input, target, weight, _legacy_reduction(size_average, reduce, reduction), ignore_index)


# ---- windows, padding, dropout, embedding and normalization: PyTorch's Python layer ----

def _pair(x):
    """(x, x) for a number, tuple(x) for a sequence (torch.nn.modules.utils._pair)."""
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return tuple(itertools.repeat(x, 2))


def _ntuple1(x):
    """(x,) for a number, tuple(x) for a sequence (torch.nn.modules.utils._single)."""
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return (x,)


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size, each None entry replaced by the input's size there."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """max_pool2d returning (values, indices)."""
    return _nn.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max pooling; (values, indices) with return_indices."""
    if return_indices:
        return _nn.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _nn.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to ``output_size``; a None entry keeps the input's size there."""
    return _nn.adaptive_avg_pool2d(input, _list_with_default(output_size, input.size()))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a batched image: [N, C, H, W] -> [N, C*kh*kw, L]."""
    return _nn.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding blocks back into an image, the adjoint of unfold."""
    return _nn.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def pad(input, pad, mode="constant", value=None):
    """Pads ``input``; ``pad`` lists (left, right) pairs from the last dim on. Modes: 'constant'
    (``value``, 0 by default), 'reflect', 'replicate' and 'circular' (the last 1, 2 or 3 dims of a
    batched or unbatched input; negative pads crop)."""
    if mode == "constant":
        return _nn.pad(input, pad, 0.0 if value is None else value)
    return _pad_non_constant(input, pad, mode, value)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the rest by 1/(1-p) while training."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    result = _nn.dropout(input, p, training)
    if not inplace:
        return result
    if result is not input:
        input.copy_(result)
    return input


def _check_dropout_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


# SELU's negative saturation value -alpha * scale, as ATen's alpha dropout writes it
_ALPHA_DROPOUT_ALPHA = 1.7580993408473766


def _parser_typename(obj):
    """The type name PyTorch's argument parser prints (graft's own types as ``graft.dtype``)."""
    if isinstance(obj, _C.Tensor):
        return "Tensor"
    cls = type(obj)
    return f"graft.{cls.__name__}" if cls.__module__ == "graft" else cls.__name__


def _parser_types(name, arguments):
    """PyTorch's argument parser's TypeError for the first of ``arguments`` (name, kind, value, in
    signature order; kind 'Tensor', 'Tensor?', 'float' or 'bool') whose value is of another type."""
    for position, (arg, kind, value) in enumerate(arguments, 1):
        if kind == "Tensor?" and value is None:
            continue
        if kind.startswith("Tensor"):
            ok = isinstance(value, _C.Tensor)
        elif kind == "float":
            ok = isinstance(value, numbers.Real)
        else:
            ok = isinstance(value, bool)
        if not ok:
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be {kind.rstrip('?')}, not "
                            f"{_parser_typename(value)}")


def _vf_dropout_args(name, input, p, train):
    """The checks PyTorch's argument parser makes for ``name(Tensor input, float p, bool train)``
    (the _VF dropout ops): TypeError for another type; returns p as a float."""
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {_parser_typename(input)}")
    if isinstance(p, _C.Tensor):
        if p.dim() != 0 or p.requires_grad:
            raise TypeError(f"{name}(): argument 'p' (position 2) must be float, not Tensor")
        p = p.item()
    elif not isinstance(p, numbers.Real):
        raise TypeError(f"{name}(): argument 'p' (position 2) must be float, not {_parser_typename(p)}")
    if not (isinstance(train, bool) or (type(train).__module__ == "numpy" and type(train).__name__ == "bool_")):
        raise TypeError(f"{name}(): argument 'train' (position 3) must be bool, not {_parser_typename(train)}")
    return float(p), bool(train)


def _dropout_impl(input, p, train, inplace, feature, alpha):
    """ATen's _dropout_impl behind feature_dropout, alpha_dropout and feature_alpha_dropout: the
    input itself when nothing is dropped (p == 0, eval, no elements), ``input * 0`` for p == 1,
    else the input times a Bernoulli(1 - p) noise, one draw per element or (``feature``) per
    (sample, channel); the noise scaled by 1 / (1 - p), or (``alpha``) mapped so that a dropped
    unit takes SELU's saturation value and mean and variance are kept."""
    name = ("feature_" if feature else "") + ("alpha_dropout" if alpha else "dropout") + ("_" if inplace else "")
    p, train = _vf_dropout_args(name, input, p, train)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = _C.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input.mul(zero)
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = (input.size(0), input.size(1)) + (1,) * (input.dim() - 2)
    else:
        shape = tuple(input.shape)
    noise = _C.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    if not alpha:
        noise.div_(1 - p)
        return input.mul_(noise) if inplace else input.mul(noise)
    a = 1.0 / math.sqrt((_ALPHA_DROPOUT_ALPHA * _ALPHA_DROPOUT_ALPHA * p + 1) * (1 - p))
    b = noise.add(-1).mul_(_ALPHA_DROPOUT_ALPHA * a).add_(_ALPHA_DROPOUT_ALPHA * a * p)
    noise.mul_(a)
    return (input.mul_(noise) if inplace else input.mul(noise)).add_(b)


def _check_inplace_unsqueeze(input):
    """The refusal PyTorch's ``input.unsqueeze_(0)`` makes while grad mode is on: a leaf that
    requires grad, or a view of one, may not change in place."""
    if isinstance(input, _C.Tensor) and input.requires_grad and _C.is_grad_enabled():
        base = input._base
        if base is not None and base.is_leaf:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        if input.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _feature_dropout_unbatched(input, p, training, inplace, batched):
    """feature dropout of ``input``, seen with a batch dimension of 1 when not ``batched`` (as
    PyTorch's unsqueeze(0) ... squeeze(0); in place through the view, returning ``input``)."""
    if batched:
        return _dropout_impl(input, p, training, inplace, True, False)
    if inplace:
        _check_inplace_unsqueeze(input)
        _dropout_impl(input.unsqueeze(0), p, training, True, True, False)
        return input
    result = _dropout_impl(input.unsqueeze(0), p, training, False, True, False)
    return result.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a (N, C, L) or (C, L) input with probability p, scaling the
    rest by 1/(1-p) while training."""
    _check_dropout_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. "
                           "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
                           "spatial dimension, a channel dimension, and an optional batch dimension "
                           "(i.e. 2D or 3D inputs).")
    return _feature_dropout_unbatched(input, p, training, inplace, inp_dim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels (dim 1) with probability p, scaling the rest by 1/(1-p) while
    training. As PyTorch's: another rank than 3 or 4 is warned about, and a 3-D input is taken
    as (N, C, L) (channel-wise 1-D dropout), with a warning."""
    _check_dropout_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that dropout2d "
                      "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
                      "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).")
    # PyTorch does not support no-batch-dim inputs here yet: a 3-D input gets 1-D channel-wise
    # dropout (https://github.com/pytorch/pytorch/issues/77081)
    if inp_dim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
                      "is the channel dim. This behavior will change in a future release to interpret the "
                      "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
                      "channel-wise dropout behavior, please switch to using dropout1d instead.")
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability p,
    scaling the rest by 1/(1-p) while training (another rank is warned about)."""
    _check_dropout_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
                      "and will result in an error in a future release. To retain the behavior "
                      "and silence this warning, please use dropout instead. Note that dropout3d "
                      "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
                      "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).")
    return _feature_dropout_unbatched(input, p, training, inplace, inp_dim == 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout (for SELU networks): each dropped element takes SELU's negative saturation
    value, and the result is scaled and shifted to keep zero mean and unit variance."""
    _check_dropout_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1): the same draw for every element of a channel."""
    _check_dropout_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` the integer ``input`` names."""
    if padding_idx is not None:
        if not -weight.size(0) <= padding_idx < weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += weight.size(0)
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm is not supported by graft")
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported by graft")
    return _nn.embedding(weight, input, padding_idx, scale_grad_by_freq)


def _verify_batch_size(size):
    """PyTorch's refusal of batch statistics over one value per channel."""
    values = size[0]
    for d in size[2:]:
        values *= d
    if values == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Per-channel normalization with batch statistics (training) or the running ones."""
    if training:
        _verify_batch_size(input.size())
    return _nn.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalizes each group of channels per sample, then per-channel weight and bias."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return _nn.group_norm(input, num_groups, weight, bias, eps)


def relu(input, inplace=False):
    """max(x, 0); inplace writes into ``input`` and returns it."""
    if inplace:
        return input.relu_()
    return _C.relu(input)


def relu_(input):
    """In-place relu."""
    return input.relu_()


def threshold(input, threshold, value, inplace=False):
    """``value`` where input <= ``threshold``, input elsewhere; inplace writes into ``input``."""
    if inplace:
        return _C.threshold_(input, threshold, value)
    return _C.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """In-place threshold."""
    return _C.threshold_(input, threshold, value)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return _nn.silu_(input) if inplace else _nn.silu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, negative_slope * x otherwise."""
    return _nn.leaky_relu_(input, negative_slope) if inplace else _nn.leaky_relu(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return _nn.elu_(input, alpha) if inplace else _nn.elu(input, alpha)


# SELU's constants (Klambauer et al., 2017), as PyTorch's
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalising constants (EluBackward0, as PyTorch)."""
    return (_nn.elu_ if inplace else _nn.elu)(input, _SELU_ALPHA, _SELU_SCALE)


def hardsigmoid(input, inplace=False):
    """min(max(x + 3, 0), 6) / 6."""
    return _nn.hardsigmoid_(input) if inplace else _nn.hardsigmoid(input)


def hardswish(input, inplace=False):
    """x * min(max(x + 3, 0), 6) / 6."""
    return _nn.hardswish_(input) if inplace else _nn.hardswish(input)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return _nn.mish_(input) if inplace else _nn.mish(input)


def sigmoid(input):
    """1 / (1 + exp(-x))."""
    return _C.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return _C.tanh(input)


# PyTorch's ScalarType names, as its kernels' dtype refusals print them
_SCALAR_TYPE_NAME = {"bool": "Bool", "int32": "Int", "int64": "Long", "float32": "Float", "float64": "Double"}


def _scalar_type_name(dtype):
    return _SCALAR_TYPE_NAME[str(dtype).rpartition(".")[2]]


def _check_norm_input(input):
    if not input.is_floating_point():
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_scalar_type_name(input.dtype)} instead.")


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim`` (computed in ``dtype`` when given)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _C.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along ``dim``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _C.log_softmax(input, dim, dtype=dtype)


def one_hot(tensor, num_classes=-1):
    """int64 class indices -> int64 one-hot vectors in a new last dim of size num_classes
    (max + 1 when -1)."""
    if tensor.dtype != _C.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    with no_grad():
        if tensor.numel() > 0:
            if int(tensor.min()) < 0:
                raise RuntimeError("Class values must be non-negative.")
            top = int(tensor.max())
        else:
            top = -1
        if num_classes == -1:
            if tensor.numel() == 0:
                raise RuntimeError("Can not infer total number of classes from empty tensor.")
            num_classes = top + 1
        elif top >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
        classes = _C.arange(num_classes)
        return (tensor.unsqueeze(-1) == classes).long()


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(||x||_p, eps) along ``dim``."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported by graft")
    _check_norm_input(input)
    p = float(p)
    a = input.abs()
    if p == 0:  # the number of nonzero entries (a norm whose gradient is zero)
        norm = (a != 0).sum(dim, keepdim=True).to(input.dtype)
    elif p == float("inf"):
        norm = a.amax(dim, keepdim=True)
    elif p == float("-inf"):
        norm = a.amin(dim, keepdim=True)
    elif p > 0:
        # max(s^(1/p), eps) == max(s, eps^p)^(1/p) while eps^p is a positive float; clamping
        # before the root keeps the gradient finite for all-zero slices
        floor = eps ** p
        if floor > 0:
            return input / a.pow(p).sum(dim, keepdim=True).clamp_min(floor).pow(1.0 / p)
        norm = a.pow(p).sum(dim, keepdim=True).pow(1.0 / p)
    else:
        norm = a.pow(p).sum(dim, keepdim=True).pow(1.0 / p)
    return input / norm.clamp_min(eps)


# ---- attention-mask helpers (PyTorch 2.x's private F._canonical_mask / F._none_or_dtype) ----

def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask as an additive float one (-inf where True) of ``target_type``; a float mask
    as it is; another dtype refused. Warns when the mask's dtype differs from ``other_type``."""
    if mask is not None:
        is_float = mask.is_floating_point()
        if mask.dtype != _C.bool and not is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None and mask.dtype != other_type:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for "
                          "both instead.", stacklevel=2)
        if not is_float:
            mask = _C.zeros(mask.shape, dtype=target_type, device=mask.device).masked_fill(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    """The dtype of a tensor, None for None."""
    if input is None:
        return None
    if isinstance(input, _C.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


# ---- PyTorch's argument-parser checks for the functions written here as graft compositions
# (torch's are C++ ops behind its parser): the same TypeError for a wrong type, RuntimeError for
# an int beyond int64, and numbers taken from 0-dim tensors as PyTorch's parser takes them ----

_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _is_numpy_scalar(value, kind):
    cls = type(value)
    return cls.__module__ == "numpy" and any(k in cls.__name__ for k in kind)


def _parser_accepts(value, kind):
    """Whether PyTorch's argument parser takes ``value`` as a ``kind`` ('Tensor', 'Tensor?',
    'Scalar', 'float', 'int', 'bool')."""
    if kind in ("Tensor", "Tensor?"):
        return isinstance(value, _C.Tensor) or (value is None and kind == "Tensor?")
    if kind in ("ints", "ints?"):  # an IntArrayRef: a sequence of ints, or one int
        if value is None:
            return kind == "ints?"
        if isinstance(value, (tuple, list)):
            return all(_parser_accepts(v, "int") for v in value)
        return not isinstance(value, _C.Tensor) and _parser_accepts(value, "int")
    if kind == "bool":
        return isinstance(value, bool) or _is_numpy_scalar(value, ("bool",))
    if isinstance(value, _C.Tensor):  # a 0-dim tensor stands for a number
        if value.dim() != 0:
            return False
        if kind == "int":
            return not value.is_floating_point() and value.dtype != _C.bool
        return not value.requires_grad
    if kind == "int":
        return (isinstance(value, int) and not isinstance(value, bool)) or _is_numpy_scalar(value, ("int",))
    return isinstance(value, numbers.Real) or _is_numpy_scalar(value, ("int", "float", "bool"))


def _parse(fname, *params):
    """PyTorch's argument parser over ``params``, each (name, value, kind, position or None): a
    TypeError for the first argument of a wrong type, then RuntimeError for an int beyond int64
    where an int or a number is expected. Returns the values, numbers as Python numbers."""
    for name, value, kind, position in params:
        if not _parser_accepts(value, kind):
            expected = {"Tensor?": "Tensor", "Scalar": "Number", "ints": "tuple of ints",
                        "ints?": "tuple of ints"}.get(kind, kind)
            where = f" (position {position})" if position else ""
            if kind in ("ints", "ints?") and isinstance(value, (tuple, list)):
                pos = next(i for i, v in enumerate(value) if not _parser_accepts(v, "int"))
                raise TypeError(f"{fname}(): argument '{name}'{where} must be {expected}, but found element of type "
                                f"{_parser_typename(value[pos])} at pos {pos}")
            raise TypeError(f"{fname}(): argument '{name}'{where} must be {expected}, not {_parser_typename(value)}")
    values = []
    for name, value, kind, position in params:
        if kind in ("ints", "ints?"):
            if isinstance(value, (tuple, list)):
                value = [int(v.item()) if isinstance(v, _C.Tensor) else int(v) for v in value]
                bad = [i for i, v in enumerate(value) if not _INT64_MIN <= v <= _INT64_MAX]
                if bad:  # PyTorch 1.13's words (2.x: "failed to unpack the object at pos ...")
                    raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, but found element of type "
                                    f"int at pos {bad[0] + 1}")
            elif value is not None:
                value = _parse(fname, (name, value, "int", position))
        elif kind not in ("Tensor", "Tensor?", "bool"):
            if isinstance(value, _C.Tensor) or _is_numpy_scalar(value, ("int", "float", "bool")):
                value = value.item()
            if kind in ("int", "Scalar") and isinstance(value, int) and not _INT64_MIN <= value <= _INT64_MAX:
                raise RuntimeError("Overflow when unpacking long")
            if kind == "float":
                value = float(value)
        elif kind == "bool":
            value = bool(value)
        values.append(value)
    return values


def _not_implemented_for(kernel, input):
    """PyTorch's refusal of a dtype its kernel has no code for."""
    return RuntimeError(f"\"{kernel}\" not implemented for '{_scalar_type_name(input.dtype)}'")


def _floating_only(kernel, input):
    if not input.is_floating_point():
        raise _not_implemented_for(kernel, input)


def _wrap_dim(dim, ndim):
    """``dim`` in [0, ndim) (a 0-dim tensor has dims -1 and 0), or PyTorch's IndexError."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _result_type(a, b):
    """The dtype PyTorch's type promotion gives a binary op of tensors ``a`` and ``b`` (a 0-dim
    tensor counts only by its category)."""
    def probe(t):
        return _C.zeros(() if t.dim() == 0 else (1,), dtype=t.dtype)
    return (probe(a) + probe(b)).dtype


def _broadcast_shape(a, b):
    """The broadcast shape of tensors ``a`` and ``b``, or PyTorch's RuntimeError."""
    sa, sb = list(a.shape), list(b.shape)
    n = max(len(sa), len(sb))
    sa, sb = [1] * (n - len(sa)) + sa, [1] * (n - len(sb)) + sb
    for i, (x, y) in enumerate(zip(sa, sb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
    return [y if x == 1 else x for x, y in zip(sa, sb)]


def _write_back(input, result, inplace):
    """``result`` as the output of an in-place op (written into ``input``) or as it is."""
    if not inplace:
        return result
    input.copy_(result)
    return input


# ---- activations written as graft compositions (torch.nn.functional's: relu6, hardtanh, celu,
# glu, softsign, tanhshrink, softmin, rrelu, prelu) ----

def _hardtanh(fname, input, min_val, max_val, inplace):
    """min(max(x, min_val), max_val) with ATen's hardtanh gradient: zero at and beyond the bounds."""
    input, min_val, max_val = _parse(fname, ("input", input, "Tensor", 1), ("min_val", min_val, "Scalar", 2),
                                     ("max_val", max_val, "Scalar", 3))
    if input.dtype == _C.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if not input.is_floating_point():  # integer inputs: the bounds as integers of the input's type
        lo, hi = (int(v) if math.isfinite(v) else None for v in (min_val, max_val))
        return _write_back(input, input.clamp(lo, hi), inplace)
    outside = (input <= min_val).logical_or(input >= max_val)  # NaN is inside, as ATen's backward has it
    return _write_back(input, _C.where(outside, input.detach().clamp(min_val, max_val), input), inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val] (gradient zero outside the open interval)."""
    if min_val > max_val:  # PyTorch 2.x's check (1.13 clamps to max_val)
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh("hardtanh_" if inplace else "hardtanh", input, min_val, max_val, inplace)


def relu6(input, inplace=False):
    """min(max(x, 0), 6)."""
    return _hardtanh("relu6_" if inplace else "relu6", input, 0, 6, inplace)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    fname = "celu_" if inplace else "celu"
    input, alpha = _parse(fname, ("input", input, "Tensor", 1), ("alpha", alpha, "Scalar", 2))
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _floating_only("elu_cpu", input)
    return (_nn.elu_ if inplace else _nn.elu)(input, alpha, 1.0, 1.0 / alpha)


def glu(input, dim=-1):
    """The gated linear unit: a * sigmoid(b), a and b the two halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    input, dim = _parse("glu", ("input", input, "Tensor", 1), ("dim", dim, "int", 2))
    dim = _wrap_dim(dim, input.dim())
    size = input.size(dim)
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {size}")
    _floating_only("glu_cpu", input)
    half = size // 2
    return input.narrow(dim, 0, half) * input.narrow(dim, half, half).sigmoid()


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim`` (computed in ``dtype`` when given)."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    neg = -input
    if not neg.is_floating_point() and isinstance(dim, int):  # as PyTorch's: the dim is checked first, and
        _wrap_dim(dim, neg.dim())                           # an empty tensor runs no kernel (no dtype check)
        if neg.numel() == 0:
            return neg if dtype is None else neg.to(dtype)
    if dtype is None:
        return neg.softmax(dim)
    return neg.softmax(dim, dtype=dtype)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: while training each x <= 0 is scaled by its own draw from
    U(lower, upper); otherwise the slope is (lower + upper) / 2."""
    fname = "rrelu_" if inplace else "rrelu"
    input, lower, upper, training = _parse(fname, ("input", input, "Tensor", 1), ("lower", lower, "Scalar", 2),
                                           ("upper", upper, "Scalar", 3), ("training", training, "bool", 4))
    if not lower <= upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        slope = (lower + upper) / 2
        return _nn.leaky_relu_(input, slope) if inplace else _nn.leaky_relu(input, slope)
    _floating_only("rrelu_with_noise_out_cpu", input)
    with no_grad():
        draws = _C.empty(tuple(input.shape), dtype=input.dtype, device=input.device).uniform_(lower, upper)
        noise = _C.where(input <= 0, draws, _C.ones_like(draws))
    return _write_back(input, input * noise, inplace)


def prelu(input, weight):
    """x for x > 0, weight * x otherwise; a 1-D weight has one slope per channel (dim 1)."""
    input, weight = _parse("prelu", ("input", input, "Tensor", 1), ("weight", weight, "Tensor", 2))
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_scalar_type_name(input.dtype)} and "
                           f"{_scalar_type_name(weight.dtype)}")
    ndim = input.dim()
    if weight.numel() != 1:
        if ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.size(1) if ndim > 1 else 1
        if channels != weight.numel():
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    _floating_only("prelu_cpu", input)
    if ndim != weight.dim():
        weight = weight.reshape([weight.numel() if d == 1 else 1 for d in range(ndim)])
    positive = input > 0
    # the negative part through a where, so that an unselected +inf gives no NaN gradient to weight
    return _C.where(positive, input, weight * _C.where(positive, _C.zeros_like(input), input))


# ---- distances: cosine_similarity and pairwise_distance (ATen's compositions) ----

def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along ``dim`` (PyTorch 2.x's formula,
    each input divided by its norm first; 1.13 divided the dot product by the norms' product)."""
    x1, x2, dim, eps = _parse("cosine_similarity", ("x1", x1, "Tensor", 1), ("x2", x2, "Tensor", 2),
                              ("dim", dim, "int", 3), ("eps", eps, "float", 4))
    common = _result_type(x1, x2)
    if common not in (_C.float32, _C.float64):
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_scalar_type_name(common)}")
    x1 = x1 if x1.is_floating_point() else x1.to(common)
    x2 = x2 if x2.is_floating_point() else x2.to(common)
    shape = _broadcast_shape(x1, x2)
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = _C.linalg_vector_norm(x1, 2, dim, True).clone()
    n2 = _C.linalg_vector_norm(x2, 2, dim, True).clone()
    with no_grad():  # the clamp is not differentiated, as ATen's
        n1.clamp_(min=eps)
        n2.clamp_(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    x1, x2, p, eps, keepdim = _parse("pairwise_distance", ("x1", x1, "Tensor", 1), ("x2", x2, "Tensor", 2),
                                     ("p", p, "float", 3), ("eps", eps, "float", 4), ("keepdim", keepdim, "bool", 5))
    dim = max(x1.dim(), x2.dim()) - 1
    return _C.linalg_vector_norm(x1 - x2 + eps, p, dim, keepdim)


# ---- more losses, as torch.nn.functional's (ATen's compositions written in graft ops) ----

def _reduce(loss, reduction):
    """ATen's apply_loss_reduction: the mean, the sum, or the elementwise loss ('none')."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _floating_result(kernel, input, other):
    """The checks of a loss whose output takes the input's dtype (ATen's out= kernels): the
    promoted type must be floating and castable to the input's dtype."""
    common = _result_type(input, other)
    if common not in (_C.float32, _C.float64):
        raise _not_implemented_for(kernel, _C.zeros((), dtype=common))
    if not input.is_floating_point():
        raise RuntimeError(f"result type {_scalar_type_name(common)} can't be cast to the desired output type "
                           f"{_scalar_type_name(input.dtype)}")


class _XLogXSelf(_autograd_function.Function):
    """xlogy(t, t): t * log(t), 0 where t == 0, with ATen's xlogy gradient (NaN at t == 0)."""

    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return _C.where(t == 0, _C.zeros_like(t), t * t.log())

    @staticmethod
    def backward(ctx, grad):
        t, = ctx.saved_tensors
        return grad * (_C.where(t != 0, t.log(), _C.zeros_like(t)) + t / t)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """The KL divergence of log-probabilities ``input`` from ``target`` (probabilities, or
    log-probabilities with log_target); 'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        enum = _legacy_reduction(size_average, reduce, "mean")
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        enum = "sum" if reduction == "batchmean" else _legacy_reduction(None, None, reduction)
    input, target, log_target = _parse("kl_div", ("input", input, "Tensor", 1), ("target", target, "Tensor", 2),
                                       ("log_target", log_target, "bool", None))
    if not input.is_floating_point() or not target.is_floating_point():
        raise RuntimeError("kl_div: Integral inputs not supported.")
    # elementwise at the output's shape and dtype (the gradient of a broadcast target sums the
    # elementwise ones, as ATen's)
    target = target.to(_result_type(input, target)).expand(_broadcast_shape(input, target))
    if log_target:
        output = target.exp() * (target - input)
    else:
        output = _XLogXSelf.apply(target) - target * input
    reduced = _reduce(output, enum)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def _huber(input, target, delta):
    """The elementwise Huber loss: 0.5 z^2 for |z| < delta, delta (|z| - delta / 2) beyond."""
    _floating_result("huber_cpu", input, target)
    z = (input - target).abs().to(input.dtype)
    small = z < delta
    zs = _C.where(small, z, _C.zeros_like(z))  # the unselected branch stays finite (no NaN gradient)
    return _C.where(small, 0.5 * zs * zs, delta * (z - 0.5 * delta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Quadratic for |input - target| < delta, linear beyond; ``weight`` (PyTorch 2.x) scales
    each element."""
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=2)
    shape = _broadcast_shape(input, target)
    input, target = input.expand(shape), target.expand(shape)
    if weight is None:
        enum = _legacy_reduction(None, None, reduction)
    elif weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    input, target, delta = _parse("huber_loss", ("input", input, "Tensor", 1), ("target", target, "Tensor", 2),
                                  ("delta", delta, "float", 4))
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    loss = _huber(input, target, delta)
    if weight is None:
        return _reduce(loss, enum)
    loss = loss * weight
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return _reduce(loss, reduction)


def _reduction_enum(size_average, reduce, reduction):
    """PyTorch's reduction argument of a loss op: the legacy pair (warned) or ``reduction``."""
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce, "mean")
    return _legacy_reduction(None, None, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)) (targets are 1 or -1)."""
    enum = _reduction_enum(size_average, reduce, reduction)
    input, target = _parse("soft_margin_loss", ("input", input, "Tensor", 1), ("target", target, "Tensor", 2))
    _check_not_differentiable("soft_margin_loss", "target", target)
    shape = _broadcast_shape(input, target)
    if shape != list(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape {shape}")
    neg = -input  # ATen negates into an output of the input's dtype, then scales by the target in place
    if not input.is_floating_point():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_scalar_type_name(input.dtype)}")
    return _reduce((neg * target).to(input.dtype).exp().log1p(), enum)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    input1, input2, target, margin = _parse("margin_ranking_loss", ("input1", input1, "Tensor", 1),
                                            ("input2", input2, "Tensor", 2), ("target", target, "Tensor", 3),
                                            ("margin", margin, "float", 4))
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), enum)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """x where target is 1, max(0, margin - x) where target is -1."""
    enum = _reduction_enum(size_average, reduce, reduction)
    input, target, margin = _parse("hinge_embedding_loss", ("input", input, "Tensor", 1),
                                   ("target", target, "Tensor", 2), ("margin", margin, "float", 3))
    # ATen's `margin - input`: the margin filled into a tensor of the input's dtype, then the subtraction
    margin_clamp = (_C.full(tuple(input.shape), margin, dtype=input.dtype) - input).clamp_min(0)
    output_margin = _C.where(target != 1, margin_clamp, _C.zeros((), dtype=margin_clamp.dtype))
    output_self = _C.where(target != -1, input, _C.zeros((), dtype=input.dtype))
    return _reduce(output_margin + output_self, enum)


_COSINE_EMBEDDING_EPSILON = 1e-12


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where target is -1."""
    enum = _reduction_enum(size_average, reduce, reduction)
    input1, input2, target, margin = _parse("cosine_embedding_loss", ("input1", input1, "Tensor", 1),
                                            ("input2", input2, "Tensor", 2), ("target", target, "Tensor", 3),
                                            ("margin", margin, "float", 4))
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if targ_dim == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = (input1 * input2).sum(targ_dim)
    mag_square1 = (input1 * input1).sum(targ_dim) + _COSINE_EMBEDDING_EPSILON
    mag_square2 = (input2 * input2).sum(targ_dim) + _COSINE_EMBEDDING_EPSILON
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    zero = _C.zeros((), dtype=cos.dtype)
    output_pos = _C.where(target == 1, 1 - cos, zero)
    output_neg = _C.where(target == -1, (cos - margin).clamp_min(0), zero)
    return _reduce(output_pos + output_neg, enum)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance; with
    swap, d(positive, negative) stands in for the negative distance when smaller."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if margin <= 0:  # PyTorch 2.x's check (1.13 took any margin)
        raise ValueError(f"margin must be greater than 0, got {margin}")
    anchor, positive, negative, margin, p, eps, swap = _parse(
        "triplet_margin_loss", ("anchor", anchor, "Tensor", 1), ("positive", positive, "Tensor", 2),
        ("negative", negative, "Tensor", 3), ("margin", margin, "float", 4), ("p", p, "float", 5),
        ("eps", eps, "float", 6), ("swap", swap, "bool", 7))
    a_dim, p_dim, n_dim = anchor.dim(), positive.dim(), negative.dim()
    if not a_dim == p_dim == n_dim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = _C.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), enum)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with any distance function
    ``d`` (pairwise_distance by default); with swap, d(positive, negative) stands in for the
    negative distance when smaller."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not a_dim == p_dim == n_dim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _C.minimum(dist_neg, distance_function(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """The Poisson negative log-likelihood: exp(input) - target * input (log_input), else
    input - target * log(input + eps); ``full`` adds Stirling's term where target > 1."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, "mean")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    input, target, log_input, full, eps = _parse(
        "poisson_nll_loss", ("input", input, "Tensor", 1), ("target", target, "Tensor", 2),
        ("log_input", log_input, "bool", 3), ("full", full, "bool", 4), ("eps", eps, "float", 5))
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """The Gaussian negative log-likelihood 0.5 (log(var) + (input - target)^2 / var), var
    clamped to eps (without gradient) and broadcast as PyTorch 2.x's (one fewer dim, or one
    mismatched dim of size 1)."""
    if isinstance(var, float):  # PyTorch 2.x takes a float var (1.13 needed a tensor)
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _C.ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """The mean over classes of the binary logistic losses of ``input`` at 0/1 ``target``."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, "mean")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def _margin_loss_frames(name, input, target):
    """(nframe, dim) of a multi-class margin loss's input (a non-empty vector or a matrix whose
    batch may be empty), or ATen's refusal."""
    ndims = input.dim()
    if not ((ndims == 2 and input.size(1) != 0) or (ndims == 1 and input.size(0) != 0) or ndims == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if ndims <= 1:
        return 1, (1 if ndims == 0 else input.size(0))
    return input.size(0), input.size(1)


def _check_not_differentiable(fname, name, tensor):
    """ATen's refusal of an argument its op has no derivative for, while grad mode is on."""
    if tensor is not None and tensor.requires_grad and _C.is_grad_enabled():
        raise RuntimeError(f"The function '{fname}' is not differentiable with respect to argument '{name}'. This "
                           "input cannot have requires_grad True.")


def _as_int64(value):
    """A 0-dim tensor's value as int64, or c10's RuntimeError when it does not fit."""
    v = value.item()
    if isinstance(v, float) and not (math.isfinite(v) and _INT64_MIN <= v < 2.0 ** 63):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return int(v)


def _empty_margin_loss(input, nframe, dim, frames):
    """The zero loss of an empty batch, of shape ``frames``, in the input's graph."""
    per_frame = input.reshape(nframe, dim).sum(1) * 0
    return per_frame if frames else per_frame.sum()


def _check_long_target(target):
    if target.dtype != _C.int64:
        raise RuntimeError(f"expected scalar type Long but found {_scalar_type_name(target.dtype)}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """The multi-class hinge loss: for each sample, the mean over the other classes d of
    max(0, margin - x[target] + x[d])^p, scaled by weight[target]."""
    enum = _reduction_enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    input, target, p, margin, weight = _parse(
        "multi_margin_loss", ("input", input, "Tensor", 1), ("target", target, "Tensor", 2), ("p", p, "Scalar", 3),
        ("margin", margin, "Scalar", 4), ("weight", weight, "Tensor?", 5))
    _check_not_differentiable("multi_margin_loss", "weight", weight)
    nframe, dim = _margin_loss_frames("multi_margin_loss", input, target)
    if not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and not (weight.dim() <= 1 and weight.numel() == dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {list(weight.shape)}")
    frames = (nframe,) if enum == "none" and target.dim() > 0 else ()
    if input.numel() == 0:
        return _empty_margin_loss(input, nframe, dim, frames)
    _floating_only("multi_margin_loss_cpu_kernel", input)
    _check_long_target(target)
    if weight is not None and weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_type_name(input.dtype)} but found "
                           f"{_scalar_type_name(weight.dtype)}")
    t = target.reshape(nframe, 1)
    if bool(((t < 0) | (t >= dim)).any()):
        raise RuntimeError("target out of range")
    x = input.reshape(nframe, dim)
    z = margin - x.gather(1, t) + x
    hit = (z > 0) & (_C.arange(dim).reshape(1, dim) != t)
    h = _C.where(hit, z, _C.zeros((), dtype=z.dtype))
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight.detach().index_select(0, t.reshape(-1)).reshape(nframe, 1)
    loss = h.sum(1) / dim
    return _reduce(loss, enum).reshape(frames) if enum == "none" else _reduce(loss, enum)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: ``target`` lists each sample's classes, ended by the first -1;
    the loss sums max(0, 1 - (x[j] - x[i])) over its classes j and the other classes i, over the
    number of classes."""
    enum = _reduction_enum(size_average, reduce, reduction)
    input, target = _parse("multilabel_margin_loss", ("input", input, "Tensor", 1), ("target", target, "Tensor", 2))
    nframe, dim = _margin_loss_frames("multilabel_margin_loss", input, target)
    if input.dim() <= 1:
        consistent = target.dim() <= 1 and target.numel() == dim
    else:
        consistent = target.dim() == 2 and target.size(0) == nframe and target.size(1) == dim
    if not consistent:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    frames = () if enum != "none" or target.dim() <= 1 else (nframe,)
    if input.numel() == 0:
        return _empty_margin_loss(input, nframe, dim, frames)
    if _as_int64(target.min()) < -1 or _as_int64(target.max()) >= dim:
        raise RuntimeError("argument #2 'target' is out of range")
    _floating_only("multilabel_margin_loss_forward_out_frame", input)
    _check_long_target(target)
    x, t = input.reshape(nframe, dim), target.reshape(nframe, dim)
    listed = (t < 0).long().cumsum(1) == 0  # the targets before the first -1
    tc = t.clamp(0, None)
    is_target = _C.zeros((nframe, dim), dtype=x.dtype).scatter_add(1, tc, listed.to(x.dtype)) > 0
    z = 1 - x.gather(1, tc).unsqueeze(2) + x.unsqueeze(1)  # [frame, listed target j, class i]
    hit = listed.unsqueeze(2) & is_target.logical_not().unsqueeze(1) & (z > 0)
    loss = _C.where(hit, z, _C.zeros((), dtype=z.dtype)).sum((1, 2)) / dim
    return _reduce(loss, enum).reshape(frames) if enum == "none" else _reduce(loss, enum)



# ---- F.pad's reflect, replicate and circular modes: each padded dim is an index_select of
# computed source positions (so autograd sums the gradient of repeated positions) ----

def _parse_int_list(fname, name, value, position):
    """A tuple/list of ints as PyTorch's parser takes it (0-dim integer tensors included)."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be tuple of ints, not "
                        f"{_parser_typename(value)}")
    out = []
    for i, v in enumerate(value):
        if not _parser_accepts(v, "int"):
            raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be tuple of ints, but found "
                            f"element of type {_parser_typename(v)} at pos {i}")
        v = int(v.item()) if isinstance(v, _C.Tensor) else int(v)
        if not _INT64_MIN <= v <= _INT64_MAX:
            raise TypeError(f"{fname}(): argument '{name}' failed to unpack the object at pos {i} with error "
                            "\"Overflow when unpacking long long\"")
        out.append(v)
    return out


def _pad_source_index(mode, size, lo, hi):
    """The source positions (an int64 tensor) along a dim of ``size`` of its lo + size + hi padded
    positions."""
    i = _C.arange(-lo, size + hi, dtype=_C.int64)
    if mode == "reflect":
        i = i.abs()
        return _C.where(i >= size, 2 * (size - 1) - i, i)
    if mode == "replicate":
        return i.clamp(0, size - 1)
    # circular, as ATen's: negative pads crop first, positive ones wrap around what is left
    start, kept = max(-lo, 0), size - max(-lo, 0) - max(-hi, 0)
    i = _C.arange(-max(lo, 0), kept + max(hi, 0), dtype=_C.int64)
    if kept <= 0 and i.numel():
        raise RuntimeError("Padding value causes wrapping around more than once.")
    return (i.remainder(kept) if kept > 0 else i) + start


def _check_pad_shape(mode, input, pads, k):
    """ATen's checks of a reflect / replicate / circular pad of the last ``k`` dims."""
    sizes = list(input.shape)
    names = "DHW"[3 - k:]
    if mode != "circular":
        first = 0 if input.dim() == k + 1 else 1
        if any(d == 0 for d in sizes[first:]):
            raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
                               f"other non-zero dimensions for input, but got: {sizes}")
    outs = []
    for i in range(k):
        size, (lo, hi) = sizes[-k + i], pads[k - 1 - i]
        if mode == "reflect" and not (lo < size and hi < size):
            raise RuntimeError(f"Argument #{4 + 2 * (k - 1 - i)}: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension {input.dim() - k + i} of "
                               f"input {sizes}")
        if mode == "circular" and not (lo <= size and hi <= size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        outs.append(size + lo + hi)
    if mode == "circular":
        if any(o < 0 for o in outs):
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    elif any(o < 1 for o in outs):
        given = ", ".join(f"{n}: {sizes[-k + i]}" for i, n in enumerate(names))
        got = " ".join(f"{n}: {o}" for n, o in zip(names, outs))
        raise RuntimeError(f"input ({given}) is too small. Calculated output {got}")
    out_sizes = sizes[:-k] + outs
    if math.prod(out_sizes) * input.element_size() > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={out_sizes}")


def _pad_non_constant(input, pad, mode, value):
    """F.pad's 'reflect', 'replicate' and 'circular' modes, with ATen's checks (PyTorch 2.x's)."""
    input = _parse("pad", ("input", input, "Tensor", 1))[0]
    pad = _parse_int_list("pad", "pad", pad, 2)
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not {_parser_typename(mode)}")
    value = None if value is None else _parse("pad", ("value", value, "float", 4))[0]
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    ndim = input.dim()
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > ndim * 2:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {ndim}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {ndim}D input tensor.")
    pads = [(pad[2 * i], pad[2 * i + 1]) for i in range(k)]  # from the last dim on
    _check_pad_shape(mode, input, pads, k)
    if mode != "circular" and input.dtype == _C.bool:
        raise _not_implemented_for(f"{'reflection' if mode == 'reflect' else 'replication'}_pad{k}d", input)
    out = input
    for i, (lo, hi) in enumerate(pads):
        dim = ndim - 1 - i
        out = out.index_select(dim, _pad_source_index(mode, input.size(dim), lo, hi))
    return out


# ---- max unpooling: the partial inverse of max pooling (ATen's max_unpool2d / max_unpool3d,
# written as an index_put into zeros, whose gradient is the gather PyTorch's backward does) ----

def _ntuple3(x):
    """(x, x, x) for a number, tuple(x) for a sequence (torch.nn.modules.utils._triple)."""
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return (x, x, x)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """The spatial output size: given (the last dims only, or N and C too), checked against the
    sizes that pooling maps to the input's, else the smallest one."""
    input_size = input.size()
    n = len(kernel_size)
    default_size = [(input_size[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        ret = default_size
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(n):
            min_size, max_size = default_size[d] - stride[d], default_size[d] + stride[d]
            if not min_size < output_size[d] < max_size:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and '
                                 f'{max_size})')
        ret = output_size
    for d in range(n):
        if ret[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return [int(v) for v in ret]


def _check_unpool_indices(name, indices):
    """The argument parser's refusal of a non-tensor ``indices``, which PyTorch's binding gives."""
    if not isinstance(indices, _C.Tensor):
        raise TypeError(f"{name}(): argument 'indices' (position 2) must be Tensor, not {type(indices).__name__}")


def _max_unpool(input, indices, output_size, stride=None):
    """ATen's max_unpool2d (``stride`` None) / max_unpool3d: checks, then each plane's values
    written at its flat indices into a zero plane of ``output_size``."""
    nd = len(output_size)
    name = f"max_unpooling{nd}d"
    if indices.dtype != _C.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_scalar_type_name(indices.dtype)}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {name} should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    if list(input.shape) != list(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    for i in range(1, input.dim()):
        if input.size(i) <= 0:
            raise RuntimeError(f"{name}_forward_out_cpu(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {i} being empty")
    if stride is not None and not all(s > 0 for s in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"max_unpool{nd}d\" not implemented for '{_scalar_type_name(input.dtype)}'")
    batch_shape = list(input.shape[:input.dim() - nd])
    rows, plane, n_in = math.prod(batch_shape), math.prod(output_size), math.prod(input.shape[-nd:])
    idx = indices.reshape(rows, n_in)
    bad = (idx < 0) | (idx >= plane)
    if bool(bad.any()):
        sizes = "x".join(str(s) for s in output_size)
        raise RuntimeError(f"Found an invalid max index: {idx[bad][0].item()} (output volumes are of size {sizes})")
    flat = (idx + _C.arange(rows, device=input.device).unsqueeze(1) * plane).reshape(-1)
    out = _C.index_put(_C.zeros(rows * plane, dtype=input.dtype, device=input.device), (flat,), input.reshape(-1))
    return out.reshape(batch_shape + list(output_size))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: zeros of the unpooled length with ``input``'s values at
    ``indices`` (as max_pool1d's return_indices gives them). (N, C, L) or (C, L)."""
    kernel_size = _ntuple1(kernel_size)
    stride = _ntuple1(stride) if stride is not None else kernel_size
    padding = _ntuple1(padding)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1]).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d: zeros of the unpooled size with ``input``'s values at
    the flat positions h * W + w ``indices`` gives. (N, C, H, W) or (C, H, W)."""
    kernel_size = _pair(kernel_size)
    stride = _pair(stride) if stride is not None else kernel_size
    padding = _pair(padding)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    _check_unpool_indices("max_unpool2d", indices)
    return _max_unpool(input, indices, size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of a 3-d max pooling (indices d * H * W + h * W + w, as PyTorch's
    max_pool3d gives them; graft has no max_pool3d yet). (N, C, D, H, W) or (C, D, H, W)."""
    kernel_size = _ntuple3(kernel_size)
    stride = _ntuple3(stride) if stride is not None else kernel_size
    padding = _ntuple3(padding)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    _check_unpool_indices("max_unpool3d", indices)
    for what, values in (("output_size", size), ("stride", stride), ("padding", padding)):
        if len(values) != 3:
            but = f"but got {len(values)} elements." if what == "output_size" else f"but got: {len(values)} elements."
            raise RuntimeError(f"There should be exactly three elements (depth, height, width) in {what}, {but}")
    return _max_unpool(input, indices, size, stride)


# ---- 1-d pooling over the 2-d ops (ATen's own route: unsqueeze(-2), pool, squeeze(-2)),
# adaptive max pooling and power-average (LP) pooling ----

def _check_dim_range(fname, input, lo, hi):
    """ATen's checkDimRange(lo <= dim < hi) of argument #1 'self'."""
    if not lo <= input.dim() < hi:
        raise RuntimeError(f"Expected {lo} to {hi - 1} dimensions, but got {input.dim()}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {fname})")


def _check1d(fname, name, values):
    if len(values) != 1:
        raise RuntimeError(f"{fname}() argument '{name}' should contain one int (got {len(values)})")


def _check_max_pool1d(input, kernel, stride, padding, dilation, ceil_mode):
    """ATen's check_max_pool1d (PyTorch 2.x's messages)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"max_pool1d() Expected 2D or 3D input tensor, but got {list(input.shape)}")
    for name, vals, what in (("kernel_size", kernel, "an int, list of ints or tuple of ints"),
                             ("stride", stride, "None, an int, list of ints, or tuple of ints"),
                             ("padding", padding, "an int, list of ints, or tuple of ints"),
                             ("dilation", dilation, "an int, list of ints or tuple of ints")):
        if len(vals) != 1 and not (name == "stride" and not vals):
            raise RuntimeError(f"max_pool1d() {name} must be {what} of size 1 but got size {len(vals)}")
    k, s, p, d = kernel[0], (stride or kernel)[0], padding[0], dilation[0]
    for name, v, ok, what in (("kernel_size", k, k > 0, "greater than zero"), ("stride", s, s > 0, "greater than zero"),
                              ("padding", p, p >= 0, "non-negative")):
        if not ok:
            raise RuntimeError(f"max_pool1d() {name} must be {what}, but got {v}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    span = input.size(-1) + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= input.size(-1) + p:
        out -= 1
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def _max_pool1d_args(fname, input, kernel_size, stride, padding, dilation, ceil_mode):
    input, kernel, stride, padding, dilation, ceil_mode = _parse(
        fname, ("input", input, "Tensor", 1), ("kernel_size", kernel_size, "ints", 2), ("stride", stride, "ints?", 3),
        ("padding", padding, "ints", 4), ("dilation", dilation, "ints", 5), ("ceil_mode", ceil_mode, "bool", 6))
    return input, kernel, stride or [], padding, dilation, ceil_mode


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool1d returning (values, indices): the 2-d op over input.unsqueeze(-2), as ATen's."""
    input, kernel, stride, padding, dilation, ceil_mode = _max_pool1d_args(
        "max_pool1d_with_indices", input, kernel_size, stride, padding, dilation, ceil_mode)
    stride = stride or kernel
    _check_dim_range("max_pool1d", input, 2, 4)
    for name, vals in (("kernel_size", kernel), ("stride", stride), ("padding", padding), ("dilation", dilation)):
        _check1d("max_pool1d", name, vals)
    out, idx = _nn.max_pool2d_with_indices(input.unsqueeze(-2), (1, kernel[0]), (1, stride[0]), (0, padding[0]),
                                           (1, dilation[0]), ceil_mode)
    return out.squeeze(-2), idx.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of the last dim of a (N, C, L) or (C, L) input; (values, indices) with
    return_indices."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    input, kernel, stride, padding, dilation, ceil_mode = _max_pool1d_args(
        "max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode)
    ndim = input.dim()
    if not ((ndim == 2 and input.size(0) != 0 and input.size(1) != 0)
            or (ndim == 3 and input.size(1) != 0 and input.size(2) != 0)):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    _check_max_pool1d(input, kernel, stride, padding, dilation, ceil_mode)  # PyTorch 2.x's checks
    if not input.is_floating_point():
        raise _not_implemented_for("max_pool1d_impl", input)
    stride = stride or kernel
    out = _nn.max_pool2d(input.unsqueeze(-2), (1, kernel[0]), (1, stride[0]), (0, padding[0]), (1, dilation[0]),
                         ceil_mode)
    return out.squeeze(-2)


def _avg_pool2d_any(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """avg_pool2d with ATen's dtypes: floating inputs, and int64 (the mean truncated towards zero,
    computed in float64); another dtype is refused after the shape checks."""
    if input.dim() < 3:  # ATen reads the channel count (dim -3) first
        raise IndexError("Dimension specified as -3 but tensor has no dimensions" if input.dim() == 0 else
                         f"Dimension out of range (expected to be in range of [{-input.dim()}, {input.dim() - 1}], "
                         "but got -3)")
    if input.is_floating_point():
        return _nn.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad)
    out = _nn.avg_pool2d(input.double(), kernel_size, stride, padding, ceil_mode, count_include_pad)
    if input.dtype != _C.int64:
        raise _not_implemented_for("avg_pool2d", input)
    return out.trunc().to(input.dtype)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over windows of the last dim of a (N, C, L) or (C, L) input (an int64 input: the
    mean truncated towards zero, as ATen's integer kernel)."""
    input, kernel, stride, padding, ceil_mode, count_include_pad = _parse(
        "avg_pool1d", ("input", input, "Tensor", 1), ("kernel_size", kernel_size, "ints", 2),
        ("stride", stride, "ints?", 3), ("padding", padding, "ints", 4), ("ceil_mode", ceil_mode, "bool", 5),
        ("count_include_pad", count_include_pad, "bool", 6))
    stride = stride or kernel
    _check_dim_range("avg_pool1d", input, 2, 4)
    for name, vals in (("kernel_size", kernel), ("stride", stride), ("padding", padding)):
        _check1d("avg_pool1d", name, vals)
    out = _avg_pool2d_any(input.unsqueeze(-2), (1, kernel[0]), (1, stride[0]), (0, padding[0]), ceil_mode,
                          count_include_pad)
    return out.squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of the last dim to ``output_size``."""
    input, size = _parse("adaptive_avg_pool1d", ("input", input, "Tensor", 1), ("output_size", output_size, "ints", 2))
    _check_dim_range("adaptive_avg_pool1d", input, 2, 4)
    _check1d("adaptive_avg_pool1d", "output_size", size)
    x = input.unsqueeze(-2)
    if input.is_floating_point():
        return _nn.adaptive_avg_pool2d(x, (1, size[0])).squeeze(-2)
    out = _nn.adaptive_avg_pool2d(x.double(), (1, size[0])).squeeze(-2)  # the shape checks
    if input.numel() != 0:  # an empty input runs no kernel, whatever its dtype
        raise _not_implemented_for("adaptive_avg_pool2d", input)
    return out.to(input.dtype)


def _adaptive_windows(size, out):
    """ATen's adaptive pooling windows along a dim: [floor(i * size / out), ceil((i + 1) * size / out))
    for each output i, as an [out, k] int64 tensor of positions (a short window repeats its last
    position), k the longest window."""
    starts = [(i * size) // out for i in range(out)]
    ends = [-((-(i + 1) * size) // out) for i in range(out)]
    k = max(e - s for s, e in zip(starts, ends))
    return _C.tensor([[min(s + j, e - 1) for j in range(k)] for s, e in zip(starts, ends)], dtype=_C.int64)


def _adaptive_max_pool2d(fname, input, oh, ow):
    """(values, indices) of adaptive max pooling of a (N, C, H, W) or (C, H, W) input to oh x ow;
    each value is gathered from the first maximum of its window (a NaN counts as the maximum)."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    for i in range(1, input.dim()):
        if input.size(i) <= 0:
            raise RuntimeError(f"{fname}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {i} being empty")
    shape = list(input.shape[:-2]) + [oh, ow]
    if min(shape) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {shape}")
    if math.prod(shape) * input.element_size() > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={shape}")
    values, indices = _C.empty(shape, dtype=input.dtype), _C.empty(shape, dtype=_C.int64)  # a huge size fails here
    _floating_only("adaptive_max_pool2d", input)
    if values.numel() == 0:
        return values + input.sum() * 0, indices
    H, W = input.size(-2), input.size(-1)
    rows, cols = _adaptive_windows(H, oh), _adaptive_windows(W, ow)
    flat = (rows.reshape(oh, 1, rows.size(1), 1) * W + cols.reshape(1, ow, 1, cols.size(1))).reshape(
        oh * ow, rows.size(1) * cols.size(1))  # [cell, position in its window]
    lead = tuple(input.shape[:-2])
    x = input.reshape(lead + (H * W,))
    with no_grad():
        windows = x.index_select(-1, flat.reshape(-1)).reshape(lead + tuple(flat.shape))
        nan = windows.isnan()
        pick = _C.where(nan.any(-1, keepdim=True), nan.to(_C.int64).argmax(-1, keepdim=True),
                        windows.argmax(-1, keepdim=True))
        indices = flat.expand(lead + tuple(flat.shape)).gather(-1, pick).reshape(lead + (oh * ow,))
    return x.gather(-1, indices).reshape(shape), indices.reshape(shape)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool2d returning (values, indices): indices are positions h * W + w."""
    output_size = _list_with_default(output_size, input.size())
    input, size = _parse("adaptive_max_pool2d", ("input", input, "Tensor", 1), ("output_size", output_size, "ints", 2))
    size = size * 2 if len(size) == 1 and not isinstance(output_size, (tuple, list)) else size
    if len(size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    return _adaptive_max_pool2d("adaptive_max_pool2d", input, size[0], size[1])


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to ``output_size`` (a None entry keeps that dim); (values, indices) with
    return_indices."""
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool1d returning (values, indices)."""
    input, size = _parse("adaptive_max_pool1d", ("input", input, "Tensor", 1), ("output_size", output_size, "ints", 2))
    _check_dim_range("adaptive_max_pool1d", input, 2, 4)
    _check1d("adaptive_max_pool1d", "output_size", size)
    for i in range(1, input.dim()):
        if input.size(i) <= 0:
            raise RuntimeError(f"adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, "
                               f"but input has sizes {list(input.shape)} with dimension {i} being empty")
    values, indices = _adaptive_max_pool2d("adaptive_max_pool2d", input.unsqueeze(-2), 1, size[0])
    return values.squeeze(-2), indices.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of the last dim to ``output_size``; (values, indices) with return_indices."""
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, max_pool, avg_pool, kernel_numel):
    if isinstance(norm_type, (int, float)):
        if norm_type == 0:
            raise ValueError(f"norm_type must be a non-zero value, but got {norm_type}")
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kernel_numel).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p); p = inf is max pooling of |x| (PyTorch 2.x)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, max_pool1d, avg_pool1d, kernel_size)


def _max_pool2d_any(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """max_pool2d with PyTorch 2.x's dtypes: an int64 input pooled through float64."""
    if input.dtype == _C.int64:
        return max_pool2d(input.double(), kernel_size, stride, padding, dilation, ceil_mode).to(_C.int64)
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each kh x kw window of x^p)^(1/p); p = inf is max pooling of |x| (PyTorch 2.x)."""
    kw, kh = _pair(kernel_size)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, _max_pool2d_any, _avg_pool2d_any, kw * kh)


# ---- rearrangements: pixel_shuffle, pixel_unshuffle, channel_shuffle (reshape / permute) ----

def pixel_shuffle(input, upscale_factor):
    """[*, C * r * r, H, W] -> [*, C, H * r, W * r]."""
    input, r = _parse("pixel_shuffle", ("input", input, "Tensor", 1), ("upscale_factor", upscale_factor, "int", 2))
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    lead = tuple(input.shape[:-3])
    n = len(lead)
    x = input.reshape(lead + (c // (r * r), r, r, h, w))
    x = x.permute(list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2])
    return x.reshape(lead + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H * r, W * r] -> [*, C * r * r, H, W]."""
    input, r = _parse("pixel_unshuffle", ("input", input, "Tensor", 1),
                      ("downscale_factor", downscale_factor, "int", 2))
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    c, h, w = input.shape[-3:]
    for name, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={size} is not divisible by {r}")
    if input.numel() == 0:  # ATen returns an empty input's copy unchanged
        return input.clone()
    lead = tuple(input.shape[:-3])
    n = len(lead)
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3])
    return x.reshape(lead + (c * r * r, h // r, w // r))


def channel_shuffle(input, groups):
    """The channels (dim 1) of [N, C, *] regrouped: [N, g, C / g, *] transposed to [N, C / g, g, *]."""
    input, groups = _parse("channel_shuffle", ("input", input, "Tensor", 1), ("groups", groups, "int", 2))
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.size(1)
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n, rest = input.size(0), tuple(input.shape[2:])
    return input.reshape((n, groups, c // groups) + rest).transpose(1, 2).reshape((n, c) + rest)


# ---- interpolate / upsample: each resized dim is an index_select of computed source positions
# (nearest) or a weighted sum of two of them (linear), as ATen's CPU kernels compute them ----

def _is_integer(x):
    """int, a NumPy integer, or an integer tensor (torch.nn.functional._is_integer)."""
    if isinstance(x, int):
        return True
    if _is_numpy_scalar(x, ("int",)):
        return True
    return isinstance(x, _C.Tensor) and not x.is_floating_point()


def _interp_scale(in_size, out_size, scale, align_corners, dtype):
    """ATen's area_pixel_compute_scale / compute_scales_value, as a 0-dim tensor of ``dtype`` (its
    opmath type)."""
    if align_corners:
        return _C.tensor(float(in_size - 1), dtype=dtype) / (out_size - 1) if out_size > 1 else \
            _C.tensor(0.0, dtype=dtype)
    if scale is not None and scale > 0:
        return _C.tensor(1.0 / scale, dtype=dtype)
    return _C.tensor(float(in_size), dtype=dtype) / out_size


def _nearest_index(in_size, out_size, scale, exact):
    """The source position of each output position along one dim (ATen's nearest_idx /
    nearest-exact, computed in float32 as its kernels)."""
    pos = _C.arange(out_size, dtype=_C.int64)
    if not exact and out_size == in_size:
        return pos
    if not exact and out_size == 2 * in_size:
        return pos.floor_divide(2)
    s = _interp_scale(in_size, out_size, scale, False, _C.float32)
    src = ((pos.to(_C.float32) + 0.5) * s) if exact else pos.to(_C.float32) * s
    return src.floor().to(_C.int64).clamp(None, in_size - 1)


def _linear_index(in_size, out_size, scale, align_corners, dtype):
    """(i0, i1, lambda0, lambda1) of linear interpolation along one dim (ATen's CPU formula, in
    the input's floating type)."""
    s = _interp_scale(in_size, out_size, scale, align_corners, dtype)
    pos = _C.arange(out_size, dtype=_C.int64).to(dtype)
    src = pos * s if align_corners else (s * (pos + 0.5) - 0.5).clamp(0, None)
    i0 = src.floor().to(_C.int64).clamp(None, in_size - 1)
    i1 = _C.where(i0 < in_size - 1, i0 + 1, i0)
    lam1 = (src - i0.to(dtype)).clamp(0, 1)
    return i0, i1, 1 - lam1, lam1


def _resize_dim(x, dim, out_size, scale, mode, align_corners):
    """``x`` resized along ``dim`` to ``out_size``."""
    in_size = x.size(dim)
    if mode in ("nearest", "nearest-exact"):
        return x.index_select(dim, _nearest_index(in_size, out_size, scale, mode == "nearest-exact"))
    i0, i1, lam0, lam1 = _linear_index(in_size, out_size, scale, align_corners, x.dtype)
    shape = [1] * x.dim()
    shape[dim] = out_size
    return x.index_select(dim, i0) * lam0.reshape(shape) + x.index_select(dim, i1) * lam1.reshape(shape)


_UPSAMPLE_KERNELS = {"nearest": "upsample_nearest{}d_out_frame", "nearest-exact": "_upsample_nearest_exact{}d",
                     "linear": "upsample_linear1d_out_frame", "bilinear": "upsample_bilinear2d_out_frame",
                     "trilinear": "upsample_trilinear3d_out_frame"}


def _upsample(input, output_size, scale_factors, mode, align_corners):
    """ATen's upsample_* ops: the size checks, then one dim at a time."""
    k = input.dim() - 2
    if output_size is None:  # ATen's static_cast<int64_t>(size * scale): out of range is INT64_MIN
        output_size = []
        for i in range(k):
            v = input.size(i + 2) * scale_factors[i]
            output_size.append(int(v) if math.isfinite(v) and abs(v) < 2.0 ** 63 else _INT64_MIN)
        if _INT64_MIN in output_size:
            raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a SymInt: {_INT64_MIN}")
    output_size = [int(v) for v in output_size]
    names = "DHW"[3 - k:]
    ins, outs = list(input.shape[2:]), output_size
    if not all(v > 0 for v in ins + outs):
        given = ", ".join(f"{n}: {v}" for n, v in zip(names, ins))
        wanted = ", ".join(f"{n}: {v}" for n, v in zip(names, outs))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({given}) output "
                           f"({wanted})")
    if input.numel() == 0 and math.prod(input.shape[1:]) == 0:
        raise RuntimeError(f"Non-empty {k + 2}D data tensor expected but got a tensor with sizes {list(input.shape)}")
    if not input.is_floating_point():
        raise _not_implemented_for(_UPSAMPLE_KERNELS[mode].format(k), input)
    out = input
    for i in range(k):
        scale = scale_factors[i] if scale_factors is not None else None
        out = _resize_dim(out, 2 + i, output_size[i], scale, mode, align_corners)
    return out


def _interpolate_sizes(input, size, scale_factor, mode, recompute_scale_factor):
    """(output_size, scale_factors) as PyTorch 2.x's interpolate settles them: exactly one of the
    two, a list per spatial dim."""
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input with "
                                 f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
                                 "...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(x) for x in size]}")
            output_size = size
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = scale_factor
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    return output_size, scale_factors


def _check_upsample_args(fname, input, output_size, scale_factors):
    """The argument parser of ATen's upsample ops: a tensor, ints (or None), floats (or None)."""
    _parse(fname, ("input", input, "Tensor", 1), ("output_size", output_size, "ints?", 2))
    if scale_factors is not None:
        if not isinstance(scale_factors, (list, tuple)) or not all(
                not isinstance(v, _C.Tensor) and _parser_accepts(v, "float") for v in scale_factors):
            raise TypeError(f"{fname}() received an invalid combination of arguments: 'scale_factors' must be a "
                            "tuple of floats")
        scale_factors = [float(v) for v in scale_factors]
    sizes = None if output_size is None else _parse(fname, ("output_size", output_size, "ints?", 2))[0]
    return sizes, scale_factors


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial dims of a (N, C, *) input to ``size`` or by ``scale_factor``: modes
    'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' (4-D), 'trilinear' (5-D) and 'area'
    (3-D and 4-D), as PyTorch 2.x's (bicubic and antialias are not in graft)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    output_size, scale_factors = _interpolate_sizes(input, size, scale_factor, mode, recompute_scale_factor)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    nd = input.dim()
    names = {("nearest", 3): "upsample_nearest1d", ("nearest", 4): "upsample_nearest2d",
             ("nearest", 5): "upsample_nearest3d", ("nearest-exact", 3): "_upsample_nearest_exact1d",
             ("nearest-exact", 4): "_upsample_nearest_exact2d", ("nearest-exact", 5): "_upsample_nearest_exact3d",
             ("linear", 3): "upsample_linear1d", ("bilinear", 4): "upsample_bilinear2d",
             ("trilinear", 5): "upsample_trilinear3d"}
    if (mode, nd) in names:
        if antialias or mode == "bicubic":
            raise NotImplementedError(f"interpolate: antialias=True is not supported by graft (mode='{mode}')")
        output_size, scale_factors = _check_upsample_args(names[(mode, nd)], input, output_size, scale_factors)
        return _upsample(input, output_size, scale_factors, mode, align_corners)
    if mode == "area" and nd in (3, 4):
        return (adaptive_avg_pool1d if nd == 3 else adaptive_avg_pool2d)(input, output_size)
    if mode in ("bicubic", "lanczos", "area") and nd in (4, 5):
        raise NotImplementedError(f"interpolate: mode='{mode}' of a {nd}-D input is not supported by graft")
    for got, need in ((("bilinear", 3), 4), (("trilinear", 3), 5), (("linear", 4), 3), (("trilinear", 4), 5),
                      (("linear", 5), 3), (("bilinear", 5), 4)):
        if (mode, nd) == got:
            raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {need}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: "
                              f"nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
                              f"(got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated: interpolate (with PyTorch's warning)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='nearest') (with PyTorch's warning)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='bilinear', align_corners=True) (with PyTorch's warning)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- instance norm, local response norm, embedding bags and bilinear: compositions of graft ops ----

def _verify_spatial_size(size):
    """PyTorch's refusal of instance statistics over one value per (sample, channel)."""
    values = 1
    for d in size[2:]:
        values *= d
    if values == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalizes each channel of each sample of a (N, C, *) input over its spatial dims (with the
    statistics of that instance, or the running ones when use_input_stats is false), then applies
    the per-channel weight and bias. Batch normalization of the (1, N * C, *) view: the running
    statistics, when given and use_input_stats, move towards the mean over the batch of the
    instances' statistics (the variance unbiased), by ``momentum``."""
    if use_input_stats:  # PyTorch's Python wrapper, before its argument parser
        _verify_spatial_size(input.size())
    _parser_types("instance_norm", [("input", "Tensor", input), ("weight", "Tensor?", weight),
                                    ("bias", "Tensor?", bias), ("running_mean", "Tensor?", running_mean),
                                    ("running_var", "Tensor?", running_var),
                                    ("use_input_stats", "bool", use_input_stats),
                                    ("momentum", "float", momentum), ("eps", "float", eps)])
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = input.size(0), input.size(1)
    shape = [1, b * c] + list(input.size()[2:])

    def repeated(t):
        return None if t is None else t.repeat(b)

    mean_, var_ = repeated(running_mean), repeated(running_var)
    if not input.is_floating_point():  # PyTorch's kernel refuses integers, once there is data
        if input.numel() == 0:
            return input.clone()
        raise RuntimeError(f"\"batch_norm\" not implemented for '{_TYPE_NAMES[input.dtype]}'")
    out = _nn.batch_norm(input.contiguous().view(shape), mean_, var_, repeated(weight), repeated(bias),
                         use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(mean_.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(var_.view(b, c).mean(0))
    return out.view(input.size())


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Divides each element of a (N, C, *) input by (k + alpha * mean of the squares over the
    ``size`` channels around it) ** beta, the window zero-padded by size // 2 before and
    (size - 1) // 2 after, the mean always over ``size`` values."""
    dim = input.dim()
    if dim < 3:
        # PyTorch's text keeps the indentation of its source line after "dimensionality "
        raise ValueError(f"Expected 3D or higher dimensionality {' ' * 25}input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sizes = input.size()
    div = input.mul(input).reshape(sizes[0], 1, sizes[1], -1)  # channels as the pooled height
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = _nn.avg_pool2d(div, (size, 1), (1, 1), (0, 0), False, True).reshape(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = input1[..., :] @ weight[o] @ input2[..., :] + bias[o], over matching leading
    (batch) dims; weight is [out, in1, in2]."""
    _parser_types("bilinear", [("input1", "Tensor", input1), ("input2", "Tensor", input2), ("weight", "Tensor", weight),
                               ("bias", "Tensor?", bias)])
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    if input1.dim() == 0:  # then its last dimension is read
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    tensors = [("input1", input1), ("input2", input2), ("weight", weight)] + ([("bias", bias)] if bias is not None
                                                                               else [])
    if any(t.dtype != input1.dtype for _, t in tensors):
        names = {_C.float32: "float", _C.float64: "double", _C.float16: "c10::Half", _C.bfloat16: "c10::BFloat16",
                 _C.int64: "long int", _C.int32: "int", _C.bool: "bool"}
        raise RuntimeError("All tensors must have the same dtype, got "
                           + ", ".join(f"{name}: {names.get(t.dtype, t.dtype)}" for name, t in tensors))
    for i in range(input1.dim() - 1):
        if input1.size(i) != input2.size(i):
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {input1.size(i)} "
                               f"and {input2.size(i)}")
    out, in1, in2 = weight.size(0), weight.size(1), weight.size(2)
    for name, size, expected in (("input1", input1.size(-1), in1), ("input2", input2.size(-1), in2)):
        if size != expected:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {size} but expected "
                               f"{expected}")
    if bias is not None and bias.size(0) != out:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.size(0)} but expected {out}")
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    # x1 @ weight[o] for every o at once: [B, in1] @ [in1, out * in2] -> [B, out, in2]
    left = (x1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)).reshape(-1, out, in2)
    y = (left * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(tuple(input1.size()[:-1]) + (out,))


def _legacy_type_name(dtype):
    """The legacy tensor type name ATen's argument checks print (graft.LongTensor, ...)."""
    names = dict(_SCALAR_TYPE_NAME, float16="Half", bfloat16="BFloat16")
    return f"graft.{names[str(dtype).rpartition('.')[2]]}Tensor"


def _embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescales in place (without recording) each row of ``weight`` that ``input`` names whose
    ``norm_type``-norm exceeds max_norm, to max_norm / (norm + 1e-7) times itself."""
    with no_grad():
        rows = sorted(set(input.reshape(-1).tolist()))
        if not rows:
            return
        index = _C.tensor(rows, dtype=_C.int64, device=weight.device)
        picked = weight.index_select(0, index)
        norms = _C.linalg_vector_norm(picked, norm_type, 1)
        scale = _C.where(norms > max_norm, max_norm / (norms + 1e-7), _C.ones_like(norms))
        weight[index] = picked * scale.unsqueeze(1)


def _embedding_bag_layout(input, offsets, per_sample_weights, include_last_offset):
    """The 1-D indices, offsets and per-sample weights of embedding_bag's input (a 2-D input is
    its rows as bags of equal length), with PyTorch's checks."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = _C.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        return input, offsets, per_sample_weights, False
    if input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input, offsets, per_sample_weights, include_last_offset
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")


def _embedding_bag_mode(mode, scale_grad_by_freq, sparse):
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")


def _embedding_bag_checks(input, offsets, weight, per_sample_weights, include_last_offset, padding_idx):
    """ATen's argument checks of embedding_bag, in its order; returns padding_idx wrapped to
    [0, num_embeddings) (-1 for none)."""
    num = weight.size(0)
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, "
                               f"but got {padding_idx}")
        padding_idx %= num
    # indices and offsets are first promoted to a common type (so a floating one of either is
    # reported as the indices')
    common = (_C.zeros(1, dtype=input.dtype) + _C.zeros(1, dtype=offsets.dtype)).dtype
    for name, dtype, types in (("indices", common, "Long, Int"), ("weight", weight.dtype,
                                                                   "Half, BFloat16, Float, Double")):
        ok = dtype.is_floating_point if name == "weight" else dtype in (_C.int64, _C.int32)
        if not ok:
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar types: "
                               f"{types}; but got {_legacy_type_name(dtype)} instead (while checking arguments for "
                               "embedding_bag)")
    starts = offsets.tolist()
    if starts and starts[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {starts[0]}\n[ {_legacy_type_name(common)}{{}} ]")
    if starts and starts[-1] > input.size(0):
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {input.size(0)} but got offsets[-1] "
                           f"of {starts[-1]}")
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError("Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
                           f"'per_sample_weights'; but type {_legacy_type_name(weight.dtype)} does not equal "
                           f"{_legacy_type_name(per_sample_weights.dtype)} (while checking arguments for "
                           "embedding_bag)")
    if include_last_offset and not starts:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    for idx in input.tolist():
        if not 0 <= idx < num:
            raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {idx}")
    return -1 if padding_idx is None else padding_idx


def _bag_members(input, offsets, include_last_offset, padding_idx):
    """(number of bags, the positions of ``input`` that count (inside a bag, not padding_idx), the
    bag of each). Bag i spans offsets[i] to offsets[i + 1] (the last one to the input's end, or
    with include_last_offset to offsets[-1], the last offset then closing it)."""
    n, dev = input.size(0), input.device
    starts = offsets.long()
    num_bags = starts.size(0) - 1 if include_last_offset else starts.size(0)
    end = starts[-1].item() if include_last_offset else n
    # a bag's id at a position: how many bags start at or before it, less one
    marks = _C.zeros(n + 1, dtype=_C.int64, device=dev).index_add(0, starts.narrow(0, 0, num_bags),
                                                                    _C.ones(num_bags, dtype=_C.int64, device=dev))
    bag_of = marks.narrow(0, 0, n).cumsum(0) - 1
    keep = (_C.arange(n, device=dev) < end) & (bag_of >= 0) & (input != padding_idx)
    positions = _C.nonzero(keep).reshape(-1)
    return num_bags, positions, bag_of.index_select(0, positions)


class _ScaleRowGrads(_autograd_function.Function):
    """Passes ``rows`` through; their gradient comes back scaled row by row by ``factors``."""

    @staticmethod
    def forward(ctx, rows, factors):
        ctx.save_for_backward(factors)
        return rows.clone()

    @staticmethod
    def backward(ctx, grad):
        factors, = ctx.saved_tensors
        return grad * factors.unsqueeze(1), None


def _freq_grad_factors(input, kept, weight):
    """scale_grad_by_freq's factor for each kept entry of embedding_bag: 1 / (how often its index
    occurs in ``input``). On the CPU, PyTorch's kernel takes the count of the i-th smallest index
    for the i-th distinct index (its grouping quirk), and so does this."""
    values = input.tolist()
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    distinct = sorted(counts)
    if weight.device.type == "cpu":
        ordered = sorted(values)
        factor = {u: 1.0 / counts[ordered[i]] for i, u in enumerate(distinct)}
    else:
        factor = {u: 1.0 / counts[u] for u in distinct}
    return _C.tensor([factor[v] for v in kept.tolist()], dtype=weight.dtype, device=weight.device)


def _bag_max(rows, bags, counts, num_bags):
    """The elementwise max of each bag's ``rows`` (zeros for an empty bag); its gradient goes to
    the first row holding each maximum."""
    width, dev = int(counts.max().item()), bags.device
    first = counts.cumsum(0) - counts  # where each bag's rows start among ``rows``
    position = _C.arange(rows.size(0), device=dev)
    slot = bags * width + (position - first.index_select(0, bags))
    filled = _C.zeros(num_bags * width, dtype=_C.int64, device=dev).index_add(0, slot, _C.ones_like(position))
    source = _C.zeros(num_bags * width, dtype=_C.int64, device=dev).index_add(0, slot, position)
    dense = rows.index_select(0, source).masked_fill((filled == 0).unsqueeze(1), float("-inf"))
    values = dense.view(num_bags, width, rows.size(1)).max(1)[0]
    return _C.where((counts > 0).unsqueeze(1), values, _C.zeros_like(values))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The sums, means or maxes of bags of rows of ``weight``: a 2-D input holds one bag per row; a
    1-D one is cut into bags at ``offsets``. Entries equal to padding_idx are left out (an empty
    bag gives zeros); per_sample_weights (mode 'sum') scale each entry's row."""
    if weight.dtype == _C.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                      "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                      stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    input, offsets, per_sample_weights, include_last_offset = _embedding_bag_layout(
        input, offsets, per_sample_weights, include_last_offset)
    _embedding_bag_mode(mode, scale_grad_by_freq, sparse)
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    padding_idx = _embedding_bag_checks(input, offsets, weight, per_sample_weights, include_last_offset,
                                        padding_idx)
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported by graft")
    num_bags, positions, bags = _bag_members(input, offsets, include_last_offset, padding_idx)
    kept = input.long().index_select(0, positions)
    rows = _nn.embedding(weight, kept, None, False)
    if scale_grad_by_freq:
        rows = _ScaleRowGrads.apply(rows, _freq_grad_factors(input, kept, weight))
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.index_select(0, positions).unsqueeze(1)
    counts = _C.zeros(num_bags, dtype=_C.int64, device=bags.device).index_add(0, bags, _C.ones_like(bags))
    if mode == "max" and rows.size(0) > 0:
        return _bag_max(rows, bags, counts, num_bags)
    out = _C.zeros((num_bags, weight.size(1)), dtype=weight.dtype, device=weight.device).index_add(0, bags, rows)
    if mode == "mean":
        out = out / counts.clamp_min(1).to(weight.dtype).unsqueeze(1)
    return out
