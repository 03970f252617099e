"""graft.nn.utils: gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_) and
graft.nn.utils.rnn (packed and padded variable-length sequences, torch.nn.utils.rnn)."""
from .clip_grad import clip_grad_norm_, clip_grad_value_
from . import rnn

__all__ = ["clip_grad_norm_", "clip_grad_value_", "rnn"]
