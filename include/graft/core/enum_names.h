#pragma once
/// enum_name: the name of an enumerator from a table written in the enum's order, so each
/// enum's names are one line of data instead of a switch.
#include <cstddef>

namespace graft::detail {

/// names[e] for an enumerator `e` numbered 0..N-1; `unknown` for a value outside the table.
template <class Enum, size_t N>
constexpr const char* enum_name(const char* const (&names)[N], Enum e, const char* unknown = "?") {
  const auto i = static_cast<size_t>(e);
  return i < N ? names[i] : unknown;
}

}  // namespace graft::detail
