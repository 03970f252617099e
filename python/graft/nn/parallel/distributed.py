"""graft.nn.parallel.DistributedDataParallel: graft.distributed has no collective backend yet, so no
process group can be initialised; construction fails as PyTorch 2.x's does before
``init_process_group``."""
from ..modules.module import Module


class DistributedDataParallel(Module):
    """PyTorch's DistributedDataParallel signature. Construction checks the arguments as PyTorch
    2.x does, then needs the default process group, which graft cannot initialise yet: PyTorch 2.x's
    ``ValueError('Default process group has not been initialized, please make sure to call
    init_process_group.')`` (1.13 raised a RuntimeError with the same text)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None):
        super().__init__()
        if (delay_all_reduce_named_params is not None) != (param_to_hook_all_reduce is not None):
            raise ValueError("delay_all_reduce_named_params and param_to_hook_all_reduce need to be set at the same "
                             "time.")
        if process_group and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        if process_group is None and device_mesh is None:
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        raise NotImplementedError("DistributedDataParallel: graft.distributed has no collective backend yet, so "
                                  "it cannot use the given process group or device mesh")
