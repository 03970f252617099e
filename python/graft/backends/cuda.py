"""graft.backends.cuda: graft is not built with CUDA. ``matmul`` holds cuBLAS's flags with
PyTorch 2.x's defaults; they can be set and change nothing here."""
from . import _flags

__all__ = ["is_built", "matmul", "cuBLASModule"]


def is_built():
    """False: graft is not built with CUDA support."""
    return False


class cuBLASModule:
    """torch.backends.cuda.matmul: allow_tf32 (False), allow_fp16_reduced_precision_reduction
    and allow_bf16_reduced_precision_reduction (True); any other attribute is PyTorch 2.x's
    AttributeError (1.13 raised AssertionError)."""

    _setters = {"allow_tf32": "set_allow_tf32_cublas",
                "allow_fp16_reduced_precision_reduction": "set_allow_fp16_reduced_precision_reduction_cublas",
                "allow_bf16_reduced_precision_reduction": "set_allow_bf16_reduced_precision_reduction_cublas"}

    def __init__(self):
        object.__setattr__(self, "_values", {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
                                             "allow_bf16_reduced_precision_reduction": True})

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name not in self._setters:
            raise AttributeError("Unknown attribute " + name)
        self._values[name] = _flags.check_bool(self._setters[name], value)


matmul = cuBLASModule()
