"""python launch.py {graft,torch} script.py [args...]

Runs one shipped program as ``python script.py args...`` would, on graft or on PyTorch.

graft: ``import torch`` (and every ``torch.<name>``) gives graft through ``graft._as_torch``,
the redirect that ``python -m graft.doctor`` installs, so the program's own ``import torch``
lines stay as they are. torch: the redirect is not installed, and the run stops at once if
``import torch`` would not give PyTorch.

In both runs two output-only third-party packages are replaced by no-op stand-ins, since
Debian's PyTorch has neither installed and the bar measures the torch API, not plotting:
``torch.utils.tensorboard`` (a wrapper over the separate ``tensorboard`` package; its
SummaryWriter's methods do nothing) and ``matplotlib`` (every pyplot call does nothing).
"""
import os
import runpy
import sys
import types


class _NoOp:
    """An object whose every attribute is a function that does nothing and returns a _NoOp."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _NoOp()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _NoOp()

    def __iter__(self):
        return iter(())


class _NoOpModule(types.ModuleType):
    """A module whose every public attribute is a _NoOp (matplotlib, matplotlib.pyplot)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _NoOp()


def _install_stand_ins():
    """Puts the no-op tensorboard and matplotlib modules in sys.modules."""
    board = types.ModuleType("torch.utils.tensorboard")
    board.SummaryWriter = type("SummaryWriter", (_NoOp,), {"__doc__": "A SummaryWriter that writes nothing."})
    sys.modules["torch.utils.tensorboard"] = board
    plt = _NoOpModule("matplotlib.pyplot")
    mpl = _NoOpModule("matplotlib")
    mpl.pyplot = plt
    sys.modules["matplotlib"] = mpl
    sys.modules["matplotlib.pyplot"] = plt


def main(argv):
    """Sets up the backend and runs the script as __main__; returns its exit status."""
    if len(argv) < 2 or argv[0] not in ("graft", "torch"):
        print(__doc__, file=sys.stderr)
        return 2
    backend, script, args = argv[0], argv[1], argv[2:]
    if backend == "graft":
        import graft
        from graft import _as_torch
        _as_torch.install()
        print(f"launch: `import torch` gives graft {graft.__version__} ({os.path.dirname(graft.__file__)})",
              file=sys.stderr)
    else:
        import torch
        if getattr(torch, "__spec__", None) is None or torch.__spec__.name != "torch" or hasattr(torch, "_as_torch"):
            print("launch: `import torch` does not give PyTorch", file=sys.stderr)
            return 2
        print(f"launch: `import torch` gives PyTorch {torch.__version__}", file=sys.stderr)
    _install_stand_ins()
    sys.argv = [script] + args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
