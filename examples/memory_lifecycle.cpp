// Allocated vs reserved vs non-releasable, step by step on the CPU caching allocator
// (docs/memory.md shows this program's output). Each line prints memory_allocated(),
// memory_reserved() and the non-releasable bytes (inactive_split_bytes.all.current).
#include <cstdio>

#include <graft/graft.h>

using namespace graft;

static void show(const char* what) {
  auto s = memory_stats();
  std::printf("%-52s allocated %9lld  reserved %9lld  non-releasable %9lld\n", what,
              static_cast<long long>(memory_allocated()), static_cast<long long>(memory_reserved()),
              static_cast<long long>(s.at("inactive_split_bytes.all.current")));
}

int main() {
  show("start");
  Tensor a = ones({1000});  // 4000 bytes -> one 4096-byte block of a new 2 MiB segment
  show("a = ones(1000)            (4000 B)");
  Tensor b = ones({1000});
  show("b = ones(1000)            (4000 B)");
  a = Tensor();  // a's block goes back to the cache: a hole in a split segment
  show("del a");
  empty_cache();  // the 2 MiB segment still holds b: nothing to give back
  show("empty_cache()");
  {
    Tensor x = randn({1000}, requires_grad());
    Tensor loss = x.exp().sum();  // the graph saves exp's result
    show("x, loss = x.exp().sum()   (graph alive)");
    auto cats = memory_by_category();
    std::printf("%-52s saved_for_backward %lld\n", "  by category", static_cast<long long>(cats["saved_for_backward"]));
    loss.backward();
    show("loss.backward()           (saved result freed)");
    cats = memory_by_category();
    std::printf("%-52s gradient %lld  saved_for_backward %lld\n", "  by category",
                static_cast<long long>(cats["gradient"]), static_cast<long long>(cats["saved_for_backward"]));
  }
  show("x, loss dropped");
  Tensor big = zeros({3 << 18});  // 3 MiB: large pool, a 20 MiB segment
  show("big = zeros(3 MiB)");
  big = Tensor();
  show("del big                   (cached, not returned)");
  b = Tensor();
  show("del b");
  empty_cache();
  show("empty_cache()");
  std::printf("peak allocated %lld, peak reserved %lld\n", static_cast<long long>(max_memory_allocated()),
              static_cast<long long>(max_memory_reserved()));
  return 0;
}
