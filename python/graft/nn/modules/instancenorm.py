"""InstanceNorm1d, InstanceNorm2d, InstanceNorm3d and their lazy forms (num_features from the
first input)."""
import warnings

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase


class _InstanceNorm(_NormBase):
    """Normalizes each channel of each sample over its spatial dims. Without affine (the default)
    there are no parameters; with track_running_stats (off by default) training also moves the
    running_mean / running_var buffers towards the batch's instance statistics, and eval mode
    normalizes with them. An unbatched input (one dim fewer) is taken as a batch of one."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def _get_no_batch_dim(self):
        raise NotImplementedError

    def _handle_no_batch_input(self, input):
        return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        # checkpoints from before version 1 hold running stats even without track_running_stats
        if version is None and not self.track_running_stats:
            keys = [prefix + name for name in ("running_mean", "running_var") if prefix + name in state_dict]
            if keys:
                klass = self.__class__.__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    "state_dict is a checkpoint saved before 0.4.0, this may be expected because "
                    f"{klass} does not track running stats by default since 0.4.0. Please remove these keys "
                    "from state_dict. If the running stats are actually needed, instead set "
                    f"track_running_stats=True in {klass} to enable them. See the documentation of {klass} "
                    "for details.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._get_no_batch_dim()
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False")
        if input.dim() == self._get_no_batch_dim():
            return self._handle_no_batch_input(input)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L) input, or unbatched (C, L)."""

    def _get_no_batch_dim(self):
        return 2

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W) input, or unbatched (C, H, W)."""

    def _get_no_batch_dim(self):
        return 3

    def _check_input_dim(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over (N, C, D, H, W) input, or unbatched (C, D, H, W)."""

    def _get_no_batch_dim(self):
        return 4

    def _check_input_dim(self, input):
        if input.dim() not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm1d whose num_features is input.shape[1] at the first forward (as PyTorch's,
    even for an unbatched input, and with affine and track_running_stats True by default)."""

    cls_to_become = InstanceNorm1d
    _get_no_batch_dim = InstanceNorm1d._get_no_batch_dim
    _check_input_dim = InstanceNorm1d._check_input_dim


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm2d whose num_features is input.shape[1] at the first forward."""

    cls_to_become = InstanceNorm2d
    _get_no_batch_dim = InstanceNorm2d._get_no_batch_dim
    _check_input_dim = InstanceNorm2d._check_input_dim


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm3d whose num_features is input.shape[1] at the first forward."""

    cls_to_become = InstanceNorm3d
    _get_no_batch_dim = InstanceNorm3d._get_no_batch_dim
    _check_input_dim = InstanceNorm3d._check_input_dim
