#pragma once
/// Threads used inside one op (PyTorch's torch.set_num_threads / get_num_threads). Today the
/// only multi-threaded CPU work is OpenBLAS's GEMM (matmul, linear, convolution). On a machine
/// whose cores are busy with other processes, one thread can be many times faster than
/// several spinning ones (docs/performance.md); the environment variable OPENBLAS_NUM_THREADS
/// sets the starting value.
namespace graft {

/// Sets the number of threads for intra-op parallelism; `n` must be positive.
void set_num_threads(int n);
/// The number of threads used for intra-op parallelism.
int get_num_threads();

}  // namespace graft
