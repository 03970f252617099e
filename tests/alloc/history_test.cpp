// Memory history: the bounded ring, the op behind each event (op scopes and autograd nodes),
// C++ stacks on request, and dump_snapshot's JSON.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "alloc_test_util.h"

namespace graft::testing {
namespace {

using Action = alloc::TraceEntry::Action;

TEST(History, RecordsEventsWithTheirOp) {
  TestAllocator t;
  t.a->history().configure(true, 100, false);
  {
    alloc::MemoryOpScope scope("my_op");
    DataPtr p = t.get(1000);
  }
  DataPtr q = t.get(2000);  // outside any scope: no op
  const auto e = t.a->history().entries();
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].action, Action::SegmentAlloc);
  EXPECT_EQ(e[0].size, 2 * MiB);
  EXPECT_EQ(e[1].action, Action::Alloc);
  EXPECT_EQ(e[1].size, 1024u);
  EXPECT_EQ(e[1].requested_size, 1000u);
  ASSERT_TRUE(e[1].context);
  EXPECT_EQ(e[1].context->op, "my_op");
  EXPECT_EQ(e[2].action, Action::FreeRequested);
  EXPECT_EQ(e[3].action, Action::FreeCompleted);
  EXPECT_EQ(e[3].addr, e[1].addr);
  EXPECT_EQ(e[4].action, Action::Alloc);
  EXPECT_EQ(e[4].context->op, "");
  EXPECT_EQ(e[4].addr, e[1].addr);  // the cached block was reused
  EXPECT_GT(e[4].time_us, 0);
}

TEST(History, RingKeepsTheNewestEntries) {
  TestAllocator t;
  t.a->history().configure(true, 3, false);
  for (int i = 1; i <= 4; ++i) DataPtr p = t.get(static_cast<size_t>(i) * 512);  // 1 + 4 * 3 events
  auto e = t.a->history().entries();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].action, Action::Alloc);
  EXPECT_EQ(e[0].size, 2048u);  // the last allocation and its free
  EXPECT_EQ(e[1].action, Action::FreeRequested);
  EXPECT_EQ(e[2].action, Action::FreeCompleted);
  t.a->history().configure(false, 0, false);
  DataPtr p = t.get(100);
  EXPECT_TRUE(t.a->history().entries().empty());
}

TEST(History, OomAndSegmentFreeAreRecorded) {
  TestAllocator t;
  t.a->history().configure(true, 100, false);
  { DataPtr p = t.get(5 * MiB); }
  t.raw->fail_always();
  EXPECT_THROW(t.get(5 * MiB + 20 * MiB), OutOfMemoryError);
  auto e = t.a->history().entries();
  ASSERT_GE(e.size(), 6u);
  EXPECT_EQ(e[e.size() - 2].action, Action::SegmentFree);  // the retry released the cache first
  EXPECT_EQ(e.back().action, Action::Oom);
  EXPECT_EQ(e.back().size, 25 * MiB);
}

TEST(History, CppStacksOnRequest) {
  TestAllocator t;
  t.a->history().configure(true, 10, true);
  DataPtr p = t.get(100);
  auto e = t.a->history().entries();
  ASSERT_EQ(e.size(), 2u);
  ASSERT_TRUE(e[1].context);
  EXPECT_GT(e[1].context->frames.size(), 2u);
  EXPECT_EQ(e[1].context->symbolized_frames().size(), e[1].context->frames.size());
}

TEST(History, AutogradNodesAndOpsNameTheirMemory) {
  record_memory_history(true, 10000);
  {
    Tensor x = randn({1000}, requires_grad());
    Tensor y = x.exp().sum();
    y.backward();
  }
  std::set<std::string> alloc_ops;
  for (const auto& e : device_allocator().history().entries())
    if (e.action == Action::Alloc && e.context) alloc_ops.insert(e.context->op);
  record_memory_history(false);
  EXPECT_TRUE(alloc_ops.count("randn")) << "randn";
  EXPECT_TRUE(alloc_ops.count("exp")) << "exp";
  EXPECT_TRUE(alloc_ops.count("sum")) << "sum";
  EXPECT_TRUE(alloc_ops.count("mul")) << "mul inside ExpBackward0";
}

TEST(History, EngineNodeIsTheScopeOfBackwardAllocations) {
  TestAllocator t;
  t.a->history().configure(true, 10, false);
  {
    alloc::MemoryOpScope outer(static_cast<const void*>("ExpBackward0"),
                               [](const void* s) { return std::string(static_cast<const char*>(s)); });
    DataPtr p = t.get(10);
  }
  EXPECT_EQ(t.a->history().entries()[1].context->op, "ExpBackward0");
  EXPECT_EQ(alloc::MemoryOpScope::current(), "");
}

TEST(Snapshot, DumpWritesVersionedJson) {
  record_memory_history(true, 1000);
  Tensor w = ones({1000});
  set_memory_category(w, MemoryCategory::Parameter);
  Tensor h = w.exp();
  const std::string path = ::testing::TempDir() + "graft_snapshot_test.json";
  dump_snapshot(path);
  record_memory_history(false);
  std::ifstream f(path);
  ASSERT_TRUE(f.good());
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j.at("schema"), "graft.memory_snapshot");
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("device"), "cpu");
  EXPECT_EQ(j.at("stats").at("allocated_bytes.all.current").get<int64_t>(), memory_allocated());
  EXPECT_EQ(j.at("by_category").at("parameter").get<int64_t>(), allocator_backend() == "native" ? 4096 : 4000);
  bool found_w = false;
  for (const auto& seg : j.at("segments")) {
    EXPECT_TRUE(seg.at("segment_type") == "small" || seg.at("segment_type") == "large");
    int64_t sum = 0;
    for (const auto& b : seg.at("blocks")) {
      sum += b.at("size").get<int64_t>();
      if (b.at("address").get<uintptr_t>() == reinterpret_cast<uintptr_t>(w.data_ptr())) {
        found_w = true;
        EXPECT_EQ(b.at("state"), "active_allocated");
        EXPECT_EQ(b.at("category"), "parameter");
        EXPECT_EQ(b.at("context").at("op"), "ones");
      }
    }
    EXPECT_EQ(sum, seg.at("total_size").get<int64_t>());  // blocks tile their segment
  }
  EXPECT_TRUE(found_w);
  bool saw_exp = false;
  for (const auto& e : j.at("history").at("entries"))
    if (e.at("action") == "alloc" && e.at("context").at("op") == "exp") saw_exp = true;
  EXPECT_TRUE(saw_exp);
  std::remove(path.c_str());
}

TEST(Snapshot, UnwritablePathRaisesAndLeavesNothing) {
  EXPECT_THROW_HAS(dump_snapshot("/nonexistent-dir/x/snap.json"), RuntimeError, "/nonexistent-dir/x/snap.json");
}

}  // namespace
}  // namespace graft::testing
