// The structures on the recorder's path (what each object made or destroyed, and each storage
// event, costs while the doctor watches): the tensor list kept in the tensors' own slots
// (src/doctor/recorded_tensors.h), the timeline's ring (event_ring.h) and the recorder's lock
// (light_mutex.h).
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "../../src/doctor/event_ring.h"
#include "../../src/doctor/light_mutex.h"
#include "../../src/doctor/recorded_tensors.h"
#include "support/test_util.h"

using graft::doctor::detail::EventRing;
using graft::doctor::detail::LightMutex;
using graft::doctor::detail::ObjectEntry;
using graft::doctor::detail::RecordedTensors;

namespace {

ObjectEntry entry(uint64_t seq, uint32_t generation, uint32_t site) {
  ObjectEntry e;
  e.seq = seq;
  e.generation = generation;
  e.site = site;
  return e;
}

/// The list's walk as (tensor, seq) pairs.
std::vector<std::pair<const graft::TensorImpl*, uint64_t>> walk(const RecordedTensors& list) {
  std::vector<std::pair<const graft::TensorImpl*, uint64_t>> out;
  list.locked([&](const RecordedTensors::View& tensors) {
    for (const auto& [t, e] : tensors) out.push_back({t, e.seq});
  });
  return out;
}

}  // namespace

TEST(RecordedTensors, RecordsInTheTensorsAndWalksNewestFirst) {
  std::atomic<int64_t> total{0};
  RecordedTensors list(total);
  graft::Tensor a = graft::zeros({2}), b = graft::zeros({3}), c = graft::zeros({4}), other = graft::zeros({1});
  list.insert(a.impl(), entry(1, 5, 10));
  list.insert(b.impl(), entry(2, 6, 11));
  list.insert(c.impl(), entry(3, 7, 12));
  EXPECT_EQ(total.load(), 3);
  EXPECT_EQ(list.size(), 3u);
  using Walk = std::vector<std::pair<const graft::TensorImpl*, uint64_t>>;
  EXPECT_EQ(walk(list), (Walk{{c.impl(), 3}, {b.impl(), 2}, {a.impl(), 1}}));
  EXPECT_EQ(list.value(b.impl()).generation, 6u);
  EXPECT_EQ(list.value(b.impl()).site, 11u);
  EXPECT_EQ(list.value(other.impl()).seq, 0u);  // not recorded: a default entry

  // taking the middle, the newest and the oldest relinks the rest
  ObjectEntry out;
  ASSERT_TRUE(list.take(b.impl(), &out));
  EXPECT_EQ(out.seq, 2u);
  EXPECT_EQ(out.generation, 6u);
  EXPECT_FALSE(list.take(b.impl(), &out));  // once
  EXPECT_FALSE(list.take(other.impl(), &out));
  EXPECT_EQ(walk(list), (Walk{{c.impl(), 3}, {a.impl(), 1}}));
  ASSERT_TRUE(list.take(c.impl(), &out));
  EXPECT_EQ(walk(list), (Walk{{a.impl(), 1}}));
  list.insert(b.impl(), entry(4, 8, 13));
  ASSERT_TRUE(list.take(a.impl(), &out));
  EXPECT_EQ(walk(list), (Walk{{b.impl(), 4}}));
  EXPECT_EQ(total.load(), 1);

  list.clear();
  EXPECT_EQ(total.load(), 0);
  EXPECT_TRUE(walk(list).empty());
  EXPECT_FALSE(list.take(b.impl(), &out));  // the slot was cleared with the list
}

TEST(RecordedTensors, ThreadsRecordAndForgetTheirTensorsConcurrently) {
  std::atomic<int64_t> total{0};
  RecordedTensors list(total);
  std::vector<std::thread> threads;
  std::atomic<uint64_t> seq{0};
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        graft::Tensor t = graft::zeros({1});
        list.insert(t.impl(), entry(++seq, 1, 0));
        (void)walk(list).size();
        ObjectEntry out;
        EXPECT_TRUE(list.take(t.impl(), &out));
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(total.load(), 0);
  EXPECT_EQ(list.size(), 0u);
}

TEST(EventRing, KeepsTheLastEventsInOrderAcrossChunks) {
  EventRing<int> ring(2500);  // more than two chunks of 1,024
  for (int i = 1; i <= 2000; ++i) ring.push(i);
  ASSERT_EQ(ring.size(), 2000u);
  EXPECT_EQ(ring.dropped(), 0u);
  for (size_t i = 0; i < ring.size(); ++i) ASSERT_EQ(ring[i], static_cast<int>(i) + 1);
  for (int i = 2001; i <= 6100; ++i) ring.push(i);  // wraps more than once
  ASSERT_EQ(ring.size(), 2500u);
  EXPECT_EQ(ring.dropped(), 3600u);
  for (size_t i = 0; i < ring.size(); ++i) ASSERT_EQ(ring[i], 3601 + static_cast<int>(i)) << i;
}

TEST(EventRing, CapacityZeroKeepsNoneAndCountsThem) {
  EventRing<int> none(0);
  none.push(1);
  none.push(2);
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.dropped(), 2u);
  EventRing<int> small(3);
  for (int i = 1; i <= 5; ++i) small.push(i);
  EXPECT_EQ(small.size(), 3u);
  EXPECT_EQ(small.dropped(), 2u);
  EXPECT_EQ(small[0], 3);
  EXPECT_EQ(small[1], 4);
  EXPECT_EQ(small[2], 5);
}

TEST(LightMutex, ExcludesAndWakesItsWaiters) {
  LightMutex mu;
  ASSERT_TRUE(mu.try_lock());
  EXPECT_FALSE(mu.try_lock());
  mu.unlock();
  int64_t counter = 0;  // not atomic: the lock alone keeps the increments apart
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&] {
      for (int i = 0; i < 50000; ++i) {
        std::lock_guard<LightMutex> g(mu);
        ++counter;
        if (i % 5000 == 0) std::this_thread::yield();  // hold it a while: the others sleep on it
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, 200000);
  EXPECT_TRUE(mu.try_lock());  // free again (no waiter left it marked as held)
  mu.unlock();
}
