// Pooling: max_pool2d (a kernel returning values and indices; its backward scatters through
// the indices), avg_pool2d (windows summed by im2col, divided per window) and
// adaptive_avg_pool2d (two averaging matrices). Output sizes and checks follow PyTorch's
// pool2d_shape_check / pooling_output_shape.
#include "graft/core/checked_math.h"
#include "graft/ops/derivatives.h"
#include "graft/ops/generated_forwards.h"
#include "graft/ops/nn_ops.h"
#include "nn_util.h"
#include "op_util.h"

namespace graft {
using detail::Pair;

namespace {

// PyTorch's pooling_output_shape: floor or ceil division, and in ceil mode the last window
// must start inside the input or the left padding.
// Window arguments fit 32 bits (checked by the caller), so only `in` can be large.
int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil_mode) {
  const int64_t num = checked_sub(checked_add(in, 2 * pad), d * (k - 1) + 1 - (ceil_mode ? s - 1 : 0));
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad) --out;
  return out;
}

struct PoolGeometry {
  Pair k{}, s{}, p{}, d{};
  int64_t oh = 0, ow = 0;
};

// Validates a pooling call and computes its output grid (input already 4-D).
PoolGeometry pool_geometry(const char* op, const Tensor& x4, bool unbatched, IntArrayRef kernel_size,
                           IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  PoolGeometry g;
  g.k = detail::pair_arg(kernel_size, op, "kernel_size");
  g.s = stride.empty() ? g.k : detail::pair_arg(stride, op, "stride");
  g.p = detail::pair_arg(padding, op, "padding");
  g.d = detail::pair_arg(dilation, op, "dilation");
  // PyTorch narrows the window arguments to int (safe_downcast): a 2**63 - 1 kernel raises
  // instead of wrapping into a 1x1 output with an endless window
  for (const Pair* a : {&g.k, &g.s, &g.p, &g.d})
    for (int64_t v : *a) checked_int32(v);
  GRAFT_CHECK(g.k[0] > 0 && g.k[1] > 0, RuntimeError, op,
              ": kernel size should be greater than zero, but got kH: ", g.k[0], " kW: ", g.k[1]);
  GRAFT_CHECK(g.s[0] > 0 && g.s[1] > 0, RuntimeError, op, ": stride should be greater than zero, but got dH: ", g.s[0],
              " dW: ", g.s[1]);
  GRAFT_CHECK(g.d[0] > 0 && g.d[1] > 0, RuntimeError, op,
              ": dilation should be greater than zero, but got dilationH: ", g.d[0], " dilationW: ", g.d[1]);
  GRAFT_CHECK(g.p[0] >= 0 && g.p[1] >= 0 && g.p[0] <= g.k[0] / 2 && g.p[1] <= g.k[1] / 2, RuntimeError,
              "pad should be smaller than or equal to half of kernel size, but got padW = ", g.p[1],
              ", padH = ", g.p[0], ", kW = ", g.k[1], ", kH = ", g.k[0]);
  const int64_t C = x4.size(1), H = x4.size(2), W = x4.size(3);
  GRAFT_CHECK(C > 0 && H > 0 && W > 0, RuntimeError, op,
              ": Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:",
              unbatched ? x4.squeeze(0).sizes() : x4.sizes());
  g.oh = pool_out(H, g.k[0], g.p[0], g.s[0], g.d[0], ceil_mode);
  g.ow = pool_out(W, g.k[1], g.p[1], g.s[1], g.d[1], ceil_mode);
  GRAFT_CHECK(g.oh >= 1 && g.ow >= 1, RuntimeError, "Given input size: (", C, "x", H, "x", W,
              "). Calculated output size: (", C, "x", g.oh, "x", g.ow, "). Output size is too small");
  return g;
}

Tensor batched4(const Tensor& input, const char* op) {
  GRAFT_CHECK(
      input.dim() == 3 || input.dim() == 4, RuntimeError, op,
      ": Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:", input.sizes());
  if (!is_floating_point(input.dtype())) {
    // PyTorch has integer avg_pool2d kernels, graft not; it has no integer max_pool2d
    GRAFT_CHECK(std::string_view(op) != "max_pool2d", RuntimeError, "\"max_pool2d\" not implemented for '",
                scalar_type_name(input.dtype()), "'");
    throw TypeError(detail::str(op, ": expected a floating point input, but got ", input.dtype()));
  }
  return input.dim() == 3 ? input.unsqueeze(0) : input;
}

// adaptive_avg_pool2d: the gradient of the window averages is the averaging matrices applied
// to the output gradient, in graft ops (so it differentiates again).
// [start, end) of adaptive window i of `out` over `in` (PyTorch's start_index / end_index).
inline int64_t window_start(int64_t i, int64_t in, int64_t out) { return checked_mul(i, in) / out; }
inline int64_t window_end(int64_t i, int64_t in, int64_t out) { return (checked_mul(i + 1, in) + out - 1) / out; }

// Calls f(plane, cell, hs, he, ws, we) for each adaptive window of every plane, in the pooled
// tensor's row-major order: `full` [..., H, W] and `pooled` [..., oh, ow] are contiguous tensors
// of T, plane points at the window's H x W plane of full, cell is the window's element of pooled,
// and the window is rows [hs, he) x columns [ws, we) of the plane. The forward averages the
// window into its cell, the backward shares the cell's gradient out over the window.
template <class T, class F>
void for_each_adaptive_window(const Tensor& full, const Tensor& pooled, F&& f) {
  const int64_t H = full.size(-2), W = full.size(-1), oh = pooled.size(-2), ow = pooled.size(-1);
  const int64_t planes = oh * ow == 0 ? 0 : pooled.numel() / (oh * ow);
  T* plane = full.data_ptr<T>();
  T* cell = pooled.data_ptr<T>();
  for (int64_t pl = 0; pl < planes; ++pl, plane += H * W)
    for (int64_t i = 0; i < oh; ++i) {
      const int64_t hs = window_start(i, H, oh), he = window_end(i, H, oh);
      for (int64_t j = 0; j < ow; ++j) f(plane, *cell++, hs, he, window_start(j, W, ow), window_end(j, W, ow));
    }
}

// Window i covers [floor(i*in/out), ceil((i+1)*in/out)): row i of the averaging matrix [out, in],
// made in the allocator (its size follows the user's numbers: too large is an OutOfMemoryError)
Tensor averaging(int64_t out, int64_t in, DType dtype, Device device) {
  Tensor m = zeros({out, in}, TensorOptions(kFloat64).device(device));
  if (!detail::has_data(m)) return m.to(dtype);  // meta: the sizes are the point
  double* p = m.data_ptr<double>();
  for (int64_t i = 0; i < out; ++i) {
    const int64_t s = window_start(i, in, out), e = window_end(i, in, out);
    for (int64_t j = s; j < e; ++j) p[i * in + j] = 1.0 / static_cast<double>(e - s);
  }
  return m.to(dtype);
}

}  // namespace

std::pair<Tensor, Tensor> detail::max_pool2d_with_indices_forward(const Tensor& input, IntArrayRef kernel_size,
                                                                  IntArrayRef stride, IntArrayRef padding,
                                                                  IntArrayRef dilation, bool ceil_mode) {
  detail::check_tensor(input, "max_pool2d");
  Tensor x4 = batched4(input, "max_pool2d");
  PoolGeometry g = pool_geometry("max_pool2d", x4, input.dim() == 3, kernel_size, stride, padding, dilation, ceil_mode);
  const int64_t N = x4.size(0), C = x4.size(1), H = x4.size(2), W = x4.size(3);
  Tensor xc = x4.contiguous();
  Tensor planes = kernel::raw_view(xc, {N * C, H, W}, {H * W, W, 1}, xc.storage_offset());
  Shape out_sizes{N, C, g.oh, g.ow};
  if (input.dim() == 3) out_sizes.erase(out_sizes.begin());
  Tensor out = detail::new_empty(out_sizes, x4.dtype(), x4.device());
  Tensor idx = detail::new_empty(out_sizes, kInt64, x4.device());
  kernel::max_pool2d(kernel::raw_view(out, {N, C, g.oh, g.ow}, contiguous_strides({N, C, g.oh, g.ow}), 0),
                     kernel::raw_view(idx, {N, C, g.oh, g.ow}, contiguous_strides({N, C, g.oh, g.ow}), 0), planes,
                     {g.k[0], g.k[1], g.s[0], g.s[1], g.p[0], g.p[1], g.d[0], g.d[1], g.oh, g.ow});
  return {out, idx};
}

Tensor derivatives::max_pool2d_with_indices_backward(const Tensor& grad, IntArrayRef input_sizes, const Tensor& indices,
                                                     IntArrayRef padding) {
  // Each output gradient lands on the input position its maximum came from.
  const int64_t hw = input_sizes[input_sizes.size() - 2] * input_sizes.back();
  const int64_t planes = hw == 0 ? 0 : compute_numel(input_sizes) / hw;
  const int64_t outs = planes == 0 ? 0 : indices.numel() / planes;
  Tensor gi = grad.reshape({planes, outs});
  Tensor ii = indices.reshape({planes, outs});
  bool padded = false;
  for (int64_t p : padding) padded = padded || p > 0;
  if (padded) {  // a window that saw only padding has index -1: no gradient from it
    Tensor valid = ge(ii, 0);
    gi = where(valid, gi, 0);
    ii = where(valid, ii, 0);
  }
  Tensor base = zeros({planes, hw}, TensorOptions(grad.dtype()).device(grad.device()));
  return scatter_add(base, 1, ii, gi).view(input_sizes);
}

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode).first;
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  alloc::MemoryOpScope mem_scope("avg_pool2d");
  detail::check_tensor(input, "avg_pool2d");
  Tensor x4 = batched4(input, "avg_pool2d");
  PoolGeometry g = pool_geometry("avg_pool2d", x4, input.dim() == 3, kernel_size, stride, padding, {1}, ceil_mode);
  GRAFT_CHECK(!divisor_override || *divisor_override != 0, RuntimeError, "divisor must be not zero");
  const int64_t N = x4.size(0), C = x4.size(1), H = x4.size(2), W = x4.size(3);
  // Pad with zeros (plus what ceil mode's last windows need past the padding), take every
  // window with im2col, sum it, and divide by each window's divisor.
  const int64_t extra_h = std::max<int64_t>(0, (g.oh - 1) * g.s[0] + g.k[0] - (H + 2 * g.p[0]));
  const int64_t extra_w = std::max<int64_t>(0, (g.ow - 1) * g.s[1] + g.k[1] - (W + 2 * g.p[1]));
  Tensor planes = x4.reshape({N * C, 1, H, W});
  Tensor padded = pad(planes, {g.p[1], g.p[1] + extra_w, g.p[0], g.p[0] + extra_h});
  Tensor sums = im2col(padded, {g.k[0], g.k[1]}, {1}, {0}, {g.s[0], g.s[1]}).sum({1});  // [N*C, oh*ow]
  std::vector<double> div(static_cast<size_t>(g.oh * g.ow));
  for (int64_t oy = 0; oy < g.oh; ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      int64_t hs = oy * g.s[0] - g.p[0], ws = ox * g.s[1] - g.p[1];
      int64_t he = std::min(hs + g.k[0], H + g.p[0]), we = std::min(ws + g.k[1], W + g.p[1]);
      const int64_t pool_size = (he - hs) * (we - ws);
      hs = std::max<int64_t>(hs, 0);
      ws = std::max<int64_t>(ws, 0);
      he = std::min(he, H);
      we = std::min(we, W);
      double d = divisor_override    ? static_cast<double>(*divisor_override)
                 : count_include_pad ? static_cast<double>(pool_size)
                                     : static_cast<double>((he - hs) * (we - ws));
      div[static_cast<size_t>(oy * g.ow + ox)] = d;
    }
  Tensor out = (sums / tensor(div, TensorOptions(x4.dtype()).device(x4.device()))).reshape({N, C, g.oh, g.ow});
  return input.dim() == 3 ? out.squeeze(0) : out;
}

Tensor detail::adaptive_avg_pool2d_forward(const Tensor& input, IntArrayRef output_size) {
  detail::check_tensor(input, "adaptive_avg_pool2d");
  GRAFT_CHECK(input.dim() == 3 || input.dim() == 4, RuntimeError,
              "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got ", input.sizes());
  GRAFT_CHECK(is_floating_point(input.dtype()), TypeError,
              "adaptive_avg_pool2d: expected a floating point input, but got ", input.dtype());
  GRAFT_CHECK(output_size.size() == 2 || output_size.size() == 1, RuntimeError,
              "adaptive_avg_pool2d: output_size must be 2");
  const Pair os = detail::pair_arg(output_size, "adaptive_avg_pool2d", "output_size");
  GRAFT_CHECK(os[0] >= 0 && os[1] >= 0, RuntimeError,
              "adaptive_avg_pool2d: elements of output_size must be "
              "greater than or equal to 0 but received {",
              os[0], ", ", os[1], "}");
  const int64_t H = input.size(-2), W = input.size(-1);
  {  // the output's size, checked as PyTorch's numel (2**62 x 4 overflows)
    Shape out_sizes = input.sizes().shape();
    out_sizes[out_sizes.size() - 2] = os[0];
    out_sizes[out_sizes.size() - 1] = os[1];
    compute_numel(out_sizes);
  }
  for (int64_t d = input.dim() - 2; d < input.dim(); ++d)  // the spatial dims (channels may be 0, as torch 1.13)
    GRAFT_CHECK(input.size(d) > 0, RuntimeError,
                "adaptive_avg_pool2d(): Expected input to have non-zero size for "
                "non-batch dimensions, but input has sizes ",
                input.sizes(), " with dimension ", d, " being empty");
  if (os[0] == H && os[1] == W) {  // every window is one element
    NoGradGuard ng;
    return input.clone();
  }
  // The forward sums each window directly: as a product with the averaging matrices, an
  // infinite input made every window NaN (inf * 0), not just its own
  Shape out_sizes = input.sizes().shape();
  out_sizes[out_sizes.size() - 2] = os[0];
  out_sizes[out_sizes.size() - 1] = os[1];
  Tensor x = input.contiguous();
  Tensor out = detail::new_empty(out_sizes, input.dtype(), input.device());
  if (detail::has_data(out))
    GRAFT_DISPATCH_FLOATING(input.dtype(), "adaptive_avg_pool2d", [&] {
      for_each_adaptive_window<scalar_t>(
          x, out, [&](const scalar_t* plane, scalar_t& avg, int64_t hs, int64_t he, int64_t ws, int64_t we) {
            double acc = 0;
            for (int64_t h = hs; h < he; ++h)
              for (int64_t w = ws; w < we; ++w) acc += static_cast<double>(plane[h * W + w]);
            avg = static_cast<scalar_t>(acc / static_cast<double>((he - hs) * (we - ws)));
          });
    });
  return out;
}

// adaptive_avg_pool2d's gradient. First order: each window's gradient / its area is added to
// its elements (an infinite gradient stays in its windows). Under create_graph the same
// gradient is the averaging matrices applied to the output gradient, in graft ops (so it
// differentiates again).
Tensor derivatives::adaptive_avg_pool2d_backward(const Tensor& grad, IntArrayRef input_sizes) {
  const int64_t H = input_sizes[input_sizes.size() - 2], W = input_sizes[input_sizes.size() - 1];
  const int64_t oh = grad.size(-2), ow = grad.size(-1);
  if (GradMode::is_enabled())
    return matmul(matmul(averaging(oh, H, grad.dtype(), grad.device()).t(), grad),
                  averaging(ow, W, grad.dtype(), grad.device()));
  Tensor go = grad.contiguous();
  Tensor gi = zeros(input_sizes, TensorOptions(go.dtype()).device(go.device()));
  if (detail::has_data(gi))
    GRAFT_DISPATCH_FLOATING(go.dtype(), "adaptive_avg_pool2d_backward", [&] {
      for_each_adaptive_window<scalar_t>(
          gi, go, [&](scalar_t* plane, const scalar_t& cell_grad, int64_t hs, int64_t he, int64_t ws, int64_t we) {
            const scalar_t share = cell_grad / static_cast<scalar_t>((he - hs) * (we - ws));
            for (int64_t h = hs; h < he; ++h)
              for (int64_t w = ws; w < we; ++w) plane[h * W + w] += share;
          });
    });
  return gi;
}

}  // namespace graft
