// Convolution, graft vs libtorch in one run: conv2d forward, and forward + backward (input,
// weight and bias gradients), float32, on shapes from small CNNs (the digits demo's layers
// and a CIFAR-sized layer). Rounds alternate between the libraries; medians and the ratio
// graft/libtorch are printed (below 1: graft is faster). Both use 2 threads where they can:
// libtorch through its intra-op pool, graft through OpenBLAS's.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <graft/graft.h>

using clk = std::chrono::steady_clock;
static double since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Shape {
  const char* name;
  int64_t n, c, h, w, o, k, stride, pad;
};

static double graft_conv(const Shape& s, int iters, bool backward) {
  graft::Tensor x = graft::randn({s.n, s.c, s.h, s.w}, graft::requires_grad(backward));
  graft::Tensor w = graft::randn({s.o, s.c, s.k, s.k}, graft::requires_grad(backward));
  graft::Tensor b = graft::randn({s.o}, graft::requires_grad(backward));
  auto t0 = clk::now();
  for (int i = 0; i < iters; ++i) {
    graft::Tensor y = graft::conv2d(x, w, b, {s.stride}, {s.pad});
    if (backward) y.sum().backward();
  }
  return since(t0) / iters * 1e6;
}

static double torch_conv(const Shape& s, int iters, bool backward) {
  auto x = torch::randn({s.n, s.c, s.h, s.w}, torch::requires_grad(backward));
  auto w = torch::randn({s.o, s.c, s.k, s.k}, torch::requires_grad(backward));
  auto b = torch::randn({s.o}, torch::requires_grad(backward));
  auto t0 = clk::now();
  for (int i = 0; i < iters; ++i) {
    auto y = torch::conv2d(x, w, b, {s.stride, s.stride}, {s.pad, s.pad});
    if (backward) y.sum().backward();
  }
  return since(t0) / iters * 1e6;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  torch::set_num_threads(2);
  const Shape shapes[] = {
      {"digits conv1 32x1x8x8 -> 16, k3 p1", 32, 1, 8, 8, 16, 3, 1, 1},
      {"digits conv2 32x16x8x8 -> 32, k3 p1", 32, 16, 8, 8, 32, 3, 1, 1},
      {"cifar 32x32x32x32 -> 64, k3 p1", 32, 32, 32, 32, 64, 3, 1, 1},
      {"strided 16x64x28x28 -> 64, k3 s2 p1", 16, 64, 28, 28, 64, 3, 2, 1},
  };
  for (const Shape& s : shapes) {
    const int iters = s.h >= 28 ? 5 : 100;
    for (bool bw : {false, true}) {
      graft_conv(s, 2, bw);  // warm up
      torch_conv(s, 2, bw);
      std::vector<double> g, t;
      for (int r = 0; r < rounds; ++r) {
        g.push_back(graft_conv(s, iters, bw));
        t.push_back(torch_conv(s, iters, bw));
      }
      const double gm = median(g), tm = median(t);
      std::printf("conv2d %-5s %-40s graft %9.1f us  libtorch %9.1f us  ratio %.2f\n", bw ? "f+b" : "fwd", s.name, gm,
                  tm, gm / tm);
    }
  }
  return 0;
}
