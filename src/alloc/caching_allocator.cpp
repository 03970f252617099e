// The caching allocator's policy, step for step as PyTorch's native CUDA caching allocator
// (c10/cuda/CUDACachingAllocator.cpp, reference section 11): malloc = round, pick the pool,
// best fit, else GC / new segment / release oversize and retry / release all and retry /
// OOM; then split the block if the split rules allow. free = merge with free neighbours and
// return to the pool. Statistics are updated at the same points as PyTorch's. No streams on
// the host, so a free completes at once. See docs/memory.md.
#include "graft/alloc/caching_allocator.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

#include "block_pool.h"
#include "graft/core/error.h"
#include "graft/core/lifetime.h"

namespace graft::alloc {

// The per-call steps of allocate/free are forced inline into them: at ~50 ns a pair, the call
// overhead between a dozen small steps is a measurable share (bench/alloc_bench.cpp).
#define GRAFT_HOT_INLINE [[gnu::always_inline]] inline

namespace {

int stat_type(const BlockPool& p) { return p.is_small ? kSmallPool : kLargePool; }
void inc(StatArray& a, int t, int64_t n) {
  a[kAggregate].increase(n);
  a[t].increase(n);
}
void dec(StatArray& a, int t, int64_t n) {
  a[kAggregate].decrease(n);
  a[t].decrease(n);
}
int64_t i64(size_t n) { return static_cast<int64_t>(n); }

// Larger requests are refused before any size arithmetic (no rounding can overflow); no
// machine has 4 EiB.
constexpr size_t kMaxRequest = size_t{1} << 62;

// Handed out for 0-byte requests: never read or written, not counted (PyTorch returns no
// block for size 0). Non-null so that offset arithmetic on empty tensors stays defined.
alignas(64) char g_empty_allocation[64];

size_t get_allocation_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

size_t roundup_power2_next_division(size_t size, size_t divisions) {
  if ((size & (size - 1)) == 0) return size;
  const size_t power2_floor = size_t{1} << (63 - __builtin_clzll(size));
  const size_t power2_division = power2_floor >> (63 - __builtin_clzll(divisions));
  if (power2_division == 0) return power2_floor << 1;
  const size_t floor = size & ~(power2_division - 1);
  return floor == size ? size : floor + power2_division;
}

std::string device_kind(Device d) { return d.is_cuda() ? "CUDA" : d.is_meta() ? "Meta" : "CPU"; }

std::atomic<OomObserver> g_oom_observer{nullptr};

// `b` follows `before` (null: `b` heads its segment).
GRAFT_HOT_INLINE void link_after(Block* before, Block* b) {
  b->prev = before;
  if (before)
    before->next = b;
  else
    b->segment->head = b;
}

}  // namespace

CachingAllocator::CachingAllocator(Device device, std::unique_ptr<RawAllocator> raw, AllocatorConfig config)
    : device_(device),
      raw_(std::move(raw)),
      config_(config),
      lock_(std::make_unique<SpinLock>()),
      small_(std::make_unique<BlockPool>(true)),
      large_(std::make_unique<BlockPool>(false)) {
  GRAFT_CHECK(raw_ != nullptr, ValueError, "CachingAllocator: a raw allocator is required");
  on_config_changed();
}

CachingAllocator::CachingAllocator(CachingAllocator& d, OrphanTag)
    : device_(d.device_),
      raw_(std::move(d.raw_)),
      config_(d.config_),
      roundup_enabled_(d.roundup_enabled_),
      lock_(std::move(d.lock_)),
      small_(std::move(d.small_)),
      large_(std::move(d.large_)),
      segments_(std::exchange(d.segments_, nullptr)),
      spare_blocks_(std::exchange(d.spare_blocks_, nullptr)),
      num_spare_blocks_(std::exchange(d.num_spare_blocks_, 0)),
      spare_segments_(std::exchange(d.spare_segments_, nullptr)),
      stats_(d.stats_),
      reserved_total_(d.reserved_total_),
      limit_(d.limit_),
      has_allocated_(d.has_allocated_),
      orphaned_(true) {
  for (Segment* s = segments_; s; s = s->next) s->owner = this;
}

CachingAllocator::~CachingAllocator() {
  if (!lock_) return;  // the state went to an heir
  {
    std::lock_guard<SpinLock> g(*lock_);  // the lock object outlives this scope either way
    release_cached_blocks();
    if (stats_.allocation[kAggregate].current > 0) {
      // Tensors still hold blocks: their frees must find a live allocator. An heir takes the
      // state and deletes itself when the last block comes back (see free()).
      new CachingAllocator(*this, OrphanTag{});
      return;
    }
  }
  while (spare_blocks_) delete std::exchange(spare_blocks_, spare_blocks_->next);
  while (spare_segments_) delete std::exchange(spare_segments_, spare_segments_->next);
}

// ---------------------------------------------------------------- allocate / free

DataPtr CachingAllocator::allocate(size_t nbytes) {
  // A meta tensor's data pointer is null, as in PyTorch; its block keeps the fake address.
  const bool meta = device_.is_meta();
  if (nbytes == 0) return DataPtr(meta ? nullptr : g_empty_allocation, nullptr, nullptr, device_);
  Block* b = malloc_block(nbytes, MemoryCategoryGuard::current());
  return DataPtr(meta ? nullptr : b->ptr, b, &CachingAllocator::free_ctx, device_);
}

void CachingAllocator::free_ctx(void* ctx) {
  auto* b = static_cast<Block*>(ctx);
  b->segment->owner->free(b);
}

Block* CachingAllocator::malloc_block(size_t orig_size, MemoryCategory cat) {
  auto ctx = gather_context();  // null unless history is recording
  std::unique_lock<SpinLock> lock(*lock_);
  if (orig_size > kMaxRequest) raise_oom(orig_size, orig_size, lock, ctx);
  reserve_headers();  // may throw bad_alloc: before any state changes
  has_allocated_ = true;
  if (ctx) event_ctx_ = ctx;
  const bool caching = config_.backend == Backend::Native;
  const size_t size = caching ? round_size(orig_size) : orig_size;
  BlockPool& pool = size <= kSmallSize ? *small_ : *large_;
  const size_t alloc_size = caching ? get_allocation_size(size) : size;

  Block* b = nullptr;
  bool found = caching && get_free_block(pool, size, b);
  if (!found) {
    if (limit_ && config_.garbage_collection_threshold > 0.0) garbage_collect_cached_blocks();
    found = alloc_segment(pool, alloc_size, false, b) ||
            (release_available_cached_blocks(pool, size) && alloc_segment(pool, alloc_size, false, b));
    if (!found) {
      release_cached_blocks();
      found = alloc_segment(pool, alloc_size, true, b);
    }
  }
  if (!found) raise_oom(size, alloc_size, lock, ctx);
  if (ctx) event_ctx_.reset();
  return alloc_found_block(pool, b, size, orig_size, cat, std::move(ctx));
}

void CachingAllocator::on_config_changed() {
  stats_.max_split_size =
      config_.max_split_size == std::numeric_limits<size_t>::max() ? -1 : i64(config_.max_split_size);
  roundup_enabled_ = false;
  for (size_t d : config_.roundup_power2_divisions) roundup_enabled_ |= d > 1;
}

void CachingAllocator::reserve_headers() {
  while (num_spare_blocks_ < 2) {
    auto* b = new Block;
    b->next = spare_blocks_;
    spare_blocks_ = b;
    ++num_spare_blocks_;
  }
  if (!spare_segments_) spare_segments_ = new Segment;
}

GRAFT_HOT_INLINE void CachingAllocator::free(Block* b) {
  auto ctx = gather_context();
  std::unique_lock<SpinLock> lock(*lock_);
  if (ctx) event_ctx_ = ctx;
  b->allocated = false;
  const int t = stat_type(*b->segment->pool);
  dec(stats_.allocation, t, 1);
  dec(stats_.allocated_bytes, t, i64(b->size));
  record(TraceEntry::Action::FreeRequested, reinterpret_cast<uintptr_t>(b->ptr), b->size, b->requested_size,
         b->effective_category(), ctx);
  if (b->size >= config_.max_split_size) stats_.oversize_allocations.decrease(1);
  free_block_locked(b, ctx);
  if (ctx) event_ctx_.reset();
  if (orphaned_ && stats_.allocation[kAggregate].current == 0) {  // the last block of a dead owner
    release_cached_blocks();
    lock.unlock();
    delete this;
  }
}

GRAFT_HOT_INLINE void CachingAllocator::free_block_locked(Block* b, const std::shared_ptr<const AllocContext>& ctx) {
  record(TraceEntry::Action::FreeCompleted, reinterpret_cast<uintptr_t>(b->ptr), b->size, b->requested_size,
         b->effective_category(), ctx);
  if (b->context) b->context.reset();
  BlockPool& pool = *b->segment->pool;
  const int t = stat_type(pool);
  const size_t requested = b->requested_size;
  if (config_.backend != Backend::Native) {  // no caching (never split): give it back now
    dec(stats_.requested_bytes, t, i64(requested));
    release_segment(b);
    return;
  }
  int64_t net_blocks = 0, net_bytes = 0;
  for (Block* candidate : {b->prev, b->next}) {
    const size_t subsumed = try_merge_blocks(b, candidate, pool);
    if (subsumed > 0) {
      net_blocks -= 1;
      net_bytes -= i64(subsumed);
    }
  }
  pool.insert(b);
  if (b->is_split()) {
    net_blocks += 1;
    net_bytes += i64(b->size);
  }
  if (net_blocks > 0) inc(stats_.inactive_split, t, net_blocks);
  if (net_blocks < 0) dec(stats_.inactive_split, t, -net_blocks);
  if (net_bytes > 0) inc(stats_.inactive_split_bytes, t, net_bytes);
  if (net_bytes < 0) dec(stats_.inactive_split_bytes, t, -net_bytes);
  dec(stats_.requested_bytes, t, i64(requested));
}

// ---------------------------------------------------------------- policy steps

GRAFT_HOT_INLINE size_t CachingAllocator::round_size(size_t size) const {
  if (size < kMinBlockSize) return kMinBlockSize;
  if (__builtin_expect(roundup_enabled_, 0)) {
    const size_t divisions = config_.divisions_for(size);
    if (divisions > 1 && size > kMinBlockSize * divisions) return roundup_power2_next_division(size, divisions);
  }
  return kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}

GRAFT_HOT_INLINE bool CachingAllocator::get_free_block(BlockPool& pool, size_t size, Block*& out) {
  if (limit_ && config_.garbage_collection_threshold > 0.0) ++pool.get_free_blocks_call_count;
  Block* b = pool.lower_bound(size);
  if (!b) return false;
  // an oversize block never serves a small request, and serves a large one only when the
  // waste stays below max_non_split_rounding
  if (size < config_.max_split_size && b->size >= config_.max_split_size) return false;
  if (size >= config_.max_split_size && b->size >= size + config_.max_non_split_rounding) return false;
  pool.erase(b);
  out = b;
  return true;
}

bool CachingAllocator::alloc_segment(BlockPool& pool, size_t alloc_size, bool is_retry, Block*& out) {
  if (is_retry) stats_.num_alloc_retries += 1;
  if (limit_ && (reserved_total_ > *limit_ || alloc_size > *limit_ - reserved_total_)) return false;
  void* p = raw_->allocate(alloc_size);
  if (!p) return false;
  stats_.num_device_alloc += 1;
  reserved_total_ += alloc_size;
  Segment* s = std::exchange(spare_segments_, nullptr);  // reserve_headers() left one
  *s = Segment{};
  s->base = static_cast<char*>(p);
  s->size = alloc_size;
  s->pool = &pool;
  s->owner = this;
  s->next = segments_;
  if (segments_) segments_->prev = s;
  segments_ = s;
  Block* b = new_block();  // a free whole-segment block
  b->ptr = s->base;
  b->size = alloc_size;
  b->requested_size = 0;
  b->prev = b->next = nullptr;
  b->allocated = false;
  b->segment = s;
  s->head = b;
  const int t = stat_type(pool);
  inc(stats_.segment, t, 1);
  inc(stats_.reserved_bytes, t, i64(alloc_size));
  if (alloc_size >= config_.max_split_size) stats_.oversize_segments.increase(1);
  record(TraceEntry::Action::SegmentAlloc, reinterpret_cast<uintptr_t>(p), alloc_size, 0, MemoryCategory::Other,
         event_ctx_);
  out = b;
  return true;
}

GRAFT_HOT_INLINE bool CachingAllocator::should_split(const Block* b, size_t size) const {
  if (config_.backend != Backend::Native) return false;
  const size_t remaining = b->size - size;
  if (b->segment->pool->is_small) return remaining >= kMinBlockSize;
  return size < config_.max_split_size && remaining > kSmallSize;
}

GRAFT_HOT_INLINE Block* CachingAllocator::alloc_found_block(BlockPool& pool, Block* b, size_t size, size_t orig_size,
                                                            MemoryCategory cat,
                                                            std::shared_ptr<const AllocContext> ctx) {
  const int t = stat_type(pool);
  const bool already_split = b->is_split();
  if (should_split(b, size)) {
    Block* remaining = b;
    b = new_block();  // every field is set here or below
    b->ptr = remaining->ptr;
    b->size = size;
    b->segment = remaining->segment;
    link_after(remaining->prev, b);
    b->next = remaining;
    remaining->prev = b;
    remaining->ptr += size;
    remaining->size -= size;
    pool.insert(remaining);
    if (already_split) {
      dec(stats_.inactive_split_bytes, t, i64(b->size));  // an inactive split block shrank
    } else {
      inc(stats_.inactive_split_bytes, t, i64(remaining->size));  // a new inactive split block
      inc(stats_.inactive_split, t, 1);
    }
  } else if (already_split) {  // a whole inactive split block becomes active
    dec(stats_.inactive_split_bytes, t, i64(b->size));
    dec(stats_.inactive_split, t, 1);
  }
  b->allocated = true;
  b->requested_size = orig_size;
  b->category.store(static_cast<uint8_t>(cat), std::memory_order_relaxed);
  b->saved_claims.store(0, std::memory_order_relaxed);
  inc(stats_.allocation, t, 1);
  inc(stats_.allocated_bytes, t, i64(b->size));
  inc(stats_.requested_bytes, t, i64(orig_size));
  if (b->size >= config_.max_split_size) stats_.oversize_allocations.increase(1);
  if (ctx) {
    record(TraceEntry::Action::Alloc, reinterpret_cast<uintptr_t>(b->ptr), b->size, orig_size, cat, ctx);
    b->context = std::move(ctx);
  }
  return b;
}

GRAFT_HOT_INLINE size_t CachingAllocator::try_merge_blocks(Block* dst, Block* src, BlockPool& pool) {
  if (!src || src->allocated) return 0;
  if (dst->prev == src) {  // [src dst]
    dst->ptr = src->ptr;
    link_after(src->prev, dst);
  } else {  // [dst src]
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  const size_t subsumed = src->size;
  pool.erase(src);  // src's size is still its key
  dst->size += subsumed;
  delete_block(src);
  return subsumed;
}

void CachingAllocator::release_segment(Block* b) {
  // b is a whole segment and is not in a pool
  Segment* s = b->segment;
  BlockPool& pool = *s->pool;
  const int t = stat_type(pool);
  stats_.num_device_free += 1;
  record(TraceEntry::Action::SegmentFree, reinterpret_cast<uintptr_t>(b->ptr), b->size, 0, MemoryCategory::Other,
         event_ctx_);
  raw_->free(b->ptr, b->size);
  reserved_total_ -= b->size;
  dec(stats_.segment, t, 1);
  dec(stats_.reserved_bytes, t, i64(b->size));
  if (b->size >= config_.max_split_size) stats_.oversize_segments.decrease(1);
  if (s->prev)
    s->prev->next = s->next;
  else
    segments_ = s->next;
  if (s->next) s->next->prev = s->prev;
  if (!spare_segments_) {
    s->next = nullptr;
    spare_segments_ = s;
  } else {
    delete s;
  }
  delete_block(b);
}

void CachingAllocator::release_pool(BlockPool& pool) {
  for (Block* b : pool.blocks())
    if (!b->is_split()) {
      pool.erase(b);
      release_segment(b);
    }
}

void CachingAllocator::release_cached_blocks() {
  stats_.num_sync_all_streams += 1;  // PyTorch synchronizes every stream first; no streams here
  release_pool(*large_);
  release_pool(*small_);
}

bool CachingAllocator::release_available_cached_blocks(BlockPool& pool, size_t size) {
  if (config_.max_split_size == std::numeric_limits<size_t>::max() || pool.is_small) return false;
  const size_t key = std::max(size, config_.max_split_size);
  auto& tree = pool.tree();
  auto it = tree.lower_bound(key);
  if (it != tree.end()) {
    Block* b = *it;
    if (b->is_split()) return false;
    pool.erase(b);
    release_segment(b);
    return true;
  }
  // no single block is large enough: free oversize blocks, largest first
  if (it == tree.begin()) return false;
  size_t released = 0;
  --it;
  while (released < key && (*it)->size >= config_.max_split_size) {
    auto cur = it;
    const bool is_first = cur == tree.begin();
    if (!is_first) --it;
    Block* b = *cur;
    if (!b->is_split()) {
      released += b->size;
      pool.erase(b);
      release_segment(b);
    }
    if (is_first) break;
  }
  return released >= key;
}

void CachingAllocator::garbage_collect_cached_blocks() {
  const auto threshold = static_cast<size_t>(config_.garbage_collection_threshold * static_cast<double>(*limit_));
  if (reserved_total_ <= threshold) return;
  const size_t target = reserved_total_ - threshold;
  BlockPool& pool = *large_;
  auto age = [&](const Block* b) { return pool.get_free_blocks_call_count - b->gc_count_base; };
  size_t total_age = 0, freeable = 0;
  for (Block* b : pool.blocks())
    if (!b->is_split()) {
      total_age += age(b);
      ++freeable;
    }
  if (freeable == 0) return;
  size_t reclaimed = 0;
  bool freed_one = true;
  while (reclaimed < target && freed_one && freeable > 0) {
    // free the blocks at least as old as the average age; repeat until enough is reclaimed
    const double age_threshold = static_cast<double>(total_age) / static_cast<double>(freeable);
    freed_one = false;
    for (Block* b : pool.blocks()) {
      if (b->is_split() || static_cast<double>(age(b)) < age_threshold) continue;
      freed_one = true;
      reclaimed += b->size;
      total_age -= age(b);
      --freeable;
      pool.erase(b);
      release_segment(b);
    }
  }
}

void CachingAllocator::raise_oom(size_t size, size_t alloc_size, std::unique_lock<SpinLock>& lock,
                                 const std::shared_ptr<const AllocContext>& ctx) {
  stats_.num_ooms += 1;
  event_ctx_.reset();
  const int64_t allocated = stats_.allocated_bytes[kAggregate].current;
  const int64_t reserved = stats_.reserved_bytes[kAggregate].current;
  const std::optional<size_t> limit = limit_;
  lock.unlock();
  const std::optional<MemInfo> info = raw_->mem_info();  // reads /proc: not under the lock
  record(TraceEntry::Action::Oom, info ? info->free : 0, size, size, MemoryCategory::Other, ctx);
  std::string observed;
  if (OomObserver o = g_oom_observer.load(std::memory_order_acquire))
    observed = o(OomInfo{device_, this, size, alloc_size, allocated, reserved, limit, info});
  // At this point every releasable cached segment has gone back to the raw allocator: what
  // is reserved but unallocated is fragmentation (free pieces of split segments).
  const std::string kind = device_kind(device_);
  throw OutOfMemoryError(detail::str(
      kind, " out of memory. Tried to allocate ", format_size(alloc_size), ". ", kind, " ",
      device_.index() < 0 ? 0 : static_cast<int>(device_.index()), " has a total capacity of ",
      info ? format_size(info->total) : std::string("unknown size"), " of which ",
      info ? format_size(info->free) : std::string("an unknown amount"), " is free. ",
      limit ? format_size(*limit) + " allowed; " : std::string(), "Of the allocated memory ",
      format_size(static_cast<size_t>(allocated)), " is allocated by graft, and ",
      format_size(static_cast<size_t>(reserved - allocated)),
      " is reserved by graft but unallocated. If reserved but unallocated memory is large try setting "
      "GRAFT_ALLOC_CONF=max_split_size_mb:<MB> to avoid fragmentation.  See documentation for Memory Management "
      " (docs/memory.md)",
      observed));
}

void CachingAllocator::record_event(TraceEntry::Action a, uintptr_t addr, size_t size, size_t requested,
                                    MemoryCategory cat, const std::shared_ptr<const AllocContext>& ctx) noexcept {
  try {
    history_.record(TraceEntry{a, addr, size, requested, cat, 0, ctx});
  } catch (...) {  // out of memory for the ring: the event is dropped, the allocator is fine
  }
}

std::shared_ptr<const AllocContext> CachingAllocator::gather_slow() const noexcept {
  try {
    return history_.gather();
  } catch (...) {
    return nullptr;
  }
}

GRAFT_HOT_INLINE Block* CachingAllocator::new_block() {
  Block* b = spare_blocks_;  // reserve_headers() made sure there is one
  spare_blocks_ = b->next;
  --num_spare_blocks_;
  b->next = nullptr;
  return b;
}

GRAFT_HOT_INLINE void CachingAllocator::delete_block(Block* b) {
  // recycled: new_block()'s callers set every field they use
  if (b->context) b->context.reset();
  b->next = spare_blocks_;
  spare_blocks_ = b;
  ++num_spare_blocks_;
}

// ---------------------------------------------------------------- queries and settings

void CachingAllocator::update_config(const std::string& conf) {
  std::lock_guard<SpinLock> g(*lock_);
  AllocatorConfig c = config_;
  c.update(conf);
  GRAFT_CHECK(c.backend == config_.backend || !has_allocated_, RuntimeError,
              "allocator settings: the backend cannot be changed after memory has been allocated (set it in "
              "GRAFT_ALLOC_CONF before the first allocation)");
  config_ = c;
  on_config_changed();
}

DeviceStats CachingAllocator::stats() const {
  std::lock_guard<SpinLock> g(*lock_);
  DeviceStats s = stats_;
  s.active = s.allocation;  // no streams: a block is active exactly while it is allocated
  s.active_bytes = s.allocated_bytes;
  return s;
}
void CachingAllocator::reset_peak_stats() {
  std::lock_guard<SpinLock> g(*lock_);
  stats_.reset_peak();
}
void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard<SpinLock> g(*lock_);
  stats_.reset_accumulated();
}
void CachingAllocator::empty_cache() {
  auto ctx = gather_context();
  std::lock_guard<SpinLock> g(*lock_);
  event_ctx_ = std::move(ctx);
  release_cached_blocks();
  event_ctx_.reset();
}

AllocatorConfig CachingAllocator::config() const {
  std::lock_guard<SpinLock> g(*lock_);
  return config_;
}

// The largest request that allocate() would grant now: the best free block of either pool
// (within the max_split_size rules), or a new segment within the room that the cap and the
// raw allocator leave once every whole cached segment is released (allocate() releases them
// before it gives up).
size_t CachingAllocator::largest_allocation() const {
  const std::optional<MemInfo> info = raw_->mem_info();  // reads /proc: not under the lock
  std::lock_guard<SpinLock> g(*lock_);
  if (config_.backend != Backend::Native) {
    size_t room = info ? info->free : 0;
    if (limit_) room = *limit_ > reserved_total_ ? std::min(room, *limit_ - reserved_total_) : 0;
    return room;
  }
  size_t best = 0;
  size_t releasable = 0;  // whole free segments (released before a new segment is refused)
  for (const Segment* s = segments_; s; s = s->next) {
    const bool whole_free = !s->head->allocated && !s->head->next;
    if (whole_free) releasable += s->size;
    for (const Block* b = s->head; b; b = b->next) {
      if (b->allocated) continue;
      // a request of exactly b->size (blocks are 512-byte multiples, so it rounds to itself)
      size_t x = b->size;
      if (s->pool->is_small)
        x = std::min(x, kSmallSize);  // larger requests go to the large pool
      else if (x <= kSmallSize)
        continue;  // small requests never use it
      if (x < config_.max_split_size && b->size >= config_.max_split_size) continue;
      best = std::max(best, x);
    }
  }
  // a new segment: room under the cap and in the raw allocator
  size_t room = std::numeric_limits<size_t>::max();
  if (limit_) room = *limit_ + releasable > reserved_total_ ? *limit_ + releasable - reserved_total_ : 0;
  if (info) room = std::min(room, info->free + releasable);
  if (room != std::numeric_limits<size_t>::max()) {
    if (room >= kMinLargeAlloc) best = std::max(best, room / kRoundLarge * kRoundLarge);
    if (room >= kLargeBuffer) best = std::max(best, kMinLargeAlloc - kMinBlockSize);
    if (room >= kSmallBuffer) best = std::max(best, kSmallSize);
  }
  return best;
}

std::vector<SegmentInfo> CachingAllocator::snapshot() const {
  std::lock_guard<SpinLock> g(*lock_);
  std::vector<SegmentInfo> out;
  for (const Segment* s = segments_; s; s = s->next) {
    SegmentInfo si;
    si.address = reinterpret_cast<uintptr_t>(s->base);
    si.total_size = s->size;
    si.segment_type = s->pool->is_small ? "small" : "large";
    for (const Block* b = s->head; b; b = b->next) {
      BlockInfo bi;
      bi.address = reinterpret_cast<uintptr_t>(b->ptr);
      bi.size = b->size;
      if (b->allocated) {
        bi.requested_size = b->requested_size;
        bi.state = "active_allocated";
        bi.category = b->effective_category();
        bi.context = b->context;
        si.allocated_size += b->size;
        si.active_size += b->size;
        si.requested_size += b->requested_size;
      }
      si.blocks.push_back(std::move(bi));
    }
    out.push_back(std::move(si));
  }
  std::sort(out.begin(), out.end(), [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
  return out;
}

std::array<int64_t, kNumMemoryCategories> CachingAllocator::bytes_by_category() const {
  std::lock_guard<SpinLock> g(*lock_);
  std::array<int64_t, kNumMemoryCategories> out{};
  for (const Segment* s = segments_; s; s = s->next)
    for (const Block* b = s->head; b; b = b->next)
      if (b->allocated) out[static_cast<size_t>(b->effective_category())] += i64(b->size);
  return out;
}

void CachingAllocator::set_memory_fraction(double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    char buf[32];  // Python's repr of a float: shortest round-trip digits, "2.0" not "2"
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf - 3, fraction);
    std::string s(buf, end);
    if (ec == std::errc() && s.find_first_of(".ena") == std::string::npos) s += ".0";
    throw ValueError("Invalid fraction value: " + s + ". Allowed range: 0~1");
  }
  const std::optional<MemInfo> info = raw_->mem_info();
  GRAFT_CHECK(info.has_value(), RuntimeError, "set_per_process_memory_fraction: the ", raw_->name(), " allocator of ",
              device_.str(), " cannot report its total memory; use a byte limit instead");
  set_memory_limit(static_cast<size_t>(fraction * static_cast<double>(info->total)));
}

void CachingAllocator::set_memory_limit(std::optional<size_t> bytes) {
  std::lock_guard<SpinLock> g(*lock_);
  limit_ = bytes;
}

std::optional<size_t> CachingAllocator::memory_limit() const {
  std::lock_guard<SpinLock> g(*lock_);
  return limit_;
}

MemInfo CachingAllocator::mem_get_info() const {
  const std::optional<MemInfo> info = raw_->mem_info();
  GRAFT_CHECK(info.has_value(), RuntimeError, "mem_get_info: the ", raw_->name(), " allocator of ", device_.str(),
              " cannot report free and total memory");
  return *info;
}

// ---------------------------------------------------------------- tensor owners

bool CachingAllocator::owns(const DataPtr& p) { return p.deleter() == &CachingAllocator::free_ctx; }

namespace {
/// Tells the lifetime observer (the leak doctor) that a block's reported category changed.
void note_recategorized(const Block* b, MemoryCategory before) {
  if (!lifetime::counting()) return;
  const MemoryCategory after = b->effective_category();
  if (after == before) return;
  if (lifetime::Observer* o = lifetime::observer())
    o->storage_recategorized(b, static_cast<int>(before), static_cast<int>(after), static_cast<int64_t>(b->size),
                             b->site, b->generation);
}
}  // namespace

void set_oom_observer(OomObserver o) noexcept { g_oom_observer.store(o, std::memory_order_release); }

void CachingAllocator::set_category(const DataPtr& p, MemoryCategory c) {
  if (!owns(p)) return;
  auto* b = static_cast<Block*>(p.context());
  const MemoryCategory before = b->effective_category();
  b->category.store(static_cast<uint8_t>(c), std::memory_order_relaxed);
  note_recategorized(b, before);
}

void CachingAllocator::set_lifetime(const DataPtr& p, uint32_t site, uint32_t generation) {
  if (!owns(p)) return;
  auto* b = static_cast<Block*>(p.context());
  b->site = site;
  b->generation = generation;
}

size_t CachingAllocator::block_size(const DataPtr& p) {
  return owns(p) ? static_cast<const Block*>(p.context())->size : 0;
}

std::pair<size_t, MemoryCategory> CachingAllocator::size_and_category(const DataPtr& p) {
  if (!owns(p)) return {0, MemoryCategory::Other};
  const auto* b = static_cast<const Block*>(p.context());
  return {b->size, b->effective_category()};
}

MemoryCategory CachingAllocator::category(const DataPtr& p) {
  return owns(p) ? static_cast<const Block*>(p.context())->effective_category() : MemoryCategory::Other;
}

void CachingAllocator::add_saved_claim(const DataPtr& p, int delta) {
  if (!owns(p)) return;
  auto* b = static_cast<Block*>(p.context());
  const MemoryCategory before = lifetime::counting() ? b->effective_category() : MemoryCategory::Other;
  if (delta > 0)
    b->saved_claims.fetch_add(static_cast<uint32_t>(delta), std::memory_order_relaxed);
  else
    b->saved_claims.fetch_sub(static_cast<uint32_t>(-delta), std::memory_order_relaxed);
  note_recategorized(b, before);
}

}  // namespace graft::alloc
