"""graft.cpu.amp: torch.cpu.amp's GradScaler and autocast, the deprecated spellings of graft.amp's."""
from .autocast_mode import autocast  # noqa: F401  (re-exported API)
from .grad_scaler import GradScaler  # noqa: F401  (re-exported API)

__all__ = ["GradScaler", "autocast"]
