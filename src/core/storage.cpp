// StorageImpl's lifetime bookkeeping (generation, site, live list; include/graft/core/lifetime.h).
#include "graft/core/storage.h"

namespace graft {

LiveStorages& live_storages() {
  static LiveStorages* list = new LiveStorages;  // never destroyed: storages may die during exit
  return *list;
}

StorageImpl::StorageImpl(DataPtr data, size_t nbytes)
    : data_(std::move(data)), nbytes_(nbytes), generation_(lifetime::generation()) {
  if (lifetime::counting()) {
    counted_ = true;
    site_ = lifetime::capture_site();
    lifetime::count_create(lifetime::Kind::Storage, generation_, static_cast<int64_t>(nbytes_));
    live_storages().link(this);
    if (lifetime::Observer* o = lifetime::observer()) o->storage_event(*this, true);
  }
}

StorageImpl::~StorageImpl() {
  if (counted_) {
    live_storages().unlink(this);
    lifetime::count_destroy(lifetime::Kind::Storage, generation_, static_cast<int64_t>(nbytes_));
    if (lifetime::Observer* o = lifetime::observer()) o->storage_event(*this, false);
  }
}

}  // namespace graft
