"""graft.cuda.amp: torch.cuda.amp's GradScaler, the deprecated spelling of graft.amp.GradScaler("cuda")."""
from .grad_scaler import GradScaler  # noqa: F401  (re-exported API)

__all__ = ["GradScaler"]
