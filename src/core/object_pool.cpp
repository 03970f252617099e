// Per-thread free lists for RefCounted objects: the slow paths and the drain at thread exit
// (include/graft/core/object_pool.h; Note [Object pool] in docs/notes/ownership.md).
#include "graft/core/object_pool.h"

#include <type_traits>

namespace graft::detail {

static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= kPooledObjectGranule);
static_assert(std::is_trivial_v<ObjectPoolThreadCache>);

// __thread rather than thread_local: plain data, so other translation units read it directly,
// without a call to a TLS wrapper function.
__thread ObjectPoolThreadCache t_object_pool;

#ifndef GRAFT_OBJECT_POOL_OFF

namespace {

// Enough for the tensors and nodes of a few ops in flight; bounds what an idle thread holds
// (at most 64 blocks of each class, about 1 MiB in all).
constexpr uint32_t kMaxCachedPerClass = 64;

enum : uint8_t { kNotStarted = 0, kCaching = 1, kDrained = 2 };

struct DrainAtExit {
  DrainAtExit() = default;
  DrainAtExit(const DrainAtExit&) = delete;
  DrainAtExit& operator=(const DrainAtExit&) = delete;
  ~DrainAtExit() {
    ObjectPoolThreadCache& tc = t_object_pool;
    tc.state = kDrained;  // frees from later thread_local destructors go to the heap
    for (size_t c = 0; c < kPooledObjectClasses; ++c) {
      tc.room[c] = 0;
      while (PooledFreeObject* o = tc.head[c]) {
        tc.head[c] = o->next;
        ::operator delete(o, pooled_class_bytes(c));
      }
    }
  }
};

}  // namespace

void pooled_deallocate_slow(void* p, size_t c) noexcept {
  ObjectPoolThreadCache& tc = t_object_pool;
  if (tc.state != kNotStarted) {  // the list is full, or the thread is exiting
    ::operator delete(p, pooled_class_bytes(c));
    return;
  }
  static thread_local DrainAtExit drain;  // constructed here: registers the drain at thread exit
  (void)drain;
  tc.state = kCaching;
  for (uint32_t& r : tc.room) r = kMaxCachedPerClass;
  pooled_deallocate(p, pooled_class_bytes(c));
}

#else

void pooled_deallocate_slow(void* p, size_t c) noexcept { ::operator delete(p, pooled_class_bytes(c)); }

#endif

}  // namespace graft::detail
