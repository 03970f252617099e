"""Activation layers (ReLU, Threshold, GELU, Tanh, Sigmoid, SiLU, LeakyReLU, Softplus, ELU, SELU,
Hardsigmoid, Hardswish, Mish, LogSigmoid, Hardshrink, Softshrink, Softmax, LogSoftmax, Hardtanh,
ReLU6, PReLU, CELU, GLU, Softsign, Tanhshrink, Softmin, Softmax2d, RReLU) and MultiheadAttention."""
import math
import warnings

from ... import _C
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._layer_utils import OneCallLayer
from .linear import NonDynamicallyQuantizableLinear
from .module import Module


class _InplaceActivation(Module):
    """An activation with an ``inplace`` flag (ReLU, SiLU): ``_fn`` is its functional op."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return self._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_InplaceActivation):
    """max(x, 0)."""

    _fn = staticmethod(F.relu)


class Threshold(Module):
    """``value`` where the input is <= ``threshold``, the input elsewhere."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """x * Phi(x); approximate='tanh' uses the tanh approximation."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input):
        return _C.tanh(input)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, input):
        return _C.sigmoid(input)


class SiLU(_InplaceActivation):
    """x * sigmoid(x)."""

    _fn = staticmethod(F.silu)


class _InplaceActivationWithArg(Module):
    """An activation with one number argument and ``inplace`` (LeakyReLU, ELU): ``_fn`` is its
    functional op, ``_arg`` the argument's attribute name (PyTorch's)."""

    def __init__(self, value, inplace):
        super().__init__()
        setattr(self, self._arg, value)
        self.inplace = inplace

    def forward(self, input):
        return self._fn(input, getattr(self, self._arg), self.inplace)

    def extra_repr(self):
        return f"{self._arg}={getattr(self, self._arg)}" + (", inplace=True" if self.inplace else "")


class LeakyReLU(_InplaceActivationWithArg):
    """x for x > 0, negative_slope * x otherwise."""

    _fn, _arg = staticmethod(F.leaky_relu), "negative_slope"

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__(negative_slope, inplace)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``."""

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class ELU(_InplaceActivationWithArg):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    _fn, _arg = staticmethod(F.elu), "alpha"

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(alpha, inplace)


class SELU(_InplaceActivation):
    """scale * elu(x, alpha) with the self-normalising constants."""

    _fn = staticmethod(F.selu)


class Mish(_InplaceActivation):
    """x * tanh(softplus(x))."""

    _fn = staticmethod(F.mish)


class Hardsigmoid(_InplaceActivation):
    """min(max(x + 3, 0), 6) / 6."""

    _fn = staticmethod(F.hardsigmoid)

    def extra_repr(self):
        return ""  # PyTorch's shows no arguments, inplace included


class Hardswish(Hardsigmoid):
    """x * min(max(x + 3, 0), 6) / 6."""

    _fn = staticmethod(F.hardswish)


class LogSigmoid(Module):
    """log(sigmoid(x))."""

    def forward(self, input):
        return F.logsigmoid(input)


class Hardshrink(OneCallLayer):
    """x where |x| > lambd, 0 elsewhere."""

    _options = ("lambd",)
    _fn = staticmethod(F.hardshrink)

    def __init__(self, lambd=0.5):
        super().__init__(lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x - lambd where x > lambd, x + lambd where x < -lambd, 0 elsewhere."""

    _fn = staticmethod(F.softshrink)


class _AlongDim(Module):
    """A normalisation along ``dim`` (Softmax, LogSoftmax): ``_fn`` is its functional op."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return self._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    """softmax along ``dim``."""

    _fn = staticmethod(F.softmax)


class LogSoftmax(_AlongDim):
    """log_softmax along ``dim``."""

    _fn = staticmethod(F.log_softmax)


def _additive_mask(mask, dtype, name):
    """A bool mask (True = not allowed) as an additive float mask with -inf; float masks pass."""
    if mask is None:
        return None
    if mask.dtype == _C.bool:
        return _C.zeros(mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask.to(dtype)


class MultiheadAttention(Module):
    """Multi-head scaled dot-product attention (torch.nn.MultiheadAttention). Inputs are
    [L, N, E] ([N, L, E] with batch_first, [L, E] unbatched). Parameters: in_proj_weight
    [3E, E] (or q/k/v_proj_weight when kdim/vdim differ from E), in_proj_bias [3E], out_proj,
    and bias_k / bias_v with add_bias_kv."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        kw = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_C.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(_C.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(_C.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(_C.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_C.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(_C.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(_C.empty((1, 1, embed_dim), **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _projections(self):
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            w_q, w_k, w_v = self.in_proj_weight.split(E)
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        b = self.in_proj_bias.split(E) if self.in_proj_bias is not None else (None, None, None)
        return (w_q, b[0]), (w_k, b[1]), (w_v, b[2])

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """Returns (attn_output, attn_weights); attn_weights is [N, L, S] averaged over heads
        (average_attn_weights) or [N, H, L, S], and None unless need_weights."""
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                               "method `generate_square_subsequent_mask` to create this mask.")
        batched = query.dim() == 3
        if query.dim() not in (2, 3):
            raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                                 "query tensor")
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        if not batched:
            query, key, value = (t.unsqueeze(1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        L, N, E = query.shape
        if E != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got {E}")
        H, hd = self.num_heads, self.head_dim
        (w_q, b_q), (w_k, b_k), (w_v, b_v) = self._projections()
        q = F.linear(query, w_q, b_q)
        k = F.linear(key, w_k, b_k)
        v = F.linear(value, w_v, b_v)
        attn_mask = _additive_mask(attn_mask, q.dtype, "attn_mask")
        key_padding_mask = _additive_mask(key_padding_mask, q.dtype, "key_padding_mask")
        if self.bias_k is not None:
            k = _C.cat([k, self.bias_k.expand(1, N, E)])
            v = _C.cat([v, self.bias_v.expand(1, N, E)])
            attn_mask = F.pad(attn_mask, (0, 1)) if attn_mask is not None else None
            key_padding_mask = F.pad(key_padding_mask, (0, 1)) if key_padding_mask is not None else None
        # [T, N, E] -> [N*H, T, hd]
        q = q.reshape(L, N * H, hd).transpose(0, 1)
        k = k.reshape(k.size(0), N * H, hd).transpose(0, 1)
        v = v.reshape(v.size(0), N * H, hd).transpose(0, 1)
        if self.add_zero_attn:
            k = _C.cat([k, _C.zeros((N * H, 1, hd), dtype=k.dtype)], dim=1)
            v = _C.cat([v, _C.zeros((N * H, 1, hd), dtype=v.dtype)], dim=1)
            attn_mask = F.pad(attn_mask, (0, 1)) if attn_mask is not None else None
            key_padding_mask = F.pad(key_padding_mask, (0, 1)) if key_padding_mask is not None else None
        S = k.size(1)
        if attn_mask is not None:
            if attn_mask.dim() == 2:
                if tuple(attn_mask.shape) != (L, S):
                    raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(L, S)}.")
                attn_mask = attn_mask.unsqueeze(0)
            elif attn_mask.dim() == 3:
                if tuple(attn_mask.shape) != (N * H, L, S):
                    raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                       f"{(N * H, L, S)}.")
            else:
                raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (N, S):
                raise AssertionError(f"expecting key_padding_mask shape of {(N, S)}, but got {key_padding_mask.shape}")
            kpm = key_padding_mask.reshape(N, 1, 1, S).expand(N, H, 1, S).reshape(N * H, 1, S)
            attn_mask = kpm if attn_mask is None else attn_mask + kpm
        scores = _C.bmm(q * math.sqrt(1.0 / hd), k.transpose(1, 2))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = F.softmax(scores, dim=-1)
        dropout_p = self.dropout if self.training else 0.0
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = _C.bmm(weights, v)  # [N*H, L, hd]
        out = out.transpose(0, 1).reshape(L * N, E)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias).reshape(L, N, E)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        weights = weights.reshape(N, H, L, S)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            weights = weights.squeeze(0)
        return out, weights


def _inplace_suffix(module):
    return ", inplace=True" if module.inplace else ""


class Hardtanh(Module):
    """x clamped to [min_val, max_val]; min_value / max_value are PyTorch's deprecated names."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:  # PyTorch 2.x's message (1.13 asserted without one)
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self)}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class PReLU(Module):
    """x for x > 0, a * x otherwise, with a learnt slope ``weight`` (one, or one per channel),
    initialised to ``init``."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_C.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        """Every slope set to ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self)}"


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, input):
        return F.tanhshrink(input)


class Softmin(_AlongDim):
    """softmax(-x) along ``dim``."""

    _fn = staticmethod(F.softmin)


class Softmax2d(Module):
    """softmax over the channels (dim -3) of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)


class RReLU(Module):
    """Randomized leaky ReLU: random slopes in [lower, upper] for x <= 0 while training, their
    mean in eval mode."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self)}"
