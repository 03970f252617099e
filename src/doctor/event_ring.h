#pragma once
// EventRing: the timeline's bounded ring of events. See docs/notes/doctor.md ("The object ledger").
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace graft::doctor::detail {

/// The last `capacity` events added, oldest first, kept in chunks of 1,024: adding one never moves
/// the others (a growing vector would copy every event it holds at each doubling, at a storage
/// event's cost), and memory grows with what is kept, up to the capacity. A full ring overwrites
/// its oldest event; capacity 0 keeps none.
template <class Event>
class EventRing {
 public:
  explicit EventRing(size_t capacity = 0) : capacity_(capacity) {}
  void push(const Event& e) {
    if (size_ < capacity_) {
      if ((size_ & kChunkMask) == 0) chunks_.push_back(std::make_unique_for_overwrite<Event[]>(kChunk));
      slot(size_++) = e;
      return;
    }
    ++dropped_;
    if (capacity_ == 0) return;
    slot(oldest_) = e;
    oldest_ = oldest_ + 1 == capacity_ ? 0 : oldest_ + 1;
  }
  size_t size() const { return size_; }
  /// The `i`th oldest event kept.
  const Event& operator[](size_t i) const {
    const size_t at = oldest_ + i;
    return const_cast<EventRing*>(this)->slot(at < size_ ? at : at - size_);
  }
  uint64_t dropped() const { return dropped_; }  ///< events overwritten (or not kept: capacity 0)

 private:
  static constexpr size_t kChunkBits = 10, kChunk = size_t{1} << kChunkBits, kChunkMask = kChunk - 1;
  Event& slot(size_t i) { return chunks_[i >> kChunkBits][i & kChunkMask]; }
  size_t capacity_;
  size_t size_ = 0;    // events kept
  size_t oldest_ = 0;  // the oldest event's slot once the ring is full (0 until then)
  uint64_t dropped_ = 0;
  std::vector<std::unique_ptr<Event[]>> chunks_;
};

}  // namespace graft::doctor::detail
