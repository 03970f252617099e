// Allocation from several threads, with blocks freed on other threads than the ones that
// allocated them; the statistics balance and every segment can be given back afterwards.
#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "alloc_test_util.h"

namespace graft::testing {
namespace {

TEST(Threads, CrossThreadFreeStress) {
  TestAllocator t;
  constexpr int kThreads = 4, kIters = 4000;
  std::mutex mu;
  std::vector<DataPtr> handoff;  // allocated by one thread, freed by another
  std::atomic<int64_t> allocations{0};
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id)
    threads.emplace_back([&, id] {
      std::mt19937 rng(static_cast<unsigned>(id));
      std::uniform_int_distribution<size_t> small(1, 64 * 1024), pick(0, 9);
      for (int i = 0; i < kIters; ++i) {
        const size_t n = pick(rng) == 0 ? 2 * MiB + small(rng) : small(rng);
        DataPtr p = t.get(n);
        static_cast<char*>(p.get())[0] = static_cast<char>(id);
        static_cast<char*>(p.get())[n - 1] = static_cast<char>(id);
        allocations.fetch_add(1);
        DataPtr to_free;
        {
          std::lock_guard<std::mutex> g(mu);
          handoff.push_back(std::move(p));
          if (handoff.size() > 16) {  // take a random one out (most were made by other threads)
            std::swap(handoff[rng() % handoff.size()], handoff.back());
            to_free = std::move(handoff.back());
            handoff.pop_back();
          }
        }
      }  // to_free goes here, usually on another thread than its allocator
    });
  for (auto& th : threads) th.join();
  handoff.clear();
  const auto s = t.stats();
  EXPECT_EQ(s.at("allocation.all.allocated"), allocations.load());
  EXPECT_EQ(s.at("allocation.all.freed"), allocations.load());
  EXPECT_EQ(s.at("allocated_bytes.all.current"), 0);
  EXPECT_EQ(s.at("active_bytes.all.current"), 0);
  EXPECT_EQ(s.at("requested_bytes.all.current"), 0);
  EXPECT_EQ(s.at("inactive_split.all.current"), 0);  // every segment merged back whole
  t.a->empty_cache();
  EXPECT_EQ(t.reserved(), 0);
  EXPECT_EQ(t.raw->live_bytes(), 0u);
}

TEST(Threads, QueriesAndHistoryWhileAllocating) {
  TestAllocator t;
  t.a->history().configure(true, 256, false);
  std::vector<std::thread> workers;
  for (int id = 0; id < 3; ++id)
    workers.emplace_back([&, id] {
      alloc::MemoryOpScope scope("worker");
      for (int i = 0; i < 2000; ++i) {
        DataPtr p = t.get(static_cast<size_t>(512 * (1 + (i + id) % 7)));
        alloc::CachingAllocator::set_category(p, MemoryCategory::DataBatch);
        alloc::CachingAllocator::add_saved_claim(p, +1);
        alloc::CachingAllocator::add_saved_claim(p, -1);
      }
    });
  for (int reads = 0; reads < 200; ++reads) {  // concurrent readers of the allocator's state
    const auto cats = t.a->bytes_by_category();
    int64_t sum = 0;
    for (int64_t v : cats) sum += v;
    EXPECT_EQ(sum % 512, 0);  // whole blocks only
    EXPECT_LE(t.a->history().entries().size(), 256u);
    for (const auto& seg : t.a->snapshot()) {
      size_t tiled = 0;
      for (const auto& b : seg.blocks) tiled += b.size;
      EXPECT_EQ(tiled, seg.total_size);  // a consistent picture, never a half-updated one
    }
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(t.allocated(), 0);
  EXPECT_EQ(t.stat("allocation.all.allocated"), 6000);
  for (const auto& e : t.a->history().entries())
    if (e.action == alloc::TraceEntry::Action::Alloc) {
      EXPECT_EQ(e.context->op, "worker");
    }
}

TEST(Threads, TensorsMadeOnOneThreadDieOnAnother) {
  const int64_t base = memory_allocated();
  std::vector<Tensor> made(64);
  std::thread producer([&] {
    for (auto& x : made) x = randn({257});
  });
  producer.join();
  EXPECT_GT(memory_allocated(), base);
  std::thread consumer([&] { made.clear(); });
  consumer.join();
  EXPECT_EQ(memory_allocated(), base);
}

}  // namespace
}  // namespace graft::testing
