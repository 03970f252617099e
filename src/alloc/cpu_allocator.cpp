// The host allocator: 64-byte aligned memory with live-byte accounting. Issue 3 replaces
// the policy with the caching allocator behind the same Allocator interface.
#include <atomic>
#include <cstdlib>
#include <new>

#include "graft/core/allocator.h"
#include "graft/core/error.h"

namespace graft {
namespace {

std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_live_count{0};

struct Header {  // kept in front of the user block so free knows the size
  size_t nbytes;
  char pad[56];
};
static_assert(sizeof(Header) == 64);

class HostAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    void* raw = std::aligned_alloc(64, sizeof(Header) + ((nbytes + 63) / 64) * 64);
    GRAFT_CHECK(raw != nullptr, RuntimeError, "cpu allocator: out of memory trying to allocate ", nbytes, " bytes");
    auto* h = static_cast<Header*>(raw);
    h->nbytes = nbytes;
    g_live_bytes.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
    g_live_count.fetch_add(1, std::memory_order_relaxed);
    return DataPtr(h + 1, h, &HostAllocator::free, kCPU);
  }
  static void free(void* ctx) {
    auto* h = static_cast<Header*>(ctx);
    g_live_bytes.fetch_sub(static_cast<int64_t>(h->nbytes), std::memory_order_relaxed);
    g_live_count.fetch_sub(1, std::memory_order_relaxed);
    std::free(h);
  }
};

}  // namespace

Allocator* cpu_allocator() {
  static HostAllocator a;
  return &a;
}
int64_t memory_allocated(Device device) {
  check_device_available(device, "memory_allocated");
  return g_live_bytes.load(std::memory_order_relaxed);
}
int64_t memory_allocation_count(Device device) {
  check_device_available(device, "memory_allocation_count");
  return g_live_count.load(std::memory_order_relaxed);
}

}  // namespace graft
