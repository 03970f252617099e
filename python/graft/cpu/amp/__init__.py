"""graft.cpu.amp: torch.cpu.amp's GradScaler, the deprecated spelling of graft.amp.GradScaler("cpu")."""
from .grad_scaler import GradScaler  # noqa: F401  (re-exported API)

__all__ = ["GradScaler"]
