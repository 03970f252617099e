#pragma once
// Numbers in error messages written as Python writes them, so messages match PyTorch's
// f-strings: repr(float) ("1.0", "-1.0", "1e-08", "0.001") for doubles.
#include <string>

namespace graft::detail {

/// Python's repr() of a float: the shortest digits that round-trip, fixed notation for
/// decimal exponents in [-4, 16), scientific ("1e-05", "1.5e+16") otherwise, ".0" added to
/// integral values; "inf", "-inf", "nan".
std::string python_float(double value);

}  // namespace graft::detail
