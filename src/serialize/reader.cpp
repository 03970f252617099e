// Loading: the 8-byte length and header checks, then copying (and widening) each tensor's bytes
// into memory graft owns. load_file maps the file read-only and reads it through from_bytes.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "graft/core/error.h"
#include "graft/ops/ops.h"
#include "graft/serialize/safetensors.h"
#include "header.h"
#include "utf8.h"

namespace graft::safetensors {

static_assert(std::endian::native == std::endian::little,
              "graft's safetensors reader copies little-endian data as is: a big-endian host needs byte swaps");

namespace detail {
namespace {

uint64_t read_le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// dst[i] = f(element i of `src`, read as Src from unaligned little-endian bytes).
template <class Src, class Dst, class F>
void convert(const char* src, Dst* dst, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) {
    Src s;
    std::memcpy(&s, src + i * static_cast<int64_t>(sizeof(Src)), sizeof(Src));
    dst[i] = f(s);
  }
}

// Reads n elements of a safetensors dtype at src into dst, as the graft dtype it loads as.
using Conversion = void (*)(const char* src, void* dst, int64_t n);

template <class Src, class Dst>
void widen(const char* src, void* dst, int64_t n) {
  convert<Src>(src, static_cast<Dst*>(dst), n, [](Src s) { return static_cast<Dst>(s); });
}

// Any non-zero byte is true: a bool object must hold 0 or 1.
void to_bool(const char* src, void* dst, int64_t n) {
  convert<uint8_t>(src, static_cast<bool*>(dst), n, [](uint8_t b) { return b != 0; });
}

// The conversion of each safetensors dtype whose bytes graft cannot take as they are (see
// graft_dtype_for); I32, I64, F16, BF16, F32 and F64 are copied.
constexpr std::pair<StDtype, Conversion> kConversions[] = {{StDtype::BOOL, to_bool},
                                                           {StDtype::U8, widen<uint8_t, int32_t>},
                                                           {StDtype::I8, widen<int8_t, int32_t>},
                                                           {StDtype::I16, widen<int16_t, int32_t>},
                                                           {StDtype::U16, widen<uint16_t, int32_t>},
                                                           {StDtype::U32, widen<uint32_t, int64_t>}};

// A graft tensor holding a copy of `e`'s bytes (converted to the graft dtype).
Tensor make_tensor(const TensorEntry& e, DType dtype, const char* src) {
  Tensor t = empty(e.shape, TensorOptions(dtype));
  const int64_t n = t.numel();
  if (n == 0) return t;
  void* dst = t.data_ptr();
  switch (e.dtype) {
    case StDtype::I32:
    case StDtype::I64:
    case StDtype::F16:
    case StDtype::BF16:
    case StDtype::F32:
    case StDtype::F64:
      std::memcpy(dst, src, e.end - e.begin);
      return t;
    default:
      for (const auto& [st_dtype, conversion] : kConversions)
        if (st_dtype == e.dtype) {
          conversion(src, dst, n);
          return t;
        }
      GRAFT_INTERNAL_ASSERT(false, "safetensors: no conversion for dtype ", st_dtype_name(e.dtype));
  }
  return t;
}

[[noreturn]] void throw_os_error(const std::string& what, int err) {
  throw RuntimeError("load: " + what + ": " + std::strerror(err));
}

// Closes a descriptor and unmaps a mapping when the load finishes, however it finishes.
struct MappedFile {
  int fd = -1;
  void* data = MAP_FAILED;
  size_t size = 0;
  ~MappedFile() {
    if (data != MAP_FAILED) ::munmap(data, size);
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace
}  // namespace detail

SafetensorsFile from_bytes(std::string_view bytes, const std::string& source) {
  using namespace detail;
  if (bytes.size() < 8)
    fail_invalid(source,
                 "the file is " + std::to_string(bytes.size()) + " bytes long, too short for the 8-byte header length");
  const uint64_t n = read_le64(bytes.data());
  if (n > kMaxHeaderSize)
    fail_invalid(source, "header length " + std::to_string(n) + " exceeds the limit of " +
                             std::to_string(kMaxHeaderSize) + " bytes");
  if (n > bytes.size() - 8)
    fail_invalid(source, "header length " + std::to_string(n) + " runs past the end of the file (" +
                             std::to_string(bytes.size()) + " bytes)");
  const std::string_view header = bytes.substr(8, n);
  if (size_t bad = invalid_utf8_offset(header); bad != std::string_view::npos)
    fail_invalid(source, "header is not valid UTF-8 (byte " + std::to_string(bad) + " of the header)");

  // JSON has no raw NUL anywhere, and nlohmann's lexer would take one for the end of the input.
  if (size_t nul = header.find('\0'); nul != std::string_view::npos)
    fail_invalid(source, "header is not valid JSON: NUL byte at byte " + std::to_string(nul) + " of the header");
  RawHeader raw = parse_header_json(header, source);
  const uint64_t data_size = bytes.size() - 8 - n;
  std::vector<TensorEntry> entries = validate_layout(raw, data_size, source);

  // The file is valid; refuse dtypes graft cannot hold before allocating anything.
  std::vector<DType> dtypes;
  dtypes.reserve(entries.size());
  for (const auto& e : entries) {
    auto d = graft_dtype_for(e.dtype);
    if (!d)
      throw TypeError("safetensors file '" + source + "': tensor '" + e.name + "' has dtype " + st_dtype_name(e.dtype) +
                      ", which graft cannot load (graft loads " + loadable_st_dtype_names() + ")");
    dtypes.push_back(*d);
  }

  SafetensorsFile out;
  out.metadata = std::move(raw.metadata);
  const char* data = bytes.data() + 8 + n;
  for (size_t i = 0; i < entries.size(); ++i)
    out.tensors.insert(entries[i].name, make_tensor(entries[i], dtypes[i], data + entries[i].begin));
  return out;
}

SafetensorsFile load_file(const std::string& path) {
  using namespace detail;
  MappedFile file;
  // O_NONBLOCK: opening a FIFO must not hang (it is then refused as not a regular file).
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0) throw_os_error("cannot open '" + path + "'", errno);
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) throw_os_error("cannot stat '" + path + "'", errno);
  if (!S_ISREG(st.st_mode)) throw RuntimeError("load: '" + path + "' is not a regular file");
  file.size = static_cast<size_t>(st.st_size);
  if (file.size == 0) return from_bytes(std::string_view(), path);
  file.data = ::mmap(nullptr, file.size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (file.data == MAP_FAILED) throw_os_error("cannot map '" + path + "'", errno);
  ::madvise(file.data, file.size, MADV_SEQUENTIAL);
  return from_bytes(std::string_view(static_cast<const char*>(file.data), file.size), path);
}

StateDict load(const std::string& path) { return load_file(path).tensors; }

}  // namespace graft::safetensors
