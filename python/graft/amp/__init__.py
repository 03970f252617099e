"""graft.amp: automatic mixed precision helpers (torch.amp's names).

Holds GradScaler, the dynamic loss scaler; ``graft.amp.GradScaler("cpu")`` scales on the CPU.
autocast is not provided (graft has no reduced-precision floating dtypes yet).
"""
from .grad_scaler import GradScaler  # noqa: F401  (re-exported API)

__all__ = ["GradScaler"]
