"""graft.onnx: ONNX export is not available in graft (it needs PyTorch's tracer and exporter);
``export`` raises NotImplementedError, and ``is_in_onnx_export()`` is False."""

__all__ = ["export", "is_in_onnx_export"]


def export(model, args=(), f=None, *pargs, **kwargs):
    """Not available in graft: raises NotImplementedError (ONNX export needs PyTorch's tracer)."""
    raise NotImplementedError("graft does not implement torch.onnx.export: exporting to ONNX needs PyTorch's tracer "
                              "and exporter; export the model with PyTorch instead")


def is_in_onnx_export():
    """False: graft never exports, so model code never runs inside an ONNX export."""
    return False
