"""graft.distributions: torch.distributions for graft tensors (pure Python over graft ops, as
PyTorch's): Distribution with PyTorch's ``validate_args`` checks and ExponentialFamily; Normal,
Bernoulli, Categorical, OneHotCategorical, Uniform, Exponential, Laplace, Cauchy, Gamma, Chi2,
Beta, Dirichlet, StudentT, Poisson, Geometric, Binomial; MultivariateNormal,
LowRankMultivariateNormal and Wishart (over graft.linalg's Cholesky factorization and triangular
solves) and LKJCholesky; Independent, TransformedDistribution and LogNormal over the transforms
(``transforms``: Exp, Affine, Sigmoid, Tanh, Softplus, Power, Abs, Softmax, StickBreaking, Reshape,
Independent, Compose) and ``biject_to`` / ``transform_to``; the constraints; ``kl_divergence`` /
``register_kl`` with PyTorch's closed forms for these.

``rsample`` is differentiable through graft's autograd: Normal, Uniform, Exponential, Laplace,
Cauchy and LogNormal by location-scale reparameterisation; MultivariateNormal and
LowRankMultivariateNormal as loc + (a factor of the covariance) @ (standard normal draws), through
graft's Cholesky and triangular-solve backwards; Gamma, Chi2, Beta, Dirichlet, StudentT and Wishart
(Bartlett's decomposition) through the implicit reparameterisation gradient of Gamma draws
(``_special``). lgamma, digamma and mvlgamma, which graft lacks, are written over graft ops in
``_special``; the Gamma, Poisson and Binomial samplers over graft's generator in ``_sampling``. The
plumbing the distributions share is in ``_params`` (broadcast parameters, ``expand``),
``_loc_scale`` (the location-scale family), ``_probs_or_logits`` and ``_batch_linalg`` (the
(low-rank) multivariate normals' batched linear algebra). The rarer distributions are not here."""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform, IndependentTransform,
                         PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform, SoftplusTransform,
                         StickBreakingTransform, TanhTransform, Transform, identity_transform)
from .uniform import Uniform
from .wishart import Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform", "Exponential", "ExponentialFamily",
           "Gamma", "Geometric", "Independent", "IndependentTransform", "LKJCholesky", "Laplace", "LogNormal",
           "LowRankMultivariateNormal", "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StickBreakingTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
           "Wishart", "biject_to", "constraints", "identity_transform", "kl_divergence", "register_kl", "transform_to",
           "transforms"]
