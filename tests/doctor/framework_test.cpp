// The doctor behind its framework interface (graft::doctor::Framework): a framework other than
// graft (here a scripted one, as the Python layer's PyTorch backend is) that reports a growing
// chain of scalar additions and kept tensors gets the rules, the verdict and the report graft
// gets; assemble_census groups a framework's raw nodes as graft's census does.
#include "support/test_util.h"

using namespace graft;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

doctor::NodeInfo node(uintptr_t id, const std::string& name, int64_t step, std::vector<uintptr_t> next,
                      std::vector<int64_t> shape = {}) {
  doctor::NodeInfo n;
  n.id = id;
  n.name = name;
  n.step = step;
  n.generation = static_cast<uint32_t>(step);
  n.next = std::move(next);
  n.output_shape = std::move(shape);
  return n;
}

/// A program that adds each step's scalar loss into a running total (one AddBackward0 per step,
/// each pointing at the previous one) and keeps one 1 KiB prediction per step.
class ScriptedFramework final : public doctor::Framework {
 public:
  std::string name() const override { return "scripted 1.0"; }
  void count(int64_t step, doctor::StepRecord& rec) override {
    rec.graph_nodes = step;
    rec.stale_nodes = step - 1;
    rec.stale_generations = step - 1;
    rec.bytes_by_category["other"] = 1024 * (step - 1);
    rec.reserved = 1024 * (step - 1);
  }
  doctor::Census census(int64_t step, std::shared_ptr<void>&) override {
    std::vector<doctor::NodeInfo> nodes;
    for (int64_t s = 1; s <= step; ++s)
      nodes.push_back(node(100 + s, "AddBackward0", s,
                           s > 1 ? std::vector<uintptr_t>{uintptr_t(99 + s)} : std::vector<uintptr_t>{}));
    doctor::HandleInfo total;
    total.tensor = 1;
    total.node = uintptr_t(100 + step);
    total.step = step;
    return doctor::assemble_census(std::move(nodes), {total}, step);
  }
  std::vector<doctor::KeptTensor> kept_tensors(int64_t step, const std::unordered_set<uintptr_t>&) override {
    std::vector<doctor::KeptTensor> out;
    for (int64_t s = 1; s < step; ++s) {
      doctor::KeptTensor k;
      k.handle.tensor = uintptr_t(1000 + s);
      k.handle.step = s;
      k.storage = uintptr_t(5000 + s);
      k.bytes = 1024;
      k.order = uint64_t(s);
      out.push_back(k);
    }
    return out;
  }
  std::vector<std::string> memory_sentences() override { return {"scripted memory: 1 KiB per kept prediction."}; }
};

}  // namespace

TEST(DoctorFramework, AnotherFrameworkGetsTheRulesTheVerdictAndTheReport) {
  ScriptedFramework fw;
  doctor::Session dr;
  dr.set_framework(&fw);
  EXPECT_EQ(dr.framework_name(), "scripted 1.0");
  for (int i = 0; i < 4; ++i) dr.step();
  EXPECT_TRUE(dr.findings().empty());  // never before the warm-up and the confirmation
  for (int i = 0; i < 4; ++i) dr.step();
  const auto fs = dr.findings();
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].id, "LD001");  // a chain of scalar additions across steps: a running total
  EXPECT_EQ(fs[0].step, 5);
  EXPECT_EQ(fs[1].id, "LD011");  // one more kept tensor every step
  EXPECT_EQ(fs[1].step, 5);
  EXPECT_EQ(fs[1].tensor_bytes, 4 * 1024);
  const std::string report = dr.report();
  EXPECT_TRUE(contains(report, "graft.doctor: 8 steps watched on scripted 1.0 (tier sites")) << report;
  EXPECT_TRUE(contains(report, "scripted memory: 1 KiB per kept prediction.")) << report;
  EXPECT_FALSE(contains(report, "peaked at")) << report;  // no storage events: no peak
  EXPECT_FALSE(contains(report, "nothing grows")) << report;
  dr.stop();
  dr.set_framework(nullptr);
}

TEST(DoctorFramework, AssembleCensusGroupsNodesAsGraftsCensusDoes) {
  // two steps' graphs share their leaf's AccumulateGrad: it joins only its newest user's graph
  std::vector<doctor::NodeInfo> nodes{node(1, "AccumulateGrad", 2, {}), node(2, "MulBackward0", 1, {1}, {4}),
                                      node(3, "MulBackward0", 2, {1}, {4}), node(4, "SumBackward0", 2, {3}, {})};
  doctor::SavedInfo saved;
  saved.what = "self";
  saved.storage = 77;
  saved.bytes = 16;
  nodes[1].saved = {saved};
  nodes[2].saved = {saved, saved};  // one storage saved twice counts once
  doctor::HandleInfo h;
  h.tensor = 9;
  h.node = 4;
  h.step = 2;
  const doctor::Census c = doctor::assemble_census(nodes, {h}, 2);
  ASSERT_EQ(c.components.size(), 2u);
  EXPECT_EQ(c.components[0].nodes.size(), 3u);  // the biggest first: step 2's graph with the AccumulateGrad
  EXPECT_EQ(c.components[0].saved_bytes, 16);
  EXPECT_EQ(c.components[0].stale_steps, 0);
  ASSERT_EQ(c.components[0].handles.size(), 1u);
  EXPECT_EQ(c.components[0].handles[0].tensor, 9u);
  EXPECT_EQ(c.components[1].nodes.size(), 1u);  // step 1's graph, stale
  EXPECT_EQ(c.components[1].stale_steps, 1);
  EXPECT_EQ(c.nodes(), 4);
  EXPECT_EQ(c.saved_bytes(), 32);
}
