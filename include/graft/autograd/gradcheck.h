#pragma once
/// gradcheck / gradgradcheck: compare analytical gradients (reverse mode) with central finite
/// differences, as torch.autograd.gradcheck does. Use float64 inputs.
#include <functional>

#include "graft/core/tensor.h"

namespace graft::autograd {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  /// Fast mode compares v^T J u for random u, v instead of whole Jacobians (PyTorch's
  /// fast_mode); on a mismatch the full Jacobians are computed for the message.
  bool fast_mode = false;
  bool raise_exception = true;
  double nondet_tol = 0.0;
  uint64_t seed = 0;  ///< seeds the random vectors of fast mode and gradgradcheck
};

using DiffFn = std::function<TensorList(const TensorList&)>;

/// True when gradients match; otherwise raises RuntimeError ("Jacobian mismatch for output i
/// with respect to input j, ...") or returns false if !raise_exception.
bool gradcheck(const DiffFn& fn, const TensorList& inputs, const GradcheckOptions& opts = {});
/// gradcheck of (inputs, grad_outputs) -> grad(fn(inputs), inputs, grad_outputs, create_graph).
/// Random grad_outputs in [-1, 1] are made when none are given.
bool gradgradcheck(const DiffFn& fn, const TensorList& inputs, const TensorList& grad_outputs = {},
                   const GradcheckOptions& opts = {});

}  // namespace graft::autograd
