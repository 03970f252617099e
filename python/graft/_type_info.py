"""graft.finfo and graft.iinfo: the numerical properties of a dtype, as torch.finfo / torch.iinfo."""
import math

from . import _C

__all__ = ["finfo", "iinfo"]

# dtype -> (bits, fraction bits, largest finite value, smallest positive normal value)
_FLOATS = {
    _C.float16: (16, 10, 65504.0, 2.0 ** -14),
    _C.bfloat16: (16, 7, (2 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126),
    _C.float32: (32, 23, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126),
    _C.float64: (64, 52, (2 - 2.0 ** -52) * 2.0 ** 1023, 2.0 ** -1022),
}
_INTS = {_C.int32: 32, _C.int64: 64}


def _name(dtype):
    return repr(dtype).rsplit(".", 1)[-1]


def _check_dtype(fn, dtype):
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"{fn}(): argument 'type' (position 1) must be torch.dtype, not {type(dtype).__name__}")


class finfo:
    """The properties of a floating dtype (the default dtype without one): bits, eps (the gap
    from 1 to the next value), max, min, tiny / smallest_normal (the smallest positive normal
    value), resolution (10 ** -decimal digits) and dtype (its name)."""

    def __init__(self, type=None):
        dtype = _C.get_default_dtype() if type is None else type
        _check_dtype("finfo", dtype)
        if dtype not in _FLOATS:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        bits, fraction, largest, normal = _FLOATS[dtype]
        self.bits, self.eps, self.max, self.min = bits, 2.0 ** -fraction, largest, -largest
        self.tiny = self.smallest_normal = normal
        self.resolution = 10.0 ** -math.floor(fraction * math.log10(2))
        self.dtype = _name(dtype)

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The properties of an integer dtype: bits, max, min and dtype (its name)."""

    def __init__(self, type):
        _check_dtype("iinfo", type)
        if type == _C.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type not in _INTS:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        self.bits = _INTS[type]
        self.max, self.min = 2 ** (self.bits - 1) - 1, -2 ** (self.bits - 1)
        self.dtype = _name(type)

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
