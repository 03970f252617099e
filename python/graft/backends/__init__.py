"""graft.backends: PyTorch's backend switches and availability queries. graft computes on the
CPU with its own kernels over OpenBLAS, so no accelerator library is available: cuDNN, cuBLAS,
MPS, MKL, MKL-DNN, OpenMP and opt_einsum report False, and their flags keep PyTorch's defaults
and can be set (``torch.backends.cudnn.benchmark = True``) without changing what graft does,
as on a PyTorch build without those libraries."""
from . import cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401

__all__ = ["cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
