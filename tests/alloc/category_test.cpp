// Who owns the bytes: the category byte in each block header, set by the owning code
// (guard at allocation, tagging later), saved_for_backward while a graph holds a tensor,
// gradient for .grad buffers; memory_by_category sums to memory_allocated.
#include "alloc_test_util.h"

namespace graft::testing {
namespace {

int64_t sum_of(const std::map<std::string, int64_t>& m) {
  int64_t s = 0;
  for (const auto& [k, v] : m) s += v;
  return s;
}

TEST(Categories, GuardTagsNewAllocationsAndNests) {
  const auto before = memory_by_category();
  Tensor other = ones({1000});
  Tensor state, batch;
  {
    MemoryCategoryGuard g(MemoryCategory::OptimizerState);
    state = zeros({1000});
    {
      MemoryCategoryGuard inner(MemoryCategory::DataBatch);
      batch = ones({1000});
    }
    EXPECT_EQ(MemoryCategoryGuard::current(), MemoryCategory::OptimizerState);
  }
  EXPECT_EQ(MemoryCategoryGuard::current(), MemoryCategory::Other);
  EXPECT_EQ(memory_category(state), MemoryCategory::OptimizerState);
  EXPECT_EQ(memory_category(batch), MemoryCategory::DataBatch);
  EXPECT_EQ(memory_category(other), MemoryCategory::Other);
  const auto now = memory_by_category();
  const int64_t blk = allocator_backend() == "native" ? 4096 : 4000;
  EXPECT_EQ(now.at("optimizer_state") - before.at("optimizer_state"), blk);
  EXPECT_EQ(now.at("data_batch") - before.at("data_batch"), blk);
  EXPECT_EQ(now.at("other") - before.at("other"), blk);
  EXPECT_EQ(sum_of(now), memory_allocated());
  EXPECT_EQ(now.size(), 6u);
}

TEST(Categories, TrainingStepParameterGradientSaved) {
  Tensor w = randn({1000}, requires_grad());
  set_memory_category(w, MemoryCategory::Parameter);
  Tensor view = w.detach().view({10, 100});  // tagging is per storage: views report the same
  EXPECT_EQ(memory_category(view), MemoryCategory::Parameter);
  Tensor h = (w * 3.0).exp();  // exp saves its result: saved_for_backward while the graph lives
  Tensor loss = h.sum();
  EXPECT_EQ(memory_category(h), MemoryCategory::SavedForBackward);
  auto during = memory_by_category();
  const int64_t blk = allocator_backend() == "native" ? 4096 : 4000;
  EXPECT_EQ(during.at("parameter"), blk);
  EXPECT_GE(during.at("saved_for_backward"), blk);
  EXPECT_EQ(during.at("gradient"), 0);
  EXPECT_EQ(sum_of(during), memory_allocated());
  loss.backward();                                       // saved tensors released; w.grad created
  EXPECT_EQ(memory_category(h), MemoryCategory::Other);  // nothing saves it any more
  EXPECT_EQ(memory_category(w.grad()), MemoryCategory::Gradient);
  auto after = memory_by_category();
  EXPECT_EQ(after.at("saved_for_backward"), 0);
  EXPECT_EQ(after.at("gradient"), blk);
  EXPECT_EQ(after.at("parameter"), blk);
  EXPECT_EQ(sum_of(after), memory_allocated());
}

TEST(Categories, SavedClaimsCountEveryHolder) {
  Tensor x = randn({1000}, requires_grad());
  Tensor y = x.exp();
  Tensor a = y.sin();  // sin saves y
  Tensor b = y.cos();  // cos saves y as well
  EXPECT_EQ(memory_category(y), MemoryCategory::SavedForBackward);
  a.sum().backward();  // releases sin's graph (and exp's saved result); cos still holds y
  EXPECT_EQ(memory_category(y), MemoryCategory::SavedForBackward);
  b = Tensor();  // cos's graph goes: the last claim on y
  EXPECT_EQ(memory_category(y), MemoryCategory::Other);
}

TEST(Categories, RetainedGraphKeepsItsClaims) {
  Tensor x = randn({1000}, requires_grad());
  Tensor loss = x.exp().sum();
  const auto before = memory_by_category();
  EXPECT_GT(before.at("saved_for_backward"), 0);
  loss.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(memory_by_category().at("saved_for_backward"), before.at("saved_for_backward"));
  loss = Tensor();
  EXPECT_EQ(memory_by_category().at("saved_for_backward"), 0);
}

TEST(Categories, SnapshotCarriesThem) {
  Tensor w = ones({100});
  set_memory_category(w, MemoryCategory::Parameter);
  bool found = false;
  for (const auto& seg : memory_snapshot())
    for (const auto& b : seg.blocks)
      if (b.address == reinterpret_cast<uintptr_t>(w.data_ptr())) {
        found = true;
        EXPECT_EQ(b.category, MemoryCategory::Parameter);
        EXPECT_STREQ(b.state, "active_allocated");
      }
  EXPECT_TRUE(found);
}

TEST(Categories, ForeignMemoryIsLeftAlone) {
  std::vector<float> buf(10);
  Tensor t = from_blob(buf.data(), {10}, [](void*) {});
  set_memory_category(t, MemoryCategory::Parameter);  // not ours: no effect, no crash
  EXPECT_EQ(memory_category(t), MemoryCategory::Other);
  EXPECT_THROW(set_memory_category(Tensor(), MemoryCategory::Parameter), ValueError);
}

}  // namespace
}  // namespace graft::testing
