// Python's float repr, built on std::to_chars (shortest round-trip digits).
#include "graft/core/python_format.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace graft::detail {

std::string python_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  const std::string sci(buf, res.ptr);  // "-d.ddde-XX"
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (sci[i] >= '0' && sci[i] <= '9') digits += sci[i];
  const int exponent = std::atoi(sci.c_str() + e + 1);
  const int decpt = exponent + 1;  // value = 0.<digits> * 10^decpt
  std::string out;
  if (value < 0) out.push_back('-');
  if (decpt <= -4 || decpt > 16) {
    out.push_back(digits[0]);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    const int a = std::abs(exponent);
    out.append(exponent < 0 ? "e-" : "e+");
    if (a < 10) out.push_back('0');
    out.append(std::to_string(a));
  } else if (decpt <= 0) {
    out.append("0.");
    out.append(static_cast<size_t>(-decpt), '0');
    out.append(digits);
  } else if (static_cast<size_t>(decpt) >= digits.size()) {
    out.append(digits);
    out.append(static_cast<size_t>(decpt) - digits.size(), '0');
    out.append(".0");
  } else {
    out.append(digits, 0, static_cast<size_t>(decpt));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(decpt), std::string::npos);
  }
  return out;
}

}  // namespace graft::detail
