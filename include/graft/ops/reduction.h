#pragma once
/// How a loss reduces its per-element values (PyTorch's reduction='none' | 'mean' | 'sum').
/// Its own header because the generated op declarations (graft/ops/generated_ops.h) use it.
#include <string>

namespace graft {

/// How a loss reduces its per-element values: PyTorch's reduction='none' | 'mean' | 'sum'.
enum class Reduction { None, Mean, Sum };
/// libtorch's spellings of the reductions (`MSELossOptions().reduction(torch::kSum)`).
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;
/// Parses "none", "mean" or "sum" (ValueError otherwise, PyTorch's text).
Reduction reduction_from_string(const std::string& s);

}  // namespace graft
