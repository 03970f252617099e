// Tensor hooks registered and removed while a backward pass runs on another thread (the Python
// package releases the GIL during backward, so this happens from plain Python threads). The
// hook lists are copy-on-write snapshots (HookSlot): no crash, no lost or doubled gradient,
// and hooks that stay registered run exactly once per pass. Run under ThreadSanitizer too.
#include <atomic>
#include <thread>

#include "support/test_util.h"

using namespace graft;
using namespace graft::testing;

TEST(HookRace, RegisterAndRemoveWhileBackwardRuns) {
  constexpr int kPasses = 2000;
  Tensor p = ones({8}, TensorOptions(kFloat64).requires_grad(true));
  Tensor q = p * 3;  // a non-leaf whose node every pass goes through (retain_graph)
  q.retain_grad();
  // Hooks that stay registered the whole time: each must run once per pass.
  std::atomic<int> leaf_calls{0}, node_calls{0}, churn_calls{0};
  HookHandle keep_leaf = p.register_hook([&](const Tensor&) {
    ++leaf_calls;
    return Tensor();
  });
  HookHandle keep_node = q.register_hook([&](const Tensor& g) {
    ++node_calls;
    return g.clone();  // replaces the gradient with an equal one
  });

  std::atomic<bool> done{false};
  std::atomic<int> churners_running{0};
  std::vector<double> bad_grad;  // first wrong .grad seen by the backward thread
  std::thread backward_thread([&] {
    while (churners_running.load() < 4) std::this_thread::yield();  // make sure they overlap
    for (int i = 1; i <= kPasses; ++i) {
      // d/dp [sum(2 q) + sum(5 p)] with q = 3 p: 6 + 5 per pass; d/dq: 2 per pass
      ((q * 2).sum() + (p * 5).sum()).backward(Tensor(), /*retain_graph=*/true);
      std::vector<double> g = p.grad().to_vector<double>();
      if (bad_grad.empty() && g != std::vector<double>(8, 11.0 * i)) bad_grad = g;
    }
    done = true;
  });
  // Churn threads: register a batch of hooks that keep the gradient (undefined or an equal
  // value) on the leaf and on the non-leaf, then remove them (some twice), until backward ends.
  auto churn = [&](bool on_leaf, bool return_clone) {
    const Tensor& target = on_leaf ? p : q;
    for (int round = 0; round < 100000 && !done; ++round) {
      std::vector<HookHandle> handles;
      for (int k = 0; k < 6; ++k)
        handles.push_back(target.register_hook([&, return_clone](const Tensor& g) {
          ++churn_calls;
          return return_clone ? g.clone() : Tensor();
        }));
      for (size_t k = 0; k < handles.size(); k += 2) handles[k].remove();  // out of order
      for (auto& h : handles) h.remove();
      handles[0].remove();  // idempotent
      if (round == 0) ++churners_running;
    }
  };
  std::vector<std::thread> churners;
  churners.emplace_back(churn, true, false);
  churners.emplace_back(churn, true, true);
  churners.emplace_back(churn, false, false);
  churners.emplace_back(churn, false, true);
  backward_thread.join();
  for (auto& t : churners) t.join();

  EXPECT_TRUE(bad_grad.empty()) << "wrong .grad during the run, first element " << bad_grad.front();
  EXPECT_EQ(leaf_calls.load(), kPasses);
  EXPECT_EQ(node_calls.load(), kPasses);
  for (double g : p.grad().to_vector<double>()) EXPECT_EQ(g, 11.0 * kPasses);
  for (double g : q.grad().to_vector<double>()) EXPECT_EQ(g, 2.0 * kPasses);

  // Every churned hook is gone: a further pass runs only the kept ones.
  const int churned = churn_calls.load();
  ((q * 2).sum()).backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(churn_calls.load(), churned);
  EXPECT_EQ(leaf_calls.load(), kPasses + 1);
  EXPECT_EQ(node_calls.load(), kPasses + 1);
  keep_leaf.remove();
  keep_node.remove();
}

// A handle keeps neither the tensor nor the graph alive; removing after they died is a no-op.
TEST(HookRace, HandleOutlivesTensorAndGraph) {
  HookHandle leaf_handle, node_handle;
  {
    Tensor p = ones({4}, requires_grad());
    Tensor q = p * 2;
    leaf_handle = p.register_hook([](const Tensor& g) { return g; });
    node_handle = q.register_hook([](const Tensor& g) { return g; });
  }
  leaf_handle.remove();
  node_handle.remove();
  leaf_handle.remove();
}

// Registering from several threads at once on the same tensor loses no hook and gives each
// a distinct registration index (the index is named in the size-mismatch message).
TEST(HookRace, ConcurrentRegistrationKeepsEveryHook) {
  constexpr int kThreads = 4, kPerThread = 500;
  Tensor p = ones({2}, TensorOptions(kFloat64).requires_grad(true));
  Tensor q = p * 1;
  std::atomic<int> calls{0}, ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();  // start together
      for (int i = 0; i < kPerThread; ++i) {
        const Tensor& target = (t % 2 == 0) ? p : q;
        target.register_hook([&](const Tensor&) {
          ++calls;
          return Tensor();
        });
      }
    });
  for (auto& th : pool) th.join();
  q.sum().backward();
  EXPECT_EQ(calls.load(), kThreads * kPerThread);
  expect_tensor(p.grad(), {2}, {1, 1});
  q.register_hook([](const Tensor&) { return ones({3}, TensorOptions(kFloat64)); });
  // q's node holds the hooks of two threads: indices 0 .. 2 * kPerThread - 1, then this one
  EXPECT_THROW_MSG(q.sum().backward(), RuntimeError,
                   "hook '" + std::to_string(2 * kPerThread) + "' has changed the size of value");
}
