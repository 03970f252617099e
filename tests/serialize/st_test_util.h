#pragma once
// Helpers for the safetensors tests: hand-built files, a scratch directory, raw file I/O.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "graft/serialize/safetensors.h"
#include "support/test_util.h"

namespace graft::testing {

/// A safetensors file from its parts: the 8-byte little-endian length of `header`, the header
/// (used as given: no padding), then `data`.
inline std::string st_file(const std::string& header, const std::string& data = "") {
  std::string out;
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + header + data;
}

/// The little-endian bytes of `values` (as the host lays them out; the tests run little-endian).
template <class T>
std::string le_bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

/// The raw bytes of a contiguous tensor.
inline std::string tensor_bytes(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

/// A fresh directory under the test temp dir, removed with everything in it at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "graft_st_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }
  /// Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_all(const std::string& path, const std::string& bytes) {
  // A new file rather than a truncated one: ext4 flushes a file rewritten after truncation
  // (auto_da_alloc) at close, which makes hundreds of rewrites take seconds.
  std::filesystem::remove(path);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Expects two state dicts to hold the same names (in order), dtypes, shapes and bytes.
inline void expect_same_state(const StateDict& a, const StateDict& b) {
  ASSERT_EQ(a.keys(), b.keys());
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor& x = a[i].value();
    const Tensor& y = b[i].value();
    EXPECT_EQ(x.dtype(), y.dtype()) << a[i].key();
    EXPECT_EQ(x.sizes().vec(), y.sizes().vec()) << a[i].key();
    EXPECT_EQ(tensor_bytes(x), tensor_bytes(y)) << a[i].key();
  }
}

}  // namespace graft::testing
