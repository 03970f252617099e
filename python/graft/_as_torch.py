"""`import torch` resolved to graft: ``torch`` is the graft package and every ``torch.<name>``
module is ``graft.<name>`` (the same module object, imported on first use), so an unchanged
PyTorch script runs on graft. ``python -m graft.doctor`` installs it by default.

A ``torch.<name>`` that graft does not have fails to import as it would in an installation of
PyTorch without it: ``ModuleNotFoundError: No module named 'torch.<name>'``.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys

__all__ = ["install", "uninstall", "installed", "is_real_torch"]


class _Loader(importlib.abc.Loader):
    """Hands out the already imported graft module; keeps that module's own spec and name."""

    def __init__(self, module):
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # the import system set module.__spec__ to the alias' spec: graft's module keeps its own
        if self.spec is not None:
            module.__spec__ = self.spec


class _Finder(importlib.abc.MetaPathFinder):
    """``torch`` -> ``graft``, ``torch.x.y`` -> ``graft.x.y``; first on sys.meta_path, so that
    no other finder loads graft's files a second time under the name ``torch``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        real = "graft" + fullname[len("torch"):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as e:
            if e.name == real or real.startswith(e.name + "."):
                return None  # graft has no such module: "No module named 'torch.x'"
            raise
        return importlib.machinery.ModuleSpec(fullname, _Loader(module), is_package=hasattr(module, "__path__"))


_finder = None
_saved = {}  # the torch modules that were imported before install()


def install():
    """Makes ``import torch`` (and ``torch.<name>``) import graft from now on. Modules already
    imported as ``torch`` are set aside and put back by uninstall()."""
    global _finder
    if _finder is not None:
        return
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        _saved[name] = sys.modules.pop(name)
    _finder = _Finder()
    sys.meta_path.insert(0, _finder)
    for name, module in list(sys.modules.items()):  # graft's modules already imported
        if name == "graft" or name.startswith("graft."):
            sys.modules["torch" + name[len("graft"):]] = module


def uninstall():
    """Undoes install(): ``import torch`` finds PyTorch (or nothing) again."""
    global _finder
    if _finder is None:
        return
    sys.meta_path.remove(_finder)
    _finder = None
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    sys.modules.update(_saved)
    _saved.clear()


def installed():
    return _finder is not None


def is_real_torch(module):
    """Whether `module` (what ``import torch`` gave) is PyTorch, not graft."""
    name = getattr(getattr(module, "__spec__", None), "name", None) or getattr(module, "__name__", "")
    return module is not None and name.split(".")[0] == "torch"
