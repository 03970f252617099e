#pragma once
// RecordedTensors: the object ledger's record of tensors, kept in the tensors themselves. See
// docs/notes/doctor.md ("The object ledger").
#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

#include "graft/core/lifetime.h"
#include "graft/core/tensor_impl.h"
#include "spin_lock.h"

namespace graft::doctor::detail {

/// What the doctor records of an object: its generation, creation line and order.
struct ObjectEntry {
  uint32_t generation = 0;    ///< the generation (steps seen) in which it was made
  lifetime::SiteId site = 0;  ///< its creation line (0 below tier Sites)
  uint64_t seq = 0;           ///< creation order: walks sort by it, so reports come out the same
  int64_t bytes = 0;          ///< a storage's bytes (0 for a tensor)
};

/// The tensors recorded, each entry in the tensor's own ObserverSlot, linked into one list under
/// one lock: recording a tensor made or destroyed is a few stores, where a table keyed by address
/// hashes and probes (tensors are the objects made most often: this is most of what the
/// counters tier costs). The list offers what a SideTable does for the other kinds of object.
class RecordedTensors {
 public:
  explicit RecordedTensors(std::atomic<int64_t>& total) : total_(total) {}

  /// Records `t` (made now, so not recorded yet) with entry `e` (`e.seq` nonzero).
  void insert(const TensorImpl* t, const ObjectEntry& e) {
    lifetime::ObserverSlot& s = t->observer_slot();
    std::lock_guard<SpinLock> g(mu_);
    s.prev = nullptr;
    s.next = head_;
    if (head_) head_->observer_slot().prev = const_cast<TensorImpl*>(t);
    head_ = const_cast<TensorImpl*>(t);
    s.seq = e.seq;
    s.generation = e.generation;
    s.site = e.site;
    ++size_;
    total_.fetch_add(1, std::memory_order_relaxed);
  }
  /// Forgets `t` into `*out`; false when it was not recorded.
  bool take(const TensorImpl* t, ObjectEntry* out) {
    lifetime::ObserverSlot& s = t->observer_slot();
    std::lock_guard<SpinLock> g(mu_);
    if (s.seq == 0) return false;
    *out = entry_of(s);
    unlink(s);
    total_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }
  /// `t`'s entry, or a default one (generation 0, site 0) when it is not recorded.
  ObjectEntry value(const TensorImpl* t) const {
    std::lock_guard<SpinLock> g(mu_);
    return entry_of(t->observer_slot());
  }
  size_t size() const {
    std::lock_guard<SpinLock> g(mu_);
    return size_;
  }

  /// The recorded tensors as (tensor, entry) pairs, newest first (what fn gets from locked()).
  class View {
   public:
    class iterator {
     public:
      explicit iterator(const TensorImpl* t) : t_(t) {}
      std::pair<const TensorImpl*, ObjectEntry> operator*() const { return {t_, entry_of(t_->observer_slot())}; }
      iterator& operator++() {
        t_ = t_->observer_slot().next;
        return *this;
      }
      bool operator!=(const iterator& o) const { return t_ != o.t_; }

     private:
      const TensorImpl* t_;
    };
    iterator begin() const { return iterator(head_); }
    iterator end() const { return iterator(nullptr); }

   private:
    friend class RecordedTensors;
    explicit View(const TensorImpl* head) : head_(head) {}
    const TensorImpl* head_;
  };
  /// Calls fn(const View&) holding the lock: the tensors cannot die meanwhile (a destruction
  /// waits for the lock), and fn must neither make nor drop references to graft objects.
  template <class F>
  decltype(auto) locked(F&& fn) const {
    std::lock_guard<SpinLock> g(mu_);
    return fn(View(head_));
  }
  /// Forgets every entry.
  void clear() {
    std::lock_guard<SpinLock> g(mu_);
    const auto n = static_cast<int64_t>(size_);
    while (head_) unlink(head_->observer_slot());
    total_.fetch_sub(n, std::memory_order_relaxed);
  }

 private:
  static ObjectEntry entry_of(const lifetime::ObserverSlot& s) {
    ObjectEntry e;
    if (s.seq == 0) return e;
    e.generation = s.generation;
    e.site = s.site;
    e.seq = s.seq;
    return e;
  }
  void unlink(lifetime::ObserverSlot& s) {
    if (s.prev)
      s.prev->observer_slot().next = s.next;
    else
      head_ = s.next;
    if (s.next) s.next->observer_slot().prev = s.prev;
    s = lifetime::ObserverSlot{};
    --size_;
  }
  mutable SpinLock mu_;
  TensorImpl* head_ = nullptr;
  size_t size_ = 0;
  std::atomic<int64_t>& total_;
};

}  // namespace graft::doctor::detail
