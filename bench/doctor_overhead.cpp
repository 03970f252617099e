// What graft::doctor::Session costs on the anchor MLP training step (shared/anchors
// mlp_step: 784-512-256-10 ReLU MLP, batch 128, cross-entropy, SGD momentum 0.9), in one
// process: each round times the step without a session, at tier Counters (the doctor's tier 0:
// generations, live lists, the verdict) and at tier Sites (tier 1: + the creation site of
// every node, storage and tensor, from a backtrace in C++), in a rotating order; medians and
// ratios to the run without a session. Targets (issue #11): tier 0 <= 1.02, tier 1 <= 1.10.
//   ./build-bench/bench/doctor_overhead [rounds=7] [steps=40]
//   ./build-bench/bench/doctor_overhead --count MODE STEPS   (MODE 0/1/2: no timing, for
//       instruction counts under valgrind --tool=callgrind: bench/doctor_instructions.sh)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <graft/graft.h>

using namespace graft;
using clk = std::chrono::steady_clock;

namespace {

struct Mlp {
  nn::Sequential model{nn::Linear(784, 512), nn::ReLU(), nn::Linear(512, 256), nn::ReLU(), nn::Linear(256, 10)};
  optim::SGD opt{model->parameters(), optim::SGDOptions(0.01).momentum(0.9)};
  Tensor x = randn({128, 784});
  Tensor y = randint(0, 10, {128});
  void step() {
    opt.zero_grad();
    Tensor loss = cross_entropy(model->forward(x), y);
    loss.backward();
    opt.step();
  }
};

double ms_per_step(Mlp& m, int steps, int mode) {
  std::optional<doctor::Session> dr;
  if (mode > 0) {
    doctor::Options o;
    o.tier = mode == 1 ? lifetime::Tier::Counters : lifetime::Tier::Sites;
    dr.emplace(o);
  }
  for (int i = 0; i < 3; ++i) m.step();
  const auto t0 = clk::now();
  for (int i = 0; i < steps; ++i) m.step();
  const double ms = std::chrono::duration<double>(clk::now() - t0).count() / steps * 1e3;
  if (dr && !dr->findings().empty()) {
    std::fprintf(stderr, "unexpected findings:\n%s", doctor::format_findings(dr->findings()).c_str());
    std::exit(1);
  }
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--count") {
    set_num_threads(1);
    manual_seed(0);
    Mlp m;
    ms_per_step(m, std::atoi(argv[3]), std::atoi(argv[2]));
    return 0;
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 40;
  set_num_threads(1);  // one intra-op thread: the least noisy setting
  manual_seed(0);
  Mlp m;
  const char* names[] = {"off", "tier0 (counters)", "tier1 (sites)"};
  std::vector<double> times[3];
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < 3; ++k) {
      const int mode = (r + k) % 3;
      times[mode].push_back(ms_per_step(m, steps, mode));
    }
  const double base = median(times[0]);
  std::printf("mlp step (784-512-256-10, batch 128, SGD momentum), C++, median of %d rounds x %d steps, 1 thread\n",
              rounds, steps);
  for (int k = 0; k < 3; ++k)
    std::printf("  %-17s %8.3f ms/step   ratio %.3f\n", names[k], median(times[k]), median(times[k]) / base);
  return 0;
}
