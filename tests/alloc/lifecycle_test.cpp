// The memory lifecycle seen from autograd on the process-wide CPU allocator: what keeps
// memory_allocated() up (a held intermediate, a retained graph), when it drops, and that
// memory_reserved() drops only after empty_cache(). Also an OOM under a cap, after which
// the process keeps working. These run under backend:malloc too (CTest alloc_backend_malloc),
// where reserved follows allocated.
#include "alloc_test_util.h"

namespace graft::testing {
namespace {

bool caching() { return allocator_backend() == "native"; }

// 1000 floats: 4000 bytes, one 4096-byte block in the small pool (4000 under backend:malloc)
int64_t block_of_1000_floats() { return caching() ? 4096 : 4000; }

TEST(Lifecycle, HeldIntermediateKeepsMemoryUntilTheLastHandleGoes) {
  const int64_t base = memory_allocated();
  Tensor x = randn({1000}, requires_grad());
  const int64_t with_x = memory_allocated();
  EXPECT_EQ(with_x - base, block_of_1000_floats());
  Tensor y = x.exp();  // an intermediate: exp saves its result for backward
  Tensor loss = y.sum();
  EXPECT_EQ(memory_allocated() - with_x, block_of_1000_floats() + (caching() ? 512 : 4));
  loss.backward();  // frees the graph's saved tensors, but the user still holds y
  Tensor g = x.grad();
  const int64_t after_backward = memory_allocated();
  EXPECT_EQ(after_backward - with_x, 2 * block_of_1000_floats() + (caching() ? 512 : 4));  // y, loss, x.grad
  y = Tensor();  // the last handle on the intermediate
  EXPECT_EQ(memory_allocated(), after_backward - block_of_1000_floats());
}

TEST(Lifecycle, RetainedGraphKeepsSavedTensorsAlive) {
  const int64_t base = memory_allocated();
  Tensor x = randn({1000}, requires_grad());
  Tensor loss = x.exp().sum();  // nobody but the graph holds exp's result
  const int64_t with_graph = memory_allocated();
  EXPECT_EQ(with_graph - base, 2 * block_of_1000_floats() + (caching() ? 512 : 4));
  for (int i = 0; i < 3; ++i) loss.backward(Tensor(), /*retain_graph=*/true);
  x.mutable_grad() = Tensor();
  EXPECT_EQ(memory_allocated(), with_graph);  // the retained graph still holds exp's result
  loss.backward();                            // the last backward frees the saved tensors
  x.mutable_grad() = Tensor();
  EXPECT_EQ(memory_allocated(), with_graph - block_of_1000_floats());
  loss = Tensor();  // dropping the output drops the graph
  EXPECT_EQ(memory_allocated(), base + block_of_1000_floats());
}

TEST(Lifecycle, TotalLossAccumulationHoldsEveryGraph) {
  // the classic leak: summing losses that require grad keeps each step's graph alive
  const int64_t base = memory_allocated();
  Tensor w = randn({1000}, requires_grad());
  Tensor total_leaky = zeros({});
  Tensor total_ok = zeros({});
  std::vector<int64_t> leaky, ok;
  for (int step = 0; step < 4; ++step) {
    Tensor loss = (w * 2.0).exp().sum();
    total_leaky = total_leaky + loss;     // keeps the graph
    total_ok = total_ok + loss.detach();  // does not
    loss = Tensor();
    leaky.push_back(memory_allocated());
  }
  EXPECT_GT(leaky[3] - leaky[0], 3 * block_of_1000_floats());  // grows by at least exp's result per step
  total_leaky = Tensor();
  const int64_t after = memory_allocated();
  EXPECT_LE(after - base, block_of_1000_floats() + 2048);  // w and the two scalars
}

TEST(Lifecycle, ReservedDropsOnlyAfterEmptyCache) {
  empty_cache();
  EXPECT_EQ(memory_allocated(), 0);
  EXPECT_EQ(memory_reserved(), 0);  // nothing live, nothing cached
  {
    Tensor big = zeros({3 * 1024 * 1024 / 4});  // 3 MiB: a 20 MiB large segment
    EXPECT_EQ(memory_allocated(), caching() ? int64_t{3} << 20 : int64_t{3} << 20);
    EXPECT_EQ(memory_reserved(), caching() ? int64_t{20} << 20 : int64_t{3} << 20);
  }
  EXPECT_EQ(memory_allocated(), 0);
  EXPECT_EQ(memory_reserved(), caching() ? int64_t{20} << 20 : 0);  // cached until empty_cache
  empty_cache();
  EXPECT_EQ(memory_reserved(), 0);
  EXPECT_GE(max_memory_reserved(), int64_t{3} << 20);
}

TEST(Lifecycle, OomUnderACapThenTheProcessKeepsWorking) {
  empty_cache();
  const int64_t ooms = memory_stats().at("num_ooms");
  set_per_process_memory_limit(int64_t{24} << 20);
  Tensor a = full({3 * 1024 * 1024 / 4}, 1.5);  // 3 MiB (a 20 MiB segment when caching)
  Tensor b;
  try {
    b = zeros({24 * 1024 * 1024 / 4});  // 24 MiB: over the cap either way
    ADD_FAILURE() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("24.00 MiB allowed; "), std::string::npos) << e.what();
  }
  EXPECT_FALSE(b.defined());
  EXPECT_EQ(memory_stats().at("num_ooms"), ooms + 1);
  EXPECT_FLOAT_EQ(a.sum().item<float>(), 1.5f * 3 * 1024 * 1024 / 4);  // nothing lost
  set_per_process_memory_limit(std::nullopt);
  b = zeros({24 * 1024 * 1024 / 4});
  EXPECT_EQ(b.numel(), 24 * 1024 * 1024 / 4);
  EXPECT_THROW_MSG(set_per_process_memory_fraction(2.0), ValueError, "Invalid fraction value: 2.0. Allowed range: 0~1");
  EXPECT_THROW_HAS(set_per_process_memory_limit(-1), ValueError, "must be >= 0");
  a = Tensor();
  b = Tensor();
  empty_cache();
}

TEST(Lifecycle, MemGetInfoReportsTheMachine) {
  auto [free_b, total_b] = mem_get_info();
  EXPECT_GT(total_b, 0);
  EXPECT_GT(free_b, 0);
  EXPECT_LE(free_b, total_b);
}

// The backend in force is the one GRAFT_ALLOC_CONF names (CTest runs this with and without it).
TEST(BackendFromEnv, MatchesTheEnvironment) {
  const char* env = std::getenv("GRAFT_ALLOC_CONF");
  const bool want_malloc = env && std::string(env).find("backend:malloc") != std::string::npos;
  EXPECT_EQ(allocator_backend(), want_malloc ? "malloc" : "native");
  empty_cache();
  {
    Tensor t = ones({10});
    if (want_malloc) {
      EXPECT_EQ(memory_allocated(), 40);  // exact bytes, each tensor its own raw allocation
      EXPECT_EQ(memory_reserved(), 40);
    } else {
      EXPECT_EQ(memory_allocated(), 512);
      EXPECT_EQ(memory_reserved(), int64_t{2} << 20);
    }
  }
  EXPECT_EQ(memory_reserved(), want_malloc ? 0 : int64_t{2} << 20);
  empty_cache();
  EXPECT_EQ(memory_reserved(), 0);
}

}  // namespace
}  // namespace graft::testing
