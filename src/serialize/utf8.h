#pragma once
// UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), shared
// by the header reader and the writer.
#include <cstddef>
#include <string_view>

namespace graft::safetensors::detail {

/// Offset of the first byte that starts an invalid UTF-8 sequence, or npos when `s` is valid.
inline size_t invalid_utf8_offset(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0) lo = 0xa0;  // no overlong 3-byte forms
      if (c == 0xed) hi = 0x9f;  // no UTF-16 surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0) lo = 0x90;  // no overlong 4-byte forms
      if (c == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (n - i < len) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if ((p[i + k] & 0xc0) != 0x80) return i;
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace graft::safetensors::detail
