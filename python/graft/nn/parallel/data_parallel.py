"""graft.nn.parallel.DataParallel and data_parallel, as PyTorch's behave where no accelerator
device is available (graft has none: graft.cuda.is_available() is False)."""
from ..modules.module import Module


class DataParallel(Module):
    """Wraps ``module`` as PyTorch's DataParallel does on a machine without GPUs: the module is
    registered as the submodule ``module`` (so state_dict keys start with ``module.``),
    ``device_ids`` is ``[]`` whatever was asked for, and ``forward`` calls the module with the
    inputs unchanged. ``output_device`` and ``dim`` are accepted and, as there, not kept."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        # PyTorch's _get_available_device_type() is None here: keep the module, no devices
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        """The wrapped module's output for the inputs, unchanged (no devices to scatter to)."""
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """PyTorch 2.x's functional data parallelism needs an accelerator device type; without one it
    raises ``RuntimeError('device type could not be determined')``, as here."""
    raise RuntimeError("device type could not be determined")
