"""graft.backends.mps: graft has no Metal (MPS) device."""


def is_built():
    """False: graft is not built with MPS support."""
    return False


def is_available():
    """False: graft has no MPS device."""
    return False
