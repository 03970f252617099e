"""graft.compile: PyTorch 2.x's torch.compile. graft has no graph compiler, so it returns the
model or function it is given, which then runs eagerly (with the same results), and says so
once per process with a UserWarning."""
import warnings

_warned = False


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile(model, ...) or @torch.compile / @torch.compile(mode=...): returns `model`
    itself, run eagerly by graft. PyTorch's argument errors are kept (both `mode` and `options`;
    a model that is None or not callable)."""
    if model is None:
        def decorator(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           disable=disable)
        return decorator
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    global _warned
    if not _warned and not disable:
        _warned = True
        warnings.warn("graft.compile: graft has no graph compiler; the model or function is returned unchanged and "
                      "runs eagerly", UserWarning, stacklevel=2)
    return model
