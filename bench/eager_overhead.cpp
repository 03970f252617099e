// Eager overhead, graft vs libtorch, in one run: the anchor workload of
// shared/anchors/libtorch_bench.cpp (eager_us_per_op): 16-element float32 tensors,
// `(x * w + 1).tanh().sum()` then backward(), timed per op (4 ops + backward per iteration).
// Rounds alternate between the two libraries; the median of each is reported with the ratio.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <graft/graft.h>

using clk = std::chrono::steady_clock;
static double since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

static double graft_eager(int n) {
  graft::Tensor x = graft::randn({16}, graft::requires_grad());
  graft::Tensor w = graft::randn({16});
  auto t0 = clk::now();
  for (int i = 0; i < n / 4; ++i) {
    graft::Tensor y = (x * w + 1.0).tanh().sum();
    y.backward();
  }
  return since(t0) / n * 1e6;
}

static double torch_eager(int n) {
  auto x = torch::randn({16}, torch::requires_grad());
  auto w = torch::randn({16});
  auto t0 = clk::now();
  for (int i = 0; i < n / 4; ++i) {
    auto y = (x * w + 1.0).tanh().sum();
    y.backward();
  }
  return since(t0) / n * 1e6;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Usage: eager_overhead [rounds] [ops per round] [libtorch intra-op threads]. libtorch runs with
// one intra-op thread by default: its faster setting on this machine (docs/performance.md).
int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int n = argc > 2 ? std::atoi(argv[2]) : 40000;
  const int torch_threads = argc > 3 ? std::atoi(argv[3]) : 1;
  torch::set_num_threads(torch_threads);
  torch::manual_seed(0);
  graft::manual_seed(0);
  graft_eager(4000);  // warm up both
  torch_eager(4000);
  std::vector<double> g, t;
  for (int r = 0; r < rounds; ++r) {
    g.push_back(graft_eager(n));
    t.push_back(torch_eager(n));
  }
  const double gm = median(g), tm = median(t);
  std::printf("eager_us_per_op graft %.3f libtorch %.3f ratio %.3f (graft/libtorch; libtorch threads %d)\n", gm, tm,
              gm / tm, torch_threads);
  return 0;
}
