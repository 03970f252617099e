"""graft.amp: automatic mixed precision (torch.amp's names): ``autocast`` (CPU regions that run
matmul, linear and the convolutions in bfloat16 or float16, and the losses in float32) and
GradScaler, the dynamic loss scaler (``graft.amp.GradScaler("cpu")`` scales on the CPU).
"""
from .autocast_mode import (  # noqa: F401  (re-exported API)
    autocast, is_autocast_available, is_autocast_enabled, get_autocast_dtype,
)
from .grad_scaler import GradScaler  # noqa: F401  (re-exported API)

__all__ = ["GradScaler", "autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype"]
