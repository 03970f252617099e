// The leak doctor's rules from C++ (graft::doctor::Session): each leaking loop fires exactly
// its rule, at step 5 for the growth rules (warm-up 2 + confirmation 3), never earlier; its
// fixed twin fires nothing. Written outside namespace graft: the creation sites name the
// first frame outside graft, which must be these test bodies.
#include <deque>

#include "support/test_util.h"

using namespace graft;

namespace {

struct Model {
  nn::Sequential net{nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 1)};
  optim::SGD opt{net->parameters(), optim::SGDOptions(0.01)};
  Tensor x = randn({4, 8});
  Tensor y = randn({4, 1});
  Tensor loss() { return mse_loss(net->forward(x), y); }
};

std::vector<std::string> ids(const doctor::Session& dr) {
  std::vector<std::string> out;
  for (const auto& f : dr.findings()) out.push_back(f.id);
  return out;
}

/// Runs `step` (which must call the optimizer's step) `n` times; records the steps at which
/// findings appeared.
template <class F>
std::vector<int64_t> run(doctor::Session& dr, int n, F step) {
  std::vector<int64_t> at;
  size_t seen = 0;
  for (int i = 1; i <= n; ++i) {
    step(i);
    const auto fs = dr.findings();
    for (; seen < fs.size(); ++seen) at.push_back(dr.steps());
  }
  return at;
}

}  // namespace

TEST(DoctorRules, CleanLoopHasNoFindings) {
  Model m;
  doctor::Session dr;
  run(dr, 30, [&](int) {
    m.opt.zero_grad();
    Tensor loss = m.loss();
    loss.backward();
    m.opt.step();
  });
  EXPECT_EQ(dr.steps(), 30);
  EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
}

TEST(DoctorRules, AccumulatedLossIsLD001AtStepFive) {
  Model m;
  doctor::Session dr;
  Tensor total = zeros({});
  int leak_line = 0;
  auto at = run(dr, 8, [&](int) {
    m.opt.zero_grad();
    Tensor loss = m.loss();
    loss.backward();
    leak_line = __LINE__ + 1;  // the next line is the leak: each step's graph hangs off the running total
    total = total + loss;
    m.opt.step();
  });
  ASSERT_EQ(ids(dr), std::vector<std::string>{"LD001"}) << doctor::format_findings(dr.findings());
  EXPECT_EQ(at, std::vector<int64_t>{5});
  const auto f = dr.findings()[0];
  EXPECT_EQ(f.saved_bytes, 0);  // backward freed what the nodes saved: host-only growth
  EXPECT_GT(f.host_bytes, 0);
  EXPECT_GT(f.nodes_per_step, 0);
  EXPECT_EQ(f.severity, doctor::Severity::Leak);
  // the C++ holder: the running total, made in this test's body (named by its function
  // without line tables, as in Release; by this file's line with them, as in the sanitizer build)
  ASSERT_FALSE(f.holders.empty());
  std::ostringstream here;
  here << "rules_test.cpp:" << leak_line;
  EXPECT_TRUE(f.line.find("AccumulatedLossIsLD001") != std::string::npos || f.line == here.str()) << f.line;
}

TEST(DoctorRules, DetachedTotalIsClean) {
  Model m;
  doctor::Session dr;
  Tensor total = zeros({});
  run(dr, 12, [&](int) {
    m.opt.zero_grad();
    Tensor loss = m.loss();
    loss.backward();
    total = total + loss.detach();
    m.opt.step();
  });
  EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
}

// Carried state whose chain involves no parameter (a simulation state, a running feature):
// backward through old steps needs no tensor the optimizer changes, so PyTorch runs it too.
struct Carried {
  nn::Linear cell{8, 8};
  optim::SGD opt{cell->parameters(), optim::SGDOptions(0.01)};
  Tensor x = randn({1, 8});
  Tensor state = zeros({1, 8});
  void step(bool detach, bool retain = true) {
    opt.zero_grad();
    if (detach) state = state.detach();
    state = tanh(state * 0.5 + cell->forward(x));  // the state carries its graph into the next step
    state.pow(2).sum().backward(Tensor(), retain);
    opt.step();
  }
};

TEST(DoctorRules, CarriedStateWithRetainGraphIsLD002) {
  Carried c;
  doctor::Session dr;
  auto at = run(dr, 7, [&](int) { c.step(false); });
  ASSERT_EQ(ids(dr), std::vector<std::string>{"LD002"}) << doctor::format_findings(dr.findings());
  EXPECT_EQ(at, std::vector<int64_t>{5});
  EXPECT_GT(dr.findings()[0].saved_bytes, 0);
}

TEST(DoctorRules, CarriedStateDetachedEachStepIsClean) {
  Carried c;
  doctor::Session dr;
  run(dr, 12, [&](int) { c.step(true, /*retain=*/false); });
  EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
}

TEST(DoctorRules, DetachEveryThreeStepsIsLD007UnlessTheWindowIsDeclared) {
  for (bool declare : {false, true}) {
    Carried c;
    doctor::Session dr;
    if (declare) dr.allow_window(3);
    run(dr, 12, [&](int i) { c.step(i % 3 == 1); });  // truncated BPTT over 3 steps
    if (declare)
      EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
    else
      EXPECT_EQ(ids(dr), std::vector<std::string>{"LD007"}) << doctor::format_findings(dr.findings());
  }
}

TEST(DoctorRules, OutputsKeptWithoutBackwardAreLD003) {
  Model m;
  doctor::Session dr;
  std::vector<Tensor> kept;
  auto at = run(dr, 7, [&](int) {
    kept.push_back(m.net->forward(m.x));  // evaluation under grad mode, outputs kept
    dr.step();
  });
  ASSERT_EQ(ids(dr), std::vector<std::string>{"LD003"}) << doctor::format_findings(dr.findings());
  EXPECT_EQ(at, std::vector<int64_t>{5});
  EXPECT_GT(dr.findings()[0].saved_bytes, 0);
}

TEST(DoctorRules, OutputsKeptUnderNoGradAreLD011GrowthAtStepFive) {
  Model m;
  doctor::Session dr;
  std::vector<Tensor> kept;
  int line = 0;
  auto at = run(dr, 10, [&](int) {
    NoGradGuard ng;
    kept.push_back(m.net->forward(m.x)), line = __LINE__;  // no graph, but one more [4, 1] every step
    dr.step();
  });
  ASSERT_EQ(ids(dr), std::vector<std::string>{"LD011"}) << doctor::format_findings(dr.findings());
  EXPECT_EQ(at, std::vector<int64_t>{5});
  const doctor::Finding f = dr.findings()[0];
  EXPECT_EQ(f.severity, doctor::Severity::Growth);
  EXPECT_STREQ(doctor::severity_name(f.severity), "growth");
  // the line that made them (the test's function without line tables, as in Release)
  EXPECT_TRUE(f.line.find("OutputsKeptUnderNoGradAreLD011") != std::string::npos ||
              f.line == "rules_test.cpp:" + std::to_string(line))
      << f.line;
  // at step 5 the tensors of steps 1..4 are alive; 2 more than at step 3, the first after the warm-up
  EXPECT_EQ(f.tensor_bytes, 4 * 16);
  EXPECT_DOUBLE_EQ(f.bytes_per_step, 16);
  EXPECT_NE(f.message.find("4 tensors without a graph"), std::string::npos) << f.message;
  EXPECT_EQ(f.nodes, 0);
}

TEST(DoctorRules, KeptNumbersAndABoundedWindowAreClean) {
  Model m;
  doctor::Session dr;
  std::vector<double> numbers;
  std::deque<Tensor> last;  // the last 3 outputs: bounded
  run(dr, 12, [&](int) {
    NoGradGuard ng;
    Tensor out = m.net->forward(m.x);
    numbers.push_back(out.sum().item<double>());
    last.push_back(out);
    if (last.size() > 3) last.pop_front();
    dr.step();
  });
  EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
}

TEST(DoctorRules, InputsSavedByALeakingGraphAreNotAlsoLD011) {
  Model m;
  doctor::Session dr;
  std::vector<Tensor> losses;
  run(dr, 8, [&](int) {
    m.opt.zero_grad();
    Tensor x = randn({4, 8});  // a new batch each step, saved by the first Linear
    Tensor loss = mse_loss(m.net->forward(x), m.y);
    loss.backward(Tensor(), true);
    losses.push_back(loss);  // keeps each step's graph and, through it, each batch
    m.opt.step();
  });
  ASSERT_EQ(ids(dr), std::vector<std::string>{"LD001"}) << doctor::format_findings(dr.findings());
}

TEST(DoctorRules, CreateGraphWithoutResetIsLD004) {
  Model m;
  doctor::Session dr;
  graft::testing::WarningCapture quiet;  // backward(create_graph=True) warns, as PyTorch
  auto at = run(dr, 7, [&](int) {
    m.loss().backward(Tensor(), std::nullopt, /*create_graph=*/true);
    m.opt.step();
  });
  ASSERT_EQ(ids(dr), std::vector<std::string>{"LD004"}) << doctor::format_findings(dr.findings());
  EXPECT_EQ(at, std::vector<int64_t>{5});
  for (auto& p : m.net->parameters()) p.mutable_grad() = Tensor();  // break the cycle
}

TEST(DoctorRules, CreateGraphWithGradsResetIsClean) {
  Model m;
  doctor::Session dr;
  graft::testing::WarningCapture quiet;
  run(dr, 10, [&](int) {
    m.loss().backward(Tensor(), std::nullopt, /*create_graph=*/true);
    m.opt.step();
    for (auto& p : m.net->parameters()) p.mutable_grad() = Tensor();
  });
  EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
}

TEST(DoctorRules, MissingZeroGradIsLD008UnlessAccumulationIsDeclared) {
  for (int mode = 0; mode < 3; ++mode) {  // 0: missing, 1: zero_grad, 2: declared accumulation
    Model m;
    doctor::Session dr;
    if (mode == 2) dr.declare_accumulation(100);
    run(dr, 8, [&](int) {
      if (mode == 1) m.opt.zero_grad();
      m.loss().backward();
      m.opt.step();
    });
    if (mode == 0)
      EXPECT_EQ(ids(dr), std::vector<std::string>{"LD008"}) << doctor::format_findings(dr.findings());
    else
      EXPECT_TRUE(dr.findings().empty()) << mode << doctor::format_findings(dr.findings());
  }
}

// A GAN's iteration from C++: the discriminator's update, then the generator's, whose backward
// goes through the discriminator and adds into its .grad after its step. One doctor step per
// iteration (docs/notes/doctor.md, "Steps"); LD008 only when the discriminator never clears.
TEST(DoctorRules, TwoOptimizersMakeOneStepPerIterationAndLD008OnlyWithoutZeroGrad) {
  for (bool clears : {true, false}) {
    manual_seed(0);
    nn::Sequential gen{nn::Linear(4, 8), nn::Tanh(), nn::Linear(8, 6)};
    nn::Sequential disc{nn::Linear(6, 8), nn::Tanh(), nn::Linear(8, 1)};
    optim::SGD opt_g{gen->parameters(), optim::SGDOptions(0.01)};
    optim::SGD opt_d{disc->parameters(), optim::SGDOptions(0.01)};
    Tensor real = randn({8, 6});
    doctor::Session dr;
    run(dr, 10, [&](int) {
      Tensor z = randn({8, 4});
      if (clears) opt_d.zero_grad();
      Tensor d_loss = disc->forward(real).neg().sigmoid().mean() + disc->forward(gen->forward(z).detach()).mean();
      d_loss.backward();
      opt_d.step();
      opt_g.zero_grad();
      disc->forward(gen->forward(z)).neg().mean().backward();
      opt_g.step();
    });
    EXPECT_EQ(dr.steps(), 10);
    if (clears)
      EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
    else
      EXPECT_EQ(ids(dr), std::vector<std::string>{"LD008"}) << doctor::format_findings(dr.findings());
  }
}

// A second training stage with a new optimizer: the first iteration with it runs into the next
// one (an optimizer about to step twice in one step ends it), then each iteration is a step.
TEST(DoctorRules, ANewOptimizerInASecondStageStillEndsSteps) {
  Model m;
  optim::SGD second{m.net->parameters(), optim::SGDOptions(0.001)};
  doctor::Session dr;
  run(dr, 16, [&](int i) {
    optim::SGD& o = i <= 6 ? m.opt : second;
    o.zero_grad();
    m.loss().backward();
    o.step();
  });
  EXPECT_EQ(dr.steps(), 15);
  EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
}

TEST(DoctorRules, RetainGraphNeverReusedIsLD009) {
  Model m;
  doctor::Session dr;
  run(dr, 8, [&](int) {
    m.opt.zero_grad();
    Tensor loss = m.loss();
    loss.backward(Tensor(), /*retain_graph=*/true);  // nothing backpropagates through it again
    m.opt.step();
  });
  EXPECT_EQ(ids(dr), std::vector<std::string>{"LD009"}) << doctor::format_findings(dr.findings());
  EXPECT_EQ(dr.findings()[0].severity, doctor::Severity::Info);
}

TEST(DoctorRules, DoubleBackwardThatNeedsRetainGraphIsClean) {
  Model m;
  doctor::Session dr;
  run(dr, 10, [&](int) {
    m.opt.zero_grad();
    Tensor loss = m.loss();
    // gradient penalty: grad with create_graph (which retains), then backward through both
    auto params = m.net->parameters();
    TensorList g = autograd::grad({loss}, params, {}, std::nullopt, /*create_graph=*/true);
    Tensor penalty = zeros({});
    for (auto& t : g) penalty = penalty + t.pow(2).sum();
    (loss + penalty).backward();
    m.opt.step();
  });
  EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
}

TEST(DoctorRules, EvaluationUnderGradModeIsLD010) {
  Model m;
  doctor::Session dr;
  double correct = 0;
  run(dr, 9, [&](int) {
    Tensor out = m.net->forward(m.x);  // no backward in this step: the saved inputs are wasted
    correct += (out > 0).to(kFloat32).sum().item<float>();
    dr.step();
  });
  EXPECT_EQ(ids(dr), std::vector<std::string>{"LD010"}) << doctor::format_findings(dr.findings());
  EXPECT_GT(dr.findings()[0].saved_bytes, 0);
}

TEST(DoctorRules, OnlyOneSessionAtATime) {
  doctor::Session dr;
  EXPECT_THROW_HAS(doctor::Session second, RuntimeError, "already watching");
  dr.stop();
  doctor::Session third;  // fine once the first stopped
  EXPECT_TRUE(third.watching());
}

TEST(DoctorRules, AssertNoLeakThrowsWithTheFindings) {
  Model m;
  doctor::Session dr;
  Tensor total = zeros({});
  run(dr, 6, [&](int) {
    m.opt.zero_grad();
    Tensor loss = m.loss();
    loss.backward();
    total = total + loss;
    m.opt.step();
  });
  EXPECT_THROW_HAS(dr.assert_no_leak(), RuntimeError, "LD001 accumulated-loss");
}
