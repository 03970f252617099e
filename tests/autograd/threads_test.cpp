// Several threads building graphs on one shared parameter and running backward concurrently:
// gradients from every thread accumulate into the one .grad (one AccumulateGrad per leaf,
// accumulation under its lock), and tensors made on one thread may die on another.
#include <thread>

#include "support/test_util.h"

using namespace graft;

TEST(Threads, ConcurrentBackwardAccumulatesIntoSharedLeaf) {
  Tensor w = ones({8}, TensorOptions(kFloat64).requires_grad(true));
  constexpr int kThreads = 4, kIters = 200;
  std::vector<Tensor> made(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        Tensor x = full({8}, static_cast<double>(t + 1), TensorOptions(kFloat64));
        (w * x).sum().backward();
      }
      made[t] = ones({16});  // freed later by the main thread
    });
  for (auto& th : pool) th.join();
  // d/dw sum(w * (t+1)) = t+1, summed over threads and iterations: (1+2+3+4) * 200
  for (double g : w.grad().to_vector<double>()) EXPECT_EQ(g, 10.0 * kIters);
  made.clear();
}
