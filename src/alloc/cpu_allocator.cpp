// The host allocator: 64-byte aligned memory with live-byte accounting. Issue 3 replaces
// the policy with the caching allocator behind the same Allocator interface.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "graft/core/allocator.h"
#include "graft/core/error.h"

namespace graft {
namespace {

std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_live_count{0};

// Kept just before the 64-byte aligned user block: the size (for accounting) and the pointer
// malloc returned. malloc + manual alignment is much cheaper than aligned_alloc in glibc.
struct Header {
  void* raw;
  size_t nbytes;
};

class HostAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    GRAFT_CHECK(nbytes <= (size_t{1} << 60), RuntimeError, "cpu allocator: cannot allocate ", nbytes, " bytes");
    void* raw = std::malloc(nbytes + 64 + sizeof(Header));
    GRAFT_CHECK(raw != nullptr, RuntimeError, "cpu allocator: out of memory trying to allocate ", nbytes, " bytes");
    auto addr = (reinterpret_cast<uintptr_t>(raw) + sizeof(Header) + 63) & ~uintptr_t{63};
    auto* h = reinterpret_cast<Header*>(addr) - 1;
    h->raw = raw;
    h->nbytes = nbytes;
    g_live_bytes.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
    g_live_count.fetch_add(1, std::memory_order_relaxed);
    return DataPtr(reinterpret_cast<void*>(addr), h, &HostAllocator::free, kCPU);
  }
  static void free(void* ctx) {
    auto* h = static_cast<Header*>(ctx);
    g_live_bytes.fetch_sub(static_cast<int64_t>(h->nbytes), std::memory_order_relaxed);
    g_live_count.fetch_sub(1, std::memory_order_relaxed);
    std::free(h->raw);
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
