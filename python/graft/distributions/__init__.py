"""graft.distributions: torch.distributions for graft tensors (pure Python over graft ops, as
PyTorch's): Distribution with PyTorch's ``validate_args`` checks, Normal, Bernoulli,
Categorical, Uniform, Independent, the constraints, and ``kl_divergence`` / ``register_kl``.
``rsample`` (Normal, Uniform) is differentiable through graft's autograd."""
from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .independent import Independent
from .kl import kl_divergence, register_kl
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Independent", "Normal", "Uniform", "constraints",
           "kl_divergence", "register_kl"]
