// StorageImpl reports its creation and destruction to the observer (include/graft/core/lifetime.h).
#include "graft/core/storage.h"

namespace graft {

StorageImpl::StorageImpl(DataPtr data, size_t nbytes) : data_(std::move(data)), nbytes_(nbytes) {
  if (lifetime::Observer* o = lifetime::observer()) o->storage_created(*this);
}

StorageImpl::~StorageImpl() {
  if (lifetime::Observer* o = lifetime::observer()) o->storage_destroyed(*this);
}

}  // namespace graft
