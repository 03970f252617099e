"""graft.backends.openmp: graft's CPU kernels use their own thread pool, not OpenMP."""


def is_available():
    """False: graft is not built with OpenMP."""
    return False
