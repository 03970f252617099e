"""graft.backends.mkl: graft's BLAS is OpenBLAS, not MKL."""


def is_available():
    """False: graft is not built with MKL."""
    return False
