#pragma once
// Writing: validate the state dict and lay it out (plan_write), then stream the bytes into a
// sink (write_file_bytes): a string for to_bytes, a temporary file for save.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graft/serialize/safetensors.h"
#include "st_dtype.h"

namespace graft::safetensors::detail {

/// Where serialized bytes go.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const char* data, size_t n) = 0;
};

/// Everything needed to write a file: the 8-byte length + padded header, and the tensors in
/// data order.
struct WritePlan {
  std::string prefix;
  std::vector<const Tensor*> data_order;
  uint64_t total_size;
};

/// Validates `tensors` and `metadata` (errors name `fn`, the calling function) and lays them
/// out: header in insertion order, data widest dtype first, header padded to a multiple of 8.
/// A header over the readers' 100,000,000-byte limit is a ValueError.
WritePlan plan_write(const StateDict& tensors, const Metadata& metadata, const char* fn);

/// Writes the planned file into `sink` (non-contiguous tensors are copied one at a time).
void write_file_bytes(const WritePlan& plan, ByteSink& sink);

}  // namespace graft::safetensors::detail
