// Constant padding (torch.nn.functional.pad, mode='constant'): negative amounts crop with
// narrow, positive ones place the input in a window of a filled tensor (as_strided_scatter,
// whose backward hands the window's gradient back to the input).
#include "graft/core/checked_math.h"
#include "graft/ops/nn_ops.h"
#include "op_util.h"

namespace graft {

Tensor pad(const Tensor& input, IntArrayRef pads, double value) {
  alloc::MemoryOpScope mem_scope("pad");
  detail::check_tensor(input, "pad");
  GRAFT_CHECK(pads.size() % 2 == 0, RuntimeError, "Padding length must be divisible by 2");
  GRAFT_CHECK(static_cast<int64_t>(pads.size()) / 2 <= input.dim(), RuntimeError,
              "Padding length should be less than or equal to two times the input dimension but got padding length ",
              pads.size(), " and input of dimension ", input.dim());
  const int64_t nd = input.dim(), np = static_cast<int64_t>(pads.size()) / 2;
  Shape out_sizes = input.sizes().shape();
  for (int64_t i = 0; i < np; ++i) {
    const int64_t d = nd - 1 - i;
    const int64_t l = pads[static_cast<size_t>(2 * i)], r = pads[static_cast<size_t>(2 * i + 1)];
    const int64_t n = checked_add(checked_add(input.size(d), l), r);
    GRAFT_CHECK(n >= 0, RuntimeError, "The input size ", input.size(d), ", plus negative padding ", l, " and ", r,
                " resulted in a negative output size, which is invalid. Check dimension ", d, " of your input.");
    out_sizes[static_cast<size_t>(d)] = n;
  }
  // Crop first (negative amounts), then place the rest in a filled tensor.
  Tensor x = input;
  bool grow = false;
  for (int64_t i = 0; i < np; ++i) {
    const int64_t d = nd - 1 - i;
    const int64_t l = pads[static_cast<size_t>(2 * i)], r = pads[static_cast<size_t>(2 * i + 1)];
    const int64_t cl = l < 0 ? checked_sub(0, l) : 0, cr = r < 0 ? checked_sub(0, r) : 0;
    GRAFT_CHECK(checked_add(cl, cr) <= x.size(d), RuntimeError, "pad: negative padding ", l, " and ", r,
                " crops more than the ", x.size(d), " elements of dimension ", d);
    if (cl || cr) x = x.narrow(d, cl, x.size(d) - cl - cr);
    grow = grow || l > 0 || r > 0;
  }
  if (!grow) return x.clone();
  Tensor base = full(out_sizes, value, TensorOptions(input.dtype()).device(input.device()));
  Shape strides(out_sizes.size(), 1);
  for (int64_t d = nd - 2; d >= 0; --d) strides[d] = strides[d + 1] * out_sizes[d + 1];
  int64_t offset = 0;
  for (int64_t i = 0; i < np; ++i) {
    const int64_t d = nd - 1 - i, l = pads[static_cast<size_t>(2 * i)];
    if (l > 0) offset += l * strides[static_cast<size_t>(d)];
  }
  return as_strided_scatter(base, x, x.sizes(), strides, offset);
}

}  // namespace graft
