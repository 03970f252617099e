"""The normalization layers' shared base (_NormBase: affine parameters and running statistics),
BatchNorm1d, BatchNorm2d, their lazy forms (num_features from the first input) and SyncBatchNorm."""
from ... import _C
from ... import distributed as _dist
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import UninitializedBuffer, UninitializedParameter
from ._layer_utils import make_affine_params
from .lazy import LazyModuleMixin
from .module import Module


class _NormBase(Module):
    """What the batch and instance normalization layers share: per-channel ``weight`` (ones) and
    ``bias`` (zeros) when affine, and the buffers running_mean (zeros), running_var (ones) and
    num_batches_tracked (0) when track_running_stats (None otherwise)."""

    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        make_affine_params(self, num_features, affine, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _C.zeros(num_features, **kw))
            self.register_buffer("running_var", _C.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked", _C.tensor(0, dtype=_C.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            # checkpoints from before num_batches_tracked existed keep the current count
            state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None \
                else _C.tensor(0, dtype=_C.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class _BatchNorm(_NormBase):
    """Per-channel normalization with batch statistics in training and running statistics
    (buffers running_mean, running_var, num_batches_tracked) in eval. momentum=None keeps a
    cumulative average (factor 1 / num_batches_tracked)."""

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over [N, C] or [N, C, L] input."""

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over [N, C, H, W] input."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """What the lazy batch and instance normalizations share: num_features is input.shape[1] at
    the first forward, when the weight / bias and running-statistics placeholders are
    materialized and reset. As PyTorch's, affine and track_running_stats default to True (the
    lazy instance norms included)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False, device, dtype)  # the placeholders come below
        kw = {"device": device, "dtype": dtype}
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(**kw)
            self.bias = UninitializedParameter(**kw)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(**kw)
            self.running_var = UninitializedBuffer(**kw)
            self.num_batches_tracked = _C.tensor(0, dtype=_C.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with no_grad():
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self._settle_buffers()
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose num_features comes from the first input; it becomes a BatchNorm1d then."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose num_features comes from the first input; it becomes a BatchNorm2d then."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose batch statistics are reduced over a process group in training.
    As PyTorch 2.x's, it is plain batch normalization when no synchronization is needed: in eval
    mode, or without an initialized default process group (graft.distributed has no backend yet,
    so always). Input (N, C, ...), at least 2-D."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        need_sync = self.training and _dist.is_available() and _dist.is_initialized()
        if need_sync:
            if input.device.type not in ("cuda", "xpu", "privateuseone"):
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone")
            group = self.process_group if self.process_group else _dist.group.WORLD
            if _dist.get_world_size(group) > 1:
                raise NotImplementedError("graft's SyncBatchNorm cannot synchronize statistics across processes yet")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Every BatchNorm*d layer of ``module`` replaced by a SyncBatchNorm sharing its
        parameters and buffers (a new module when ``module`` itself is one)."""
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            module_output.running_mean = module.running_mean
            module_output.running_var = module.running_var
            module_output.num_batches_tracked = module.num_batches_tracked
            module_output.training = module.training
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
