// The per-thread free lists behind every RefCounted object (graft/core/object_pool.h, Note
// [Object pool] in docs/notes/ownership.md): a freed block is reused on its thread, and
// objects made on one thread may die on another, including after their thread has exited.
#include <cmath>
#include <thread>
#include <vector>

#include "graft/core/object_pool.h"
#include "support/test_util.h"

namespace graft {
namespace {

TEST(ObjectPool, AFreedBlockIsReusedOnItsThread) {
  void* a = detail::pooled_allocate(100);
  detail::pooled_deallocate(a, 100);
  void* b = detail::pooled_allocate(100);
#ifndef GRAFT_OBJECT_POOL_OFF
  EXPECT_EQ(a, b);  // the same size class (97..112 bytes) takes the block back
#endif
  void* big = detail::pooled_allocate(detail::kPooledObjectMaxSize + 1);  // not pooled
  detail::pooled_deallocate(big, detail::kPooledObjectMaxSize + 1);
  detail::pooled_deallocate(b, 100);
}

// Graphs made on four threads that have exited by the time a fifth runs their backward and
// drops them: their tensors, storages and nodes are freed into threads that did not make them.
TEST(ObjectPool, ObjectsOutliveTheThreadThatMadeThem) {
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::vector<Tensor>> made(kThreads);
  std::vector<std::thread> makers;
  for (int t = 0; t < kThreads; ++t)
    makers.emplace_back([&made, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Tensor x = full({8}, 0.1 * (i + 1), requires_grad());
        made[t].push_back(x);
        made[t].push_back((x * 2.0 + 1.0).tanh().sum());
      }
    });
  for (auto& m : makers) m.join();  // the makers' own free lists are drained at their exit

  std::thread consumer([&made] {
    for (auto& list : made)
      for (size_t i = 0; i < list.size(); i += 2) {
        list[i + 1].backward();
        const double v = 0.1 * static_cast<double>(i / 2 + 1), th = std::tanh(2 * v + 1);
        testing::expect_tensor(list[i].grad(), {8}, std::vector<double>(8, 2 * (1 - th * th)), 1e-5);
      }
    made.clear();  // every object dies here, on a thread that made none of them
  });
  consumer.join();
}

}  // namespace
}  // namespace graft
