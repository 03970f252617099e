// The live-graph census (F2): exact saved bytes of hand-built graphs, storages counted once
// however many views and nodes save them, parameters reported apart, saved bytes gone after
// backward while the nodes stay until their handle dies, node counts by type, and graphs of
// different steps that share parameters kept apart.
#include <algorithm>
#include <set>

#include "support/test_util.h"

using namespace graft;

namespace {

/// Node counts by type, as the census reports them.
using TypeCounts = std::map<std::string, int64_t>;

const doctor::NodeInfo* find_node(const doctor::GraphComponent& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

uintptr_t id_of(const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()); }

}  // namespace

TEST(DoctorCensus, LinearOnAnInputWithoutGradSavesExactlyTheInput) {
  nn::Linear lin(64, 256);
  doctor::Session dr;
  Tensor x = randn({32, 64});  // does not require grad: only the weight's gradient needs it
  Tensor y = lin->forward(x);  // x @ W.t() + b
  const doctor::Census c = dr.live_graphs();
  ASSERT_EQ(c.components.size(), 1u);
  const doctor::GraphComponent& g = c.components[0];
  EXPECT_EQ(g.saved_bytes, 32 * 64 * 4);  // the input, saved by MmBackward0 for W's gradient
  EXPECT_EQ(g.parameter_bytes, 0);        // the weight is not saved: x needs no gradient
  EXPECT_EQ(c.saved_bytes(), 32 * 64 * 4);
  EXPECT_EQ(g.nodes_by_type,
            (TypeCounts{{"AccumulateGrad", 2}, {"AddBackward0", 1}, {"MmBackward0", 1}, {"TBackward0", 1}}));
  EXPECT_EQ(c.nodes(), 5);
  EXPECT_EQ(g.oldest_step, 1);
  EXPECT_EQ(g.newest_step, 1);
  EXPECT_EQ(g.stale_steps, 0);
  EXPECT_FALSE(g.executed);
  EXPECT_FALSE(g.cross_step_edges);
  // one saved slot, the input itself
  const doctor::NodeInfo* mm = find_node(g, "MmBackward0");
  ASSERT_NE(mm, nullptr);
  ASSERT_EQ(mm->saved.size(), 1u);
  EXPECT_EQ(mm->saved[0].what, "self");
  EXPECT_EQ(mm->saved[0].shape, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(mm->saved[0].dtype, "float32");
  EXPECT_EQ(mm->saved[0].bytes, 32 * 64 * 4);
  EXPECT_EQ(mm->saved[0].storage, reinterpret_cast<uintptr_t>(x.impl()->storage().get()));
  EXPECT_FALSE(mm->saved[0].parameter);
  // the handle is y, the output the user holds
  ASSERT_EQ(g.handles.size(), 1u);
  EXPECT_EQ(g.handles[0].tensor, id_of(y));
  EXPECT_EQ(g.handles[0].node, reinterpret_cast<uintptr_t>(y.grad_fn().get()));
  EXPECT_EQ(g.handles[0].shape, (std::vector<int64_t>{32, 256}));
  EXPECT_FALSE(g.handles[0].grad_of_leaf);
  EXPECT_EQ(g.handles[0].step, 1);
}

TEST(DoctorCensus, ParametersASlotSavesAreReportedApart) {
  nn::Linear lin(64, 256);
  doctor::Session dr;
  Tensor x = randn({32, 64}, requires_grad());  // now x's gradient needs the weight too
  Tensor y = lin->forward(x);
  const doctor::Census c = dr.live_graphs();
  ASSERT_EQ(c.components.size(), 1u);
  const doctor::GraphComponent& g = c.components[0];
  EXPECT_EQ(g.saved_bytes, 32 * 64 * 4);       // still only the input
  EXPECT_EQ(g.parameter_bytes, 256 * 64 * 4);  // the weight (saved as W.t(), a view of it)
  EXPECT_EQ(g.nodes_by_type,
            (TypeCounts{{"AccumulateGrad", 3}, {"AddBackward0", 1}, {"MmBackward0", 1}, {"TBackward0", 1}}));
  const doctor::NodeInfo* mm = find_node(g, "MmBackward0");
  ASSERT_NE(mm, nullptr);
  ASSERT_EQ(mm->saved.size(), 2u);
  EXPECT_EQ(mm->saved[1].what, "mat2");
  EXPECT_EQ(mm->saved[1].shape, (std::vector<int64_t>{64, 256}));
  EXPECT_EQ(mm->saved[1].bytes, 256 * 64 * 4);
  EXPECT_EQ(mm->saved[1].storage, reinterpret_cast<uintptr_t>(lin->weight.impl()->storage().get()));
  EXPECT_TRUE(mm->saved[1].parameter);
}

TEST(DoctorCensus, TwoViewsOfOneStorageSavedByTwoNodesCountOnce) {
  doctor::Session dr;
  Tensor a = randn({8, 8});  // 256 bytes, needs no gradient
  Tensor w = randn({4, 8}, requires_grad());
  Tensor top = a.narrow(0, 0, 4), bottom = a.narrow(0, 4, 4);  // two views of a's storage
  Tensor z = top * w + bottom * w;                             // each MulBackward0 saves its view for w's gradient
  const doctor::Census c = dr.live_graphs();
  ASSERT_EQ(c.components.size(), 1u);
  const doctor::GraphComponent& g = c.components[0];
  int slots_on_a = 0;
  std::set<uintptr_t> storages;
  for (const auto& n : g.nodes)
    for (const auto& s : n.saved) {
      storages.insert(s.storage);
      if (s.storage == reinterpret_cast<uintptr_t>(a.impl()->storage().get())) {
        ++slots_on_a;
        EXPECT_EQ(s.bytes, 8 * 8 * 4);  // a slot reports its whole storage
        EXPECT_EQ(s.shape, (std::vector<int64_t>{4, 8}));
      }
    }
  EXPECT_EQ(slots_on_a, 2);
  EXPECT_EQ(storages.size(), 1u);
  EXPECT_EQ(g.saved_bytes, 8 * 8 * 4);  // once, not 2 x 256 (and not 2 x 128)
  EXPECT_EQ(g.nodes_by_type, (TypeCounts{{"AccumulateGrad", 1}, {"AddBackward0", 1}, {"MulBackward0", 2}}));
}

TEST(DoctorCensus, BackwardReleasesSavedBytesAndTheNodesStayUntilTheHandleDies) {
  nn::Linear lin(64, 256);
  doctor::Session dr;
  Tensor x = randn({32, 64});
  Tensor y = lin->forward(x);
  ASSERT_EQ(dr.live_graphs().saved_bytes(), 32 * 64 * 4);
  EXPECT_EQ(memory_category(x), MemoryCategory::SavedForBackward);  // the slot's claim
  y.sum().backward();                                               // no retain_graph: every saved slot is released
  {
    const doctor::Census c = dr.live_graphs();
    ASSERT_EQ(c.components.size(), 1u);
    const doctor::GraphComponent& g = c.components[0];
    EXPECT_EQ(g.saved_bytes, 0);
    EXPECT_EQ(g.parameter_bytes, 0);
    EXPECT_EQ(c.nodes(), 5);  // SumBackward0 died with its temporary; y's graph is whole
    EXPECT_EQ(g.nodes_by_type,
              (TypeCounts{{"AccumulateGrad", 2}, {"AddBackward0", 1}, {"MmBackward0", 1}, {"TBackward0", 1}}));
    EXPECT_TRUE(g.executed);
    const doctor::NodeInfo* mm = find_node(g, "MmBackward0");
    ASSERT_NE(mm, nullptr);
    ASSERT_EQ(mm->saved.size(), 1u);
    EXPECT_TRUE(mm->saved[0].released);
    EXPECT_EQ(mm->saved[0].bytes, 0);
  }
  // x is still alive (the test holds it); the released slot no longer claims it
  EXPECT_EQ(memory_category(x), MemoryCategory::Other);
  y = Tensor();  // the root handle dies: the whole graph goes
  const doctor::Census after = dr.live_graphs();
  EXPECT_EQ(after.nodes(), 0);
  EXPECT_TRUE(after.components.empty());
}

TEST(DoctorCensus, RetainedGraphKeepsItsSavedBytesAfterBackward) {
  nn::Linear lin(64, 256);
  doctor::Session dr;
  Tensor x = randn({32, 64});
  Tensor y = lin->forward(x);
  y.sum().backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(dr.live_graphs().saved_bytes(), 32 * 64 * 4);
  EXPECT_EQ(dr.live_graphs().nodes(), 5);
}

TEST(DoctorCensus, TwoStepsSharingParametersStayTwoComponents) {
  nn::Linear lin(64, 256);
  doctor::Session dr;
  Tensor y1 = lin->forward(randn({32, 64}));
  dr.step();
  Tensor y2 = lin->forward(randn({16, 64}));
  const doctor::Census c = dr.live_graphs();
  EXPECT_EQ(c.step, 2);
  ASSERT_EQ(c.components.size(), 2u);  // not one graph of 8 nodes joined at the accumulators
  // the biggest first: step 2's graph, which the shared AccumulateGrad nodes attach to
  const doctor::GraphComponent& now = c.components[0];
  const doctor::GraphComponent& old = c.components[1];
  EXPECT_EQ(now.nodes_by_type,
            (TypeCounts{{"AccumulateGrad", 2}, {"AddBackward0", 1}, {"MmBackward0", 1}, {"TBackward0", 1}}));
  EXPECT_EQ(old.nodes_by_type, (TypeCounts{{"AddBackward0", 1}, {"MmBackward0", 1}, {"TBackward0", 1}}));
  EXPECT_EQ(now.oldest_step, 2);
  EXPECT_EQ(now.newest_step, 2);
  EXPECT_EQ(now.stale_steps, 0);
  EXPECT_EQ(old.oldest_step, 1);
  EXPECT_EQ(old.newest_step, 1);
  EXPECT_EQ(old.stale_steps, 1);
  EXPECT_FALSE(now.cross_step_edges);
  EXPECT_FALSE(old.cross_step_edges);
  EXPECT_EQ(now.saved_bytes, 16 * 64 * 4);
  EXPECT_EQ(old.saved_bytes, 32 * 64 * 4);
  ASSERT_EQ(now.handles.size(), 1u);
  ASSERT_EQ(old.handles.size(), 1u);
  EXPECT_EQ(now.handles[0].tensor, id_of(y2));
  EXPECT_EQ(old.handles[0].tensor, id_of(y1));
  // the accumulators are shared: step 1's nodes still point at them, and they count as step 2's
  std::set<uintptr_t> accumulators;
  for (const auto& n : now.nodes)
    if (n.name == "AccumulateGrad") {
      accumulators.insert(n.id);
      EXPECT_EQ(n.step, 2);
    }
  int edges_into_shared = 0;
  for (const auto& n : old.nodes)
    for (uintptr_t next : n.next) edges_into_shared += static_cast<int>(accumulators.count(next));
  EXPECT_EQ(edges_into_shared, 2);  // AddBackward0 -> bias, TBackward0 -> weight
  // once step 2's graph dies, the accumulators attach to step 1's graph
  y2 = Tensor();
  const doctor::Census later = dr.live_graphs();
  ASSERT_EQ(later.components.size(), 1u);
  EXPECT_EQ(later.components[0].nodes.size(), 5u);
  EXPECT_EQ(later.components[0].handles.size(), 1u);
}

TEST(DoctorCensus, TwoGraphsOfOneStepSharingParametersStayTwoComponents) {
  nn::Linear lin(64, 256);
  doctor::Session dr;
  Tensor y1 = lin->forward(randn({32, 64}));
  Tensor y2 = lin->forward(randn({16, 64}));
  const doctor::Census c = dr.live_graphs();
  ASSERT_EQ(c.components.size(), 2u);
  EXPECT_EQ(c.components[0].nodes.size(), 5u);  // one of them has the accumulators
  EXPECT_EQ(c.components[1].nodes.size(), 3u);
  EXPECT_EQ(c.nodes(), 8);
  EXPECT_EQ(c.saved_bytes(), (32 + 16) * 64 * 4);
}

TEST(DoctorCensus, NodesMadeBeforeTheSessionAreNotCensused) {
  nn::Linear lin(64, 256);
  Tensor before = lin->forward(randn({8, 64}));  // no session: nothing enters the ledger
  doctor::Session dr;
  EXPECT_EQ(dr.live_graphs().nodes(), 0);
  Tensor y = lin->forward(randn({32, 64}));
  const doctor::Census c = dr.live_graphs();
  ASSERT_EQ(c.components.size(), 1u);
  EXPECT_EQ(c.nodes(), 5);  // the accumulators made before the session are reached through edges
  EXPECT_EQ(c.saved_bytes(), 32 * 64 * 4);
}
