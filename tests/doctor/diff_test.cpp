// The step diff (F9): what steps (a, b] made that is still alive, grouped by kind, line and
// type, with exact counts: a running total keeps 11 nodes per step and no saved bytes; a
// carried state with retain_graph keeps its saved slots; a clean loop's diff is empty after
// the warm-up. Lines are pinned with lifetime::SiteScope (as the Python layer names the user's
// line), so that they read the same in every build.
#include "support/test_util.h"

using namespace graft;

namespace {

struct Model {
  nn::Sequential net{nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 1)};
  optim::SGD opt{net->parameters(), optim::SGDOptions(0.01)};
  Tensor x = randn({4, 8});
  Tensor y = randn({4, 1});
};

lifetime::SiteId line(int n) { return lifetime::intern_site({"train.py", n, "train", "", true, ""}); }

/// kind, line, type -> count (and bytes): the entries as a map, independent of their order.
using Key = std::tuple<std::string, std::string, std::string>;
std::map<Key, int64_t> counts(const doctor::Diff& d) {
  std::map<Key, int64_t> m;
  for (const auto& e : d.entries) m[{e.kind, e.line, e.type}] = e.count;
  return m;
}
std::map<Key, int64_t> bytes(const doctor::Diff& d, const std::string& kind) {
  std::map<Key, int64_t> m;
  for (const auto& e : d.entries)
    if (e.kind == kind) m[{e.kind, e.line, e.type}] = e.bytes;
  return m;
}
/// The sentences without their last part (node sizes are the host allocator's).
std::vector<std::string> sentences_without_bytes(const doctor::Diff& d) {
  std::vector<std::string> out;
  for (const std::string& s : d.sentences()) out.push_back(s.substr(0, s.rfind(", ")));
  return out;
}

/// One training step; `leak` keeps the running total's graph (total = total + loss).
void train_step(Model& m, Tensor& total, bool leak) {
  m.opt.zero_grad();
  Tensor loss;
  {
    lifetime::SiteScope at(line(40));
    loss = mse_loss(m.net->forward(m.x), m.y);
  }
  {
    lifetime::SiteScope at(line(41));
    loss.backward();
  }
  {
    lifetime::SiteScope at(line(89));
    total = total + (leak ? loss : loss.detach());
  }
  m.opt.step();  // a doctor step
}

}  // namespace

TEST(DoctorDiff, RunningTotalKeepsNineNodesPerStepAndNoSavedBytes) {
  Model m;
  doctor::Session dr;
  Tensor total = zeros({});
  for (int i = 0; i < 6; ++i) train_step(m, total, /*leak=*/true);
  ASSERT_EQ(dr.steps(), 6);

  // steps 3..5: only their graphs' nodes survive (their gradients and totals were replaced)
  const doctor::Diff d = dr.diff(2, 5);
  EXPECT_EQ(d.from, 2);
  EXPECT_EQ(d.to, 5);
  EXPECT_EQ(counts(d), (std::map<Key, int64_t>{
                           {{"node", "train.py:40", "AddBackward0"}, 6},  // the two Linear biases
                           {{"node", "train.py:40", "MmBackward0"}, 6},
                           {{"node", "train.py:40", "MseLossBackward0"}, 3},  // one node, as PyTorch's
                           {{"node", "train.py:40", "ReluBackward0"}, 3},
                           {{"node", "train.py:40", "TBackward0"}, 6},
                           {{"node", "train.py:89", "AddBackward0"}, 3},  // total + loss
                       }));
  int64_t nodes = 0;
  for (const auto& e : d.entries) nodes += e.count;
  EXPECT_EQ(nodes, 9 * 3);
  EXPECT_EQ(sentences_without_bytes(d), (std::vector<std::string>{
                                            "+6 nodes (AddBackward0) from train.py:40, 2 per step",
                                            "+6 nodes (MmBackward0) from train.py:40, 2 per step",
                                            "+6 nodes (TBackward0) from train.py:40, 2 per step",
                                            "+3 nodes (MseLossBackward0) from train.py:40, 1 per step",
                                            "+3 nodes (ReluBackward0) from train.py:40, 1 per step",
                                            "+3 nodes (AddBackward0) from train.py:89, 1 per step",
                                        }));
  for (const auto& e : d.entries) EXPECT_GT(e.bytes, 0) << e.type;  // each node's host block

  // the last step also has its live gradients, the total, and the shared accumulators
  const doctor::Diff last = dr.diff(5, 6);
  auto want = std::map<Key, int64_t>{
      {{"node", "train.py:40", "AccumulateGrad"}, 4},  // made in step 1, reused by every step since
      {{"node", "train.py:40", "AddBackward0"}, 2},   {{"node", "train.py:40", "MseLossBackward0"}, 1},
      {{"node", "train.py:40", "MmBackward0"}, 2},    {{"node", "train.py:40", "ReluBackward0"}, 1},
      {{"node", "train.py:40", "TBackward0"}, 2},     {{"node", "train.py:89", "AddBackward0"}, 1},
      {{"storage", "train.py:41", "gradient"}, 4},    {{"storage", "train.py:89", "other"}, 1},
  };
  EXPECT_EQ(counts(last), want);
  EXPECT_EQ(bytes(last, "storage"), (std::map<Key, int64_t>{
                                        {{"storage", "train.py:41", "gradient"}, (16 * 8 + 16 + 16 + 1) * 4},
                                        {{"storage", "train.py:89", "other"}, 4},
                                    }));
  EXPECT_TRUE(bytes(last, "saved_slot").empty());  // backward released every slot

  // over steps 3..6 the gradients are 4 storages made in one step, not "1 per step"
  const std::vector<std::string> s = sentences_without_bytes(dr.diff(2, 6));
  EXPECT_NE(std::find(s.begin(), s.end(), "+4 storages (gradient) from train.py:41"), s.end())
      << ::testing::PrintToString(s);
  EXPECT_NE(std::find(s.begin(), s.end(), "+4 nodes (AccumulateGrad) from train.py:40"), s.end())
      << ::testing::PrintToString(s);
  EXPECT_NE(std::find(s.begin(), s.end(), "+8 nodes (AddBackward0) from train.py:40, 2 per step"), s.end())
      << ::testing::PrintToString(s);
}

TEST(DoctorDiff, CarriedStateWithRetainGraphKeepsItsSavedSlots) {
  nn::Linear cell{8, 8};
  optim::SGD opt{cell->parameters(), optim::SGDOptions(0.01)};
  Tensor x = randn({1, 8});
  Tensor state = zeros({1, 8});
  doctor::Session dr;
  for (int i = 0; i < 6; ++i) {
    opt.zero_grad();
    {
      lifetime::SiteScope at(line(12));
      state = tanh(state * 0.5 + cell->forward(x));  // carries its graph into the next step
      state.pow(2).sum().backward(Tensor(), /*retain_graph=*/true);
    }
    opt.step();
  }
  const doctor::Diff d = dr.diff(2, 4);
  EXPECT_EQ(counts(d), (std::map<Key, int64_t>{
                           {{"node", "train.py:12", "AddBackward0"}, 4},
                           {{"node", "train.py:12", "MmBackward0"}, 2},
                           {{"node", "train.py:12", "MulBackward0"}, 2},
                           {{"node", "train.py:12", "TBackward0"}, 2},
                           {{"node", "train.py:12", "TanhBackward0"}, 2},
                           {{"saved_slot", "train.py:12", "MmBackward0.self"}, 2},
                           {{"saved_slot", "train.py:12", "MulBackward0.other"}, 2},
                           {{"saved_slot", "train.py:12", "TanhBackward0.result"}, 2},
                           {{"storage", "train.py:12", "saved_for_backward"}, 4},
                       }));
  EXPECT_EQ(bytes(d, "saved_slot"), (std::map<Key, int64_t>{
                                        {{"saved_slot", "train.py:12", "MmBackward0.self"}, 2 * 8 * 4},  // x
                                        {{"saved_slot", "train.py:12", "MulBackward0.other"}, 2 * 8},    // 0.5
                                        {{"saved_slot", "train.py:12", "TanhBackward0.result"}, 2 * 8 * 4},
                                    }));
  // the storages the slots keep: each step's tanh output and its wrapped scalar (x is older)
  EXPECT_EQ(bytes(d, "storage"),
            (std::map<Key, int64_t>{{{"storage", "train.py:12", "saved_for_backward"}, 2 * (32 + 8)}}));
  EXPECT_EQ(sentences_without_bytes(d), (std::vector<std::string>{
                                            "+4 nodes (AddBackward0) from train.py:12, 2 per step",
                                            "+2 nodes (MmBackward0) from train.py:12, 1 per step",
                                            "+2 nodes (MulBackward0) from train.py:12, 1 per step",
                                            "+2 nodes (TBackward0) from train.py:12, 1 per step",
                                            "+2 nodes (TanhBackward0) from train.py:12, 1 per step",
                                            "+2 saved_slots (MmBackward0.self) from train.py:12, 1 per step",
                                            "+2 saved_slots (MulBackward0.other) from train.py:12, 1 per step",
                                            "+2 saved_slots (TanhBackward0.result) from train.py:12, 1 per step",
                                            "+4 storages (saved_for_backward) from train.py:12, 2 per step",
                                        }));
  state = Tensor();  // let the chain go
}

TEST(DoctorDiff, CleanLoopHasAnEmptyDiffAfterTheWarmUp) {
  Model m;
  doctor::Session dr;
  Tensor total = zeros({});
  for (int i = 0; i < 10; ++i) train_step(m, total, /*leak=*/false);
  const doctor::Diff d = dr.diff(2, 9);
  EXPECT_TRUE(d.entries.empty()) << ::testing::PrintToString(d.sentences());
  EXPECT_EQ(d.sentences(), std::vector<std::string>{"nothing made in steps 3..9 is still alive"});
  // up to the last step: only what that step made and still uses (its gradients, the total)
  const doctor::Diff last = dr.diff(2, 10);
  EXPECT_EQ(counts(last), (std::map<Key, int64_t>{{{"storage", "train.py:41", "gradient"}, 4},
                                                  {{"storage", "train.py:89", "other"}, 1}}));
  EXPECT_EQ(last.sentences(), (std::vector<std::string>{"+4 storages (gradient) from train.py:41, 644 B",
                                                        "+1 storage (other) from train.py:89, 4 B"}));
}

TEST(DoctorDiff, RangeIsChecked) {
  doctor::Session dr;
  EXPECT_THROW_MSG(dr.diff(3, 2), ValueError, "diff: expected 0 <= from <= to, got 3 and 2");
  EXPECT_THROW_MSG(dr.diff(-1, 2), ValueError, "diff: expected 0 <= from <= to, got -1 and 2");
}
