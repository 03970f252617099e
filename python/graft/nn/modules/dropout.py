"""The dropout layers: Dropout, Dropout1d/2d/3d (whole channels), AlphaDropout and
FeatureAlphaDropout (for SELU networks). All are the identity in eval mode."""
from .. import functional as F
from .module import Module


class _DropoutNd(Module):
    """The dropout layers' base: the probability ``p`` (checked to lie in [0, 1]) and the
    ``inplace`` flag."""

    __constants__ = ["p", "inplace"]

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes elements with probability p and scales the rest by 1/(1-p) in training mode;
    the identity in eval mode."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) or (C, L) inputs with probability p (scaling the rest
    by 1/(1-p)) in training mode."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) inputs with probability p (scaling the rest by
    1/(1-p)) in training mode; a 3-D input is taken as (N, C, L), with PyTorch's warning."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) inputs with probability p
    (scaling the rest by 1/(1-p)) in training mode."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout in training mode (dropped elements take SELU's saturation value; mean and
    variance are kept). As PyTorch's, the forward ignores ``inplace``."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels in training mode. As PyTorch's, the forward ignores
    ``inplace``."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
