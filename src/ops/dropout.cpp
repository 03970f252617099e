// Dropout as PyTorch computes it: noise = bernoulli(1 - p) / (1 - p), output = input * noise,
// so the backward is a multiplication by the same noise (and differentiates again).
#include "graft/ops/nn_ops.h"
#include "op_util.h"

namespace graft {

Tensor dropout(const Tensor& input, double p, bool train) {
  alloc::MemoryOpScope mem_scope("dropout");
  detail::check_tensor(input, "dropout");
  GRAFT_CHECK(!(p < 0.0 || p > 1.0), ValueError, "dropout probability has to be between 0 and 1, but got ", p);
  // NaN passes torch's Python check and fails its C++ one
  GRAFT_CHECK(!std::isnan(p), RuntimeError, "dropout probability has to be between 0 and 1, but got ", p);
  if (!train || p == 0.0) return input;
  // PyTorch multiplies by a float mask in place: an integer input cannot hold the result
  GRAFT_CHECK(is_floating_point(input.dtype()), RuntimeError,
              "result type Float can't be cast to the desired output type ", scalar_type_name(input.dtype()));
  if (p == 1.0) return input * zeros_like(input);
  Tensor noise;
  {
    NoGradGuard ng;
    Tensor keep = ge(rand_like(input), p);  // kept with probability 1 - p
    noise = where(keep, scalar_tensor(1.0 / (1.0 - p), TensorOptions(input.dtype()).device(input.device())),
                  scalar_tensor(0.0, TensorOptions(input.dtype()).device(input.device())));
  }
  return input * noise;
}

}  // namespace graft
