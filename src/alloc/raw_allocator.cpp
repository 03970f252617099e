// Raw allocators: host memory (optionally page-locked) and the failing test allocator.
#include "graft/alloc/raw_allocator.h"

#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace graft::alloc {

// malloc + manual 64-byte alignment (much cheaper than aligned_alloc in glibc, which matters
// for backend:malloc where every tensor comes from here). The byte before the returned
// pointer holds the distance back to what malloc returned (1..64).
namespace {
// More than the machine's RAM cannot be had (and sanitizers abort on absurd sizes rather than
// returning null): refuse it up front.
size_t physical_ram() {
  static const size_t total = [] {
    struct sysinfo si {};
    return sysinfo(&si) == 0 ? static_cast<size_t>(si.totalram) * si.mem_unit : size_t{1} << 40;
  }();
  return total;
}
}  // namespace

void* MetaRawAllocator::allocate(size_t nbytes) {
  const uintptr_t span = (static_cast<uintptr_t>(nbytes) + 63) & ~uintptr_t{63};
  return reinterpret_cast<void*>(next_.fetch_add(span, std::memory_order_relaxed));
}
void MetaRawAllocator::free(void*, size_t) {}

void* HostRawAllocator::allocate(size_t nbytes) {
  if (nbytes > physical_ram()) return nullptr;
  void* raw = std::malloc(nbytes + 64);
  if (!raw) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (base + 64) & ~uintptr_t{63};
  reinterpret_cast<uint8_t*>(aligned)[-1] = static_cast<uint8_t>(aligned - base);
  void* p = reinterpret_cast<void*>(aligned);
  if (page_locked_ && mlock(p, nbytes) != 0) {
    std::free(raw);
    return nullptr;
  }
  return p;
}

void HostRawAllocator::free(void* ptr, size_t nbytes) {
  if (!ptr) return;
  if (page_locked_) munlock(ptr, nbytes);
  auto* p = static_cast<uint8_t*>(ptr);
  std::free(p - p[-1]);
}

std::optional<MemInfo> HostRawAllocator::mem_info() const {
  MemInfo info;
  struct sysinfo si {};
  if (sysinfo(&si) != 0) return std::nullopt;
  info.total = static_cast<size_t>(si.totalram) * si.mem_unit;
  info.free = static_cast<size_t>(si.freeram) * si.mem_unit;
  if (FILE* f = std::fopen("/proc/meminfo", "r")) {  // MemAvailable counts reclaimable cache
    char line[256];
    unsigned long long kb = 0;
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
        info.free = static_cast<size_t>(kb) * 1024;
        break;
      }
    std::fclose(f);
  }
  return info;
}

void* TestRawAllocator::allocate(size_t nbytes) {
  alloc_calls_.fetch_add(1);
  {
    std::lock_guard<std::mutex> g(mu_);
    bool fail = fail_always_;
    if (fail_countdown_ > 0 && --fail_countdown_ == 0) fail = true;
    if (cap_ && live_bytes_.load() + nbytes > *cap_) fail = true;
    if (fail) {
      failed_calls_.fetch_add(1);
      return nullptr;
    }
    live_bytes_.fetch_add(nbytes);
  }
  void* p = host_.allocate(nbytes);
  if (!p) {
    live_bytes_.fetch_sub(nbytes);
    failed_calls_.fetch_add(1);
  }
  return p;
}

void TestRawAllocator::free(void* ptr, size_t nbytes) {
  free_calls_.fetch_add(1);
  live_bytes_.fetch_sub(nbytes);
  host_.free(ptr, nbytes);
}

std::optional<MemInfo> TestRawAllocator::mem_info() const {
  std::lock_guard<std::mutex> g(mu_);
  if (!cap_) return host_.mem_info();
  const size_t live = live_bytes_.load();
  return MemInfo{*cap_ > live ? *cap_ - live : 0, *cap_};
}

void TestRawAllocator::fail_at_call(int64_t n) {
  std::lock_guard<std::mutex> g(mu_);
  fail_countdown_ = n;
}
void TestRawAllocator::fail_always() {
  std::lock_guard<std::mutex> g(mu_);
  fail_always_ = true;
}
void TestRawAllocator::set_cap(std::optional<size_t> cap) {
  std::lock_guard<std::mutex> g(mu_);
  cap_ = cap;
}
void TestRawAllocator::allow_all() {
  std::lock_guard<std::mutex> g(mu_);
  fail_always_ = false;
  fail_countdown_ = 0;
  cap_.reset();
}

}  // namespace graft::alloc
