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
from ..autograd.grad_mode import no_grad

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
    """Constant padding; ``pad`` lists (left, right) pairs from the last dim on."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode='{mode}' is not supported by graft (only mode='constant')")
    return _nn.pad(input, pad, 0.0 if value is None else value)


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
