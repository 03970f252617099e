#pragma once
// A hash table keyed by object address, for the doctor's side tables (object_ledger.h): every
// tensor, storage and graph node made while the doctor watches gets an entry when it is made and
// loses it when it dies, so an insert and an erase are on the path of every op. Open addressing
// with linear probing: entries live in one array (no allocation per entry), the load stays at
// most one half (the array doubles past it; trim() gives back what a spike left), and an erase
// shifts the entries after it back instead of leaving a tombstone, so a table that sees millions
// of inserts and erases never slows down. The null address marks an empty slot. See docs/notes/doctor.md ("The object
// ledger") for why not a library's map.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace graft::doctor::detail {

/// An address's slot in a table of 2^k slots (it indexes with the low bits): addresses are
/// aligned, so their low bits are all alike; a multiply moves the address into the high bits and
/// a fold brings them down.
inline size_t address_hash(const void* p) noexcept {
  const uint64_t h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h ^ (h >> 32));
}

/// Entries `E` of objects `T`, keyed by the object's address. Not thread-safe (SideTable locks).
template <class T, class E>
class AddressTable {
  struct Slot {
    const T* key = nullptr;
    E value{};
  };

 public:
  using key_type = const T*;
  using mapped_type = E;

  AddressTable() = default;
  AddressTable(const AddressTable&) = delete;
  AddressTable& operator=(const AddressTable&) = delete;

  size_t size() const noexcept { return size_; }
  /// The slots the table holds (twice its entries at least, and a power of two).
  size_t slot_count() const noexcept { return capacity(); }
  bool empty() const noexcept { return size_ == 0; }

  /// `key`'s entry, or nullptr.
  const E* find(const T* key) const noexcept {
    const size_t i = slot_of(key);
    return i == kNone ? nullptr : &slots_[i].value;
  }
  E* find(const T* key) noexcept { return const_cast<E*>(std::as_const(*this).find(key)); }
  size_t count(const T* key) const noexcept { return find(key) ? 1 : 0; }

  /// `key`'s entry, made (value-initialized) when it had none; the bool says whether it was made.
  std::pair<E*, bool> try_emplace(const T* key) {
    if (2 * (size_ + 1) > capacity() && !rehash(capacity() ? 2 * capacity() : kMinCapacity)) throw std::bad_alloc();
    size_t i = address_hash(key) & mask_;
    for (; slots_[i].key; i = (i + 1) & mask_)
      if (slots_[i].key == key) return {&slots_[i].value, false};
    slots_[i].key = key;
    slots_[i].value = E{};
    if (++size_ > peak_) peak_ = size_;
    return {&slots_[i].value, true};
  }

  /// Removes `key`'s entry into `*out` (when not null); false when it had none.
  bool erase(const T* key, E* out) noexcept {
    size_t hole = slot_of(key);
    if (hole == kNone) return false;
    if (out) *out = slots_[hole].value;
    // an entry after the hole moves into it unless its home slot lies after the hole (cyclically)
    for (size_t j = (hole + 1) & mask_; slots_[j].key; j = (j + 1) & mask_) {
      const size_t home = address_hash(slots_[j].key) & mask_;
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].key = nullptr;
    --size_;
    return true;
  }

  /// Forgets every entry and gives the slots back.
  void clear() noexcept {
    slots_.reset();
    mask_ = 0;
    size_ = peak_ = 0;
  }

  /// Gives back the slots the table has not needed since the last trim: a table that stayed under
  /// an eighth full shrinks to fit the most entries it held meanwhile (a step's peak, when the
  /// doctor trims at step boundaries, so a step that fills the table again finds its slots).
  void trim() noexcept {
    if (size_ == 0 && peak_ == 0) {
      clear();
      return;
    }
    size_t fit = kMinCapacity;
    while (2 * peak_ > fit) fit *= 2;
    if (4 * fit <= capacity()) (void)rehash(fit);  // (kept as it is if memory is short)
    peak_ = size_;
  }

  /// Walks the entries as (address, entry) pairs, in slot order.
  class const_iterator {
   public:
    const_iterator(const Slot* at, const Slot* end) : at_(at), end_(end) { skip(); }
    std::pair<const T*, const E&> operator*() const { return {at_->key, at_->value}; }
    const_iterator& operator++() {
      ++at_;
      skip();
      return *this;
    }
    bool operator!=(const const_iterator& o) const { return at_ != o.at_; }

   private:
    void skip() {
      while (at_ != end_ && !at_->key) ++at_;
    }
    const Slot* at_;
    const Slot* end_;
  };
  const_iterator begin() const { return {slots_.get(), slots_.get() + capacity()}; }
  const_iterator end() const { return {slots_.get() + capacity(), slots_.get() + capacity()}; }

 private:
  static constexpr size_t kNone = ~size_t{0};
  size_t capacity() const noexcept { return slots_ ? mask_ + 1 : 0; }
  /// The slot holding `key`, or kNone.
  size_t slot_of(const T* key) const noexcept {
    if (size_ == 0) return kNone;
    for (size_t i = address_hash(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return i;
      if (!slots_[i].key) return kNone;
    }
  }
  static constexpr size_t kMinCapacity = 64;
  /// Moves the entries into `capacity` slots; false (and nothing changed) when memory is short.
  bool rehash(size_t capacity) noexcept {
    std::unique_ptr<Slot[]> fresh(new (std::nothrow) Slot[capacity]());
    if (!fresh) return false;
    const size_t old_capacity = this->capacity();
    std::unique_ptr<Slot[]> old = std::move(slots_);
    slots_ = std::move(fresh);
    mask_ = capacity - 1;
    for (size_t i = 0; i < old_capacity; ++i) {
      if (!old[i].key) continue;
      size_t j = address_hash(old[i].key) & mask_;
      while (slots_[j].key) j = (j + 1) & mask_;
      slots_[j] = old[i];
    }
    return true;
  }

  std::unique_ptr<Slot[]> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  size_t peak_ = 0;  // the most entries since the last trim()
};

}  // namespace graft::doctor::detail
