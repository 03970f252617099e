// libFuzzer entry point for the safetensors reader (not part of the default build; see
// fuzz/CMakeLists.txt and docs/checkpoints.md). Every input must either load or throw a
// graft::Error; a loaded file must serialize and load back to the same tensors.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "graft/serialize/safetensors.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "safetensors_fuzz: %s\n", what);
  std::abort();
}

std::string bytes_of(const graft::Tensor& t) { return std::string(static_cast<const char*>(t.data_ptr()), t.nbytes()); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graft::safetensors::SafetensorsFile file;
  try {
    file = graft::safetensors::from_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const graft::Error&) {
    return 0;  // rejected: fine. Anything else escapes and is reported by libFuzzer.
  }
  // Accepted: the round trip must be exact.
  const auto again =
      graft::safetensors::from_bytes(graft::safetensors::to_bytes(file.tensors, file.metadata), "round trip");
  if (again.metadata != file.metadata || again.tensors.keys() != file.tensors.keys()) fail("names changed");
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    const graft::Tensor& a = file.tensors[i].value();
    const graft::Tensor& b = again.tensors[i].value();
    if (a.dtype() != b.dtype() || a.sizes() != b.sizes() || a.requires_grad() || !a.is_contiguous())
      fail("tensor changed");
    if (bytes_of(a) != bytes_of(b)) fail("bytes changed");
  }
  return 0;
}
