#pragma once
/// StorageImpl: the shared memory behind one or more tensors (views share it). It also
/// carries the version counter that views and detach() share. See docs/notes/ownership.md.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "graft/core/allocator.h"
#include "graft/core/intrusive_ptr.h"
#include "graft/core/lifetime.h"

namespace graft {

class StorageImpl final : public RefCounted {
 public:
  StorageImpl(DataPtr data, size_t nbytes);
  ~StorageImpl() override;
  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }
  /// The allocation itself (its context is the allocator's block header).
  const DataPtr& data_ptr() const { return data_; }
  /// The version counter shared by every tensor that aliases this storage (except `.data`).
  /// Atomic: in-place ops on shared tensors may run on several threads.
  std::atomic<uint32_t> version{0};

 private:
  DataPtr data_;
  size_t nbytes_;
};

/// A separately owned version counter, for tensors that share storage but not the version
/// (Tensor::variable_data(), PyTorch's `.data`).
class VersionCounter final : public RefCounted {
 public:
  std::atomic<uint32_t> version{0};
};

}  // namespace graft
