"""graft.nn.utils: gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_),
graft.nn.utils.rnn (packed and padded variable-length sequences, torch.nn.utils.rnn),
parametrizations (graft.nn.utils.parametrize and graft.nn.utils.parametrizations: orthogonal,
weight_norm, spectral_norm) and the hook-based weight_norm / spectral_norm with their remove_* functions."""
from .clip_grad import clip_grad_norm_, clip_grad_value_
from . import rnn
from .weight_norm import weight_norm, remove_weight_norm
from .spectral_norm import spectral_norm, remove_spectral_norm
from . import parametrize, parametrizations

__all__ = ["clip_grad_norm_", "clip_grad_value_", "rnn", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm", "parametrize", "parametrizations"]
