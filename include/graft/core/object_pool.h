#pragma once
/// Per-thread free lists for the small objects every op makes and drops (TensorImpl,
/// StorageImpl, autograd nodes: every RefCounted). glibc keeps at most 7 freed chunks of a size
/// per thread, fewer than one eager op's worth, so most of those frees took its slow path.
/// See Note [Object pool] in docs/notes/ownership.md.
#include <cstddef>
#include <cstdint>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define GRAFT_OBJECT_POOL_OFF 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GRAFT_OBJECT_POOL_OFF 1
#endif
#endif

namespace graft::detail {

/// Objects up to this size are pooled; larger ones go straight to ::operator new.
inline constexpr size_t kPooledObjectMaxSize = 512;
/// Pooled sizes are rounded up to a multiple of this (::operator new's alignment).
inline constexpr size_t kPooledObjectGranule = 16;
inline constexpr size_t kPooledObjectClasses = kPooledObjectMaxSize / kPooledObjectGranule;

struct PooledFreeObject {
  PooledFreeObject* next;
};

/// One thread's lists. Plain data (zero-initialized, no TLS guard, readable while the thread's
/// thread_local destructors run). `room[c]` is how many more blocks list c may take; 0 until
/// the thread first frees (the slow path then registers the drain at thread exit) and again
/// once the lists have been drained.
struct ObjectPoolThreadCache {
  PooledFreeObject* head[kPooledObjectClasses];
  uint32_t room[kPooledObjectClasses];
  uint8_t state;  // 0: not started, 1: caching, 2: drained (the thread is exiting)
};
extern __thread ObjectPoolThreadCache t_object_pool;

inline size_t pooled_class(size_t size) { return (size - 1) / kPooledObjectGranule; }  // size > 0
inline size_t pooled_class_bytes(size_t c) { return (c + 1) * kPooledObjectGranule; }

/// Slow path of pooled_deallocate: starts caching on this thread, or frees `p`.
void pooled_deallocate_slow(void* p, size_t c) noexcept;

/// Memory for one object of `size` bytes (aligned as ::operator new(size) is): a freed block of
/// the same size class from this thread's list, else ::operator new. Throws bad_alloc.
inline void* pooled_allocate(size_t size) {
#ifdef GRAFT_OBJECT_POOL_OFF
  return ::operator new(size);
#else
  if (size > kPooledObjectMaxSize) return ::operator new(size);
  const size_t c = pooled_class(size);
  ObjectPoolThreadCache& tc = t_object_pool;
  if (PooledFreeObject* o = tc.head[c]) {
    tc.head[c] = o->next;
    ++tc.room[c];
    return o;
  }
  return ::operator new(pooled_class_bytes(c));  // the whole class: any object of it fits later
#endif
}

/// Gives back a block from pooled_allocate(size), on any thread: it joins this thread's list
/// (up to a cap per size class) or goes to ::operator delete. A thread's lists are returned to
/// the heap when it exits. Under AddressSanitizer both functions are plain new/delete, so that
/// ASan still sees every use after free.
inline void pooled_deallocate(void* p, size_t size) noexcept {
#ifdef GRAFT_OBJECT_POOL_OFF
  ::operator delete(p, size);
#else
  if (size > kPooledObjectMaxSize) {
    ::operator delete(p, size);
    return;
  }
  const size_t c = pooled_class(size);
  ObjectPoolThreadCache& tc = t_object_pool;
  if (__builtin_expect(tc.room[c] == 0, 0)) {
    pooled_deallocate_slow(p, c);
    return;
  }
  --tc.room[c];
  auto* o = static_cast<PooledFreeObject*>(p);
  o->next = tc.head[c];
  tc.head[c] = o;
#endif
}

}  // namespace graft::detail
