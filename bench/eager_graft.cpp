// W1 (bench/eager_overhead.cpp) without libtorch: graft's loop alone, for instruction counts
// (valgrind --tool=callgrind ./eager_graft N), which stay stable when wall time does not.
#include <graft/graft.h>
#include <cstdlib>
int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 10000;
  graft::manual_seed(0);
  graft::Tensor x = graft::randn({16}, graft::requires_grad());
  graft::Tensor w = graft::randn({16});
  for (int i = 0; i < iters; ++i) {
    graft::Tensor y = (x * w + 1.0).tanh().sum();
    y.backward();
  }
  return 0;
}
