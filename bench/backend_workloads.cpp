// The anchor workloads that need no nn module yet, on graft alone, so that one binary can be
// run under GRAFT_ALLOC_CONF=backend:native and backend:malloc (bench/compare_backends.sh):
//   eager_us_per_op: (x * w + 1).tanh().sum() + backward, 16 floats (shared/anchors)
//   mlp_ms_per_step: 784-512-256-10 ReLU MLP, batch 128, cross-entropy, SGD momentum 0.9,
//                    written with graft ops and in-place updates (shared/anchors mlp_step)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <graft/graft.h>

using namespace graft;
using clk = std::chrono::steady_clock;
static double since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

static double eager(int n) {
  Tensor x = randn({16}, requires_grad());
  Tensor w = randn({16});
  auto t0 = clk::now();
  for (int i = 0; i < n / 4; ++i) {
    Tensor y = (x * w + 1.0).tanh().sum();
    y.backward();
  }
  return since(t0) / n * 1e6;
}

static double mlp(int steps, int batch) {
  const int64_t dims[] = {784, 512, 256, 10};
  std::vector<Tensor> params, momentum;
  for (int l = 0; l < 3; ++l) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(dims[l]));
    params.push_back(((rand({dims[l + 1], dims[l]}) * 2 - 1) * bound).requires_grad_());
    params.push_back(((rand({dims[l + 1]}) * 2 - 1) * bound).requires_grad_());
  }
  for (auto& p : params) momentum.push_back(zeros_like(p));
  Tensor x = randn({batch, 784});
  Tensor y = randint(0, 10, {batch, 1});
  auto step = [&] {
    for (auto& p : params) p.mutable_grad() = Tensor();  // zero_grad(set_to_none=True)
    Tensor h = relu(linear(x, params[0], params[1]));
    h = relu(linear(h, params[2], params[3]));
    Tensor logits = linear(h, params[4], params[5]);
    Tensor loss = (logits.logsumexp({1}, true) - logits.gather(1, y)).mean();  // cross_entropy
    loss.backward();
    NoGradGuard ng;
    for (size_t k = 0; k < params.size(); ++k) {
      momentum[k].mul_(0.9).add_(params[k].grad());
      params[k].sub_(momentum[k] * 0.01);
    }
  };
  for (int i = 0; i < 5; ++i) step();
  auto t0 = clk::now();
  for (int i = 0; i < steps; ++i) step();
  return since(t0) / steps * 1e3;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 40000;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 30;
  manual_seed(0);
  eager(4000);
  const double e = eager(n);
  const double m = mlp(steps, 128);
  std::printf("backend %s eager_us_per_op %.4f mlp_ms_per_step %.3f\n", allocator_backend().c_str(), e, m);
  return 0;
}
