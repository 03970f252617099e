// Convolution lowered onto GEMM: the forwards of im2col/col2im (F.unfold/F.fold; their nodes are
// generated from src/ops/ops.yaml), conv2d, conv1d and conv_transpose2d over one convolution
// (graft::convolution's forward, detail::convolution_forward), and its gradients
// (derivatives::convolution_backward). One node, ConvolutionBackward0, generated from the
// declaration's joint formula, serves both directions; it saves the input and weight (not the
// column buffer). First-order backward runs fused GEMMs
// on raw buffers; under create_graph the same gradients are composed of differentiable ops
// (conv <-> transposed conv, im2col, bmm), so double backward works. See
// docs/notes/convolution.md.
#include "graft/core/checked_math.h"
#include "graft/ops/derivatives.h"
#include "graft/ops/generated_forwards.h"
#include "graft/ops/nn_ops.h"
#include "nn_util.h"
#include "op_util.h"

namespace graft {
using detail::Pair;

namespace {

// ---- geometry ----

// Number of window positions; floor division (PyTorch's div_rtn), so an input smaller than
// the window gives 0 or less rather than 1.
int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  const int64_t num = checked_sub(checked_add(in, checked_mul(2, p)), checked_add(checked_mul(d, k - 1), 1));
  return (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
}

kernel::Window2d window(Pair k, Pair s, Pair p, Pair d, int64_t oh, int64_t ow) {
  return {k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], oh, ow};
}

void check_window_args(const char* op, Pair s, Pair p, Pair d) {
  GRAFT_CHECK(s[0] > 0 && s[1] > 0, RuntimeError, op, ": non-positive stride is not supported");
  GRAFT_CHECK(p[0] >= 0 && p[1] >= 0, RuntimeError, op, ": negative padding is not supported");
  GRAFT_CHECK(d[0] > 0 && d[1] > 0, RuntimeError, op, ": dilation should be greater than zero");
}

// ---- values (no autograd): raw kernels on contiguous buffers ----
// The whole batch goes through one GEMM per group: the columns of every sample side by side
// form a [C*kh*kw, N*L] matrix, and the output comes out as [O, N*L] ("rows" layout), which a
// strided copy turns into [N, O, L].

using kernel::raw_view;

// x [N, C, H, W] contiguous -> its window columns as one [C*kh*kw, N*L] matrix.
Tensor columns(const Tensor& x, const kernel::Window2d& win) {
  const int64_t N = x.size(0), K = x.size(1) * win.kh * win.kw, L = win.oh * win.ow;
  Tensor cols = detail::new_empty({K, N * L}, x.dtype(), x.device());
  kernel::im2col(cols, x, win, L, N * L);
  return cols;
}
// t [N, R, L...] (any strides, viewed as [N, R, L]) -> contiguous [R, N*L].
Tensor to_rows(const Tensor& t) {
  const int64_t N = t.size(0), R = t.size(1), L = N == 0 || R == 0 ? 0 : t.numel() / (N * R);
  Tensor tc = t.contiguous();
  Tensor out = detail::new_empty({R, N * L}, t.dtype(), t.device());
  kernel::copy(raw_view(out, {N, R, L}, {L, N * L, 1}, 0), raw_view(tc, {N, R, L}, {R * L, L, 1}, tc.storage_offset()));
  return out;
}
// rows [R, N*L] -> a new contiguous tensor of `sizes` ([N, R, ...] with L spatial elements).
Tensor from_rows(const Tensor& rows, IntArrayRef sizes) {
  const int64_t N = sizes[0], R = sizes[1], L = N == 0 || R == 0 ? 0 : compute_numel(sizes) / (N * R);
  Tensor out = detail::new_empty(sizes, rows.dtype(), rows.device());
  kernel::copy(raw_view(out, {N, R, L}, {R * L, L, 1}, 0), raw_view(rows, {N, R, L}, {L, N * L, 1}, 0));
  return out;
}
// x [N, C, H, W] contiguous, w [O, C/g, kh, kw] -> [N, O, oh, ow]
Tensor conv_values(const Tensor& x, const Tensor& w, const kernel::Window2d& win, int64_t groups) {
  const int64_t N = x.size(0), C = x.size(1), O = w.size(0), NL = N * win.oh * win.ow;
  const int64_t Kg = (C / groups) * win.kh * win.kw, Og = O / groups;
  Tensor cols = columns(x, win);
  Tensor wc = w.contiguous();
  Tensor out_rows = detail::new_empty({O, NL}, x.dtype(), x.device());
  for (int64_t g = 0; g < groups; ++g)
    kernel::gemm(raw_view(out_rows, {Og, NL}, {NL, 1}, g * Og * NL),
                 raw_view(wc, {Og, Kg}, {Kg, 1}, wc.storage_offset() + g * Og * Kg),
                 raw_view(cols, {Kg, NL}, {NL, 1}, g * Kg * NL));
  return from_rows(out_rows, {N, O, win.oh, win.ow});
}

// x_rows [Cin, N*H*W] (an input in rows layout), w [Cin, Cout/g, kh, kw] -> [N, Cout, OH, OW];
// win.oh/ow = H, W. Also the first-order input gradient of conv2d (its adjoint).
Tensor conv_transpose_rows(const Tensor& x_rows, int64_t N, const Tensor& w, const kernel::Window2d& win,
                           int64_t groups, int64_t OH, int64_t OW) {
  const int64_t Cin = x_rows.size(0), HW = win.oh * win.ow, NHW = N * HW;
  const int64_t Cin_g = Cin / groups, Cout_g = w.size(1), Cout = Cout_g * groups;
  const int64_t Kg = Cout_g * win.kh * win.kw;
  Tensor wc = w.contiguous();
  Tensor cols = detail::new_empty({Cout * win.kh * win.kw, NHW}, x_rows.dtype(), x_rows.device());
  for (int64_t g = 0; g < groups; ++g)  // cols_g [Kg, N*HW] = w_g^T [Kg, Cin_g] @ x_g [Cin_g, N*HW]
    kernel::gemm(raw_view(cols, {Kg, NHW}, {NHW, 1}, g * Kg * NHW),
                 raw_view(wc, {Kg, Cin_g}, {1, Kg}, wc.storage_offset() + g * Cin_g * Kg),
                 raw_view(x_rows, {Cin_g, NHW}, {NHW, 1}, g * Cin_g * NHW));
  Tensor out = zeros({N, Cout, OH, OW}, TensorOptions(x_rows.dtype()).device(x_rows.device()));
  kernel::col2im(out, cols, win, HW, NHW);
  return out;
}

// x [N, Cin, H, W] contiguous; see conv_transpose_rows.
Tensor conv_transpose_values(const Tensor& x, const Tensor& w, const kernel::Window2d& win, int64_t groups, int64_t OH,
                             int64_t OW) {
  return conv_transpose_rows(to_rows(x), x.size(0), w, win, groups, OH, OW);
}

// dW [rows_total, Kg] per group: rows_g [R_g, NL] @ cols_g^T [NL, Kg] (cols in [K, NL] layout).
Tensor weight_grad_values(const Tensor& rows, const Tensor& cols, int64_t groups, IntArrayRef w_sizes) {
  const int64_t R = rows.size(0), NL = rows.size(1), Rg = R / groups, Kg = cols.size(0) / groups;
  Tensor dw = detail::new_empty({R, Kg}, rows.dtype(), rows.device());
  for (int64_t g = 0; g < groups; ++g)
    kernel::gemm(raw_view(dw, {Rg, Kg}, {Kg, 1}, g * Rg * Kg), raw_view(rows, {Rg, NL}, {NL, 1}, g * Rg * NL),
                 raw_view(cols, {NL, Kg}, {1, NL}, g * Kg * NL));
  return dw.view(w_sizes);
}

Tensor add_bias(Tensor out, const Tensor& bias) {
  if (!bias.defined()) return out;
  Tensor b = bias.view({1, bias.numel(), 1, 1});
  kernel::binary(kernel::BinaryOp::Add, out, out, b);
  return out;
}

// The gradients as values, with the whole batch in one GEMM per group. Returns {} for the
// rare geometry it does not cover (transposed with output_padding >= stride).
TensorList fused_backward(const Tensor& g, const Tensor& x, const Tensor& w, Pair stride, Pair padding, Pair dilation,
                          bool transposed, int64_t groups, std::array<bool, 3> mask) {
  const Pair k{w.size(2), w.size(3)};
  TensorList r(3);
  if (!transposed) {
    auto win = window(k, stride, padding, dilation, g.size(2), g.size(3));
    Tensor g_rows = to_rows(g);  // [O, N*L]
    if (mask[0])                 // the adjoint: a transposed convolution of the gradient
      r[0] = conv_transpose_rows(g_rows, g.size(0), w, win, groups, x.size(2), x.size(3));
    if (mask[1]) r[1] = weight_grad_values(g_rows, columns(x, win), groups, w.sizes());
  } else {
    const int64_t oh = conv_out(g.size(2), k[0], stride[0], padding[0], dilation[0]);
    const int64_t ow = conv_out(g.size(3), k[1], stride[1], padding[1], dilation[1]);
    if (oh != x.size(2) || ow != x.size(3)) return {};
    auto win = window(k, stride, padding, dilation, oh, ow);
    if (mask[0]) r[0] = conv_values(g, w, win, groups);
    if (mask[1]) r[1] = weight_grad_values(to_rows(x), columns(g, win), groups, w.sizes());
  }
  if (mask[2]) r[2] = g.sum({0, 2, 3});
  return r;
}

void check_conv_dtypes(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  GRAFT_CHECK(is_floating_point(input.dtype()), TypeError, op, ": expected a floating point input, but got ",
              input.dtype());
  GRAFT_CHECK(input.dtype() == weight.dtype(), TypeError, op, ": input dtype ", input.dtype(), " and weight dtype ",
              weight.dtype(), " should be the same");
  GRAFT_CHECK(!bias.defined() || bias.dtype() == input.dtype(), TypeError, op, ": input dtype ", input.dtype(),
              " and bias dtype ", bias.dtype(), " should be the same");
}

// What the conv ops check before the convolution: defined tensors and their dtypes, in texts
// naming `op`.
void check_conv_tensors(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  detail::check_tensor(input, op);
  detail::check_tensor(weight, op, "weight");
  if (bias.defined()) detail::check_tensor(bias, op, "bias");
  check_conv_dtypes(op, input, weight, bias);
}

// A convolution's parameters as a 2-d convolution's: a 1-d convolution is one over a 1 x L
// image, its parameters led by the neutral value along the added dim.
struct ConvGeometry {
  Pair s, p, d, op;
  bool one_d = false;
};

// One parameter (a single value or one per spatial dim), as a pair, or PyTorch's error.
Pair conv_param(IntArrayRef v, int64_t dims, const char* name, int64_t neutral) {
  GRAFT_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == dims, RuntimeError, "expected ", name,
              " to be a single integer value or a list of ", dims,
              " values to match the convolution dimensions, but got ", name, "=", v);
  if (dims == 1) return {neutral, v[0]};
  return v.size() == 1 ? Pair{v[0], v[0]} : Pair{v[0], v[1]};
}

ConvGeometry conv_geometry(int64_t weight_dim, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                           IntArrayRef output_padding) {
  const int64_t dims = weight_dim - 2;
  return {conv_param(stride, dims, "stride", 1), conv_param(padding, dims, "padding", 0),
          conv_param(dilation, dims, "dilation", 1), conv_param(output_padding, dims, "output_padding", 0), dims == 1};
}

// "(h x w)" of a 2-d convolution's pair, "(w)" of a 1-d one's.
std::string per_channel(int64_t h, int64_t w, bool one_d) {
  return one_d ? "(" + std::to_string(w) + ")" : "(" + std::to_string(h) + " x " + std::to_string(w) + ")";
}

// The weight and bias against the input and groups, in PyTorch's order and texts.
void check_conv_shapes(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t groups, bool transposed) {
  GRAFT_CHECK(w.dim() == x.dim(), RuntimeError, "Expected ", w.dim(), "-dimensional input for ", w.dim(),
              "-dimensional weight ", w.sizes(), ", but got ", x.dim(), "-dimensional input of size ", x.sizes(),
              " instead");
  const int64_t C = x.size(1);
  GRAFT_CHECK(w.size(0) >= groups, RuntimeError, "Given groups=", groups, ", expected weight to be at least ", groups,
              " at dimension 0, but got weight of size ", w.sizes(), " instead");
  GRAFT_CHECK(w.size(0) % groups == 0, RuntimeError, "Given groups=", groups, ", expected weight to be divisible by ",
              groups, " at dimension 0, but got weight of size ", w.sizes(), " instead");
  if (!transposed) {
    GRAFT_CHECK(C == w.size(1) * groups, RuntimeError, "Given groups=", groups, ", weight of size ", w.sizes(),
                ", expected input", x.sizes(), " to have ", w.size(1) * groups, " channels, but got ", C,
                " channels instead");
  } else {
    GRAFT_CHECK(C == w.size(0), RuntimeError, "Given transposed=1, weight of size ", w.sizes(), ", expected input",
                x.sizes(), " to have ", w.size(0), " channels, but got ", C, " channels instead");
  }
  const int64_t out_ch = transposed ? w.size(1) * groups : w.size(0);
  GRAFT_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == out_ch), RuntimeError, "Given ",
              transposed ? "transposed=1, " : "", "weight of size ", w.sizes(),
              ", expected bias to be 1-dimensional with ", out_ch, " elements, but got bias of size ",
              bias.defined() ? bias.sizes() : IntArrayRef(), " instead");
}

// The window fits the padded input (a convolution), or the output is not empty (a transposed
// one, whose output_padding must also be below its stride or dilation); returns the output's
// [oh, ow] as a 2-d convolution's.
Pair conv_output_size(const Tensor& x4, const Tensor& w4, const ConvGeometry& g, bool transposed) {
  [[maybe_unused]] const auto [s, p, d, op, one_d] = g;
  if (!transposed) {
    const int64_t ph = checked_add(x4.size(2), checked_mul(2, p[0])),
                  pw = checked_add(x4.size(3), checked_mul(2, p[1]));
    const int64_t ekh = checked_add(checked_mul(d[0], w4.size(2) - 1), 1),
                  ekw = checked_add(checked_mul(d[1], w4.size(3) - 1), 1);
    GRAFT_CHECK(
        ph >= ekh && pw >= ekw, RuntimeError, "Calculated padded input size per channel: ", per_channel(ph, pw, one_d),
        ". Kernel size: ", per_channel(ekh, ekw, one_d), ". Kernel size can't be greater than actual input size");
    return {conv_out(x4.size(2), w4.size(2), s[0], p[0], d[0]), conv_out(x4.size(3), w4.size(3), s[1], p[1], d[1])};
  }
  GRAFT_CHECK((op[0] < s[0] || op[0] < d[0]) && (op[1] < s[1] || op[1] < d[1]), RuntimeError,
              "output padding must be smaller than either stride or dilation, but got output_padding_height: ", op[0],
              " output_padding_width: ", op[1], " stride_height: ", s[0], " stride_width: ", s[1],
              " dilation_height: ", d[0], " dilation_width: ", d[1]);
  auto out = [&](int i) {  // (in-1)s - 2p + d(k-1) + op + 1, checked
    return checked_add(checked_add(checked_sub(checked_mul(x4.size(2 + i) - 1, s[i]), checked_mul(2, p[i])),
                                   checked_mul(d[i], w4.size(2 + i) - 1)),
                       op[i] + 1);
  };
  const Pair hw{out(0), out(1)};
  GRAFT_CHECK(hw[0] > 0 && hw[1] > 0, RuntimeError,
              "Given input size per channel: ", per_channel(x4.size(2), x4.size(3), one_d),
              ". Calculated output size per channel: ", per_channel(hw[0], hw[1], one_d), ". Output size is too small");
  return hw;
}

// A 1-d convolution's tensor [N, C, L] as the [N, C, 1, L] image it computes on (same storage,
// no history: the forward's values only); a 2-d one's as it is.
Tensor as_image(const Tensor& t, bool one_d) {
  if (!one_d) return t;
  return kernel::raw_view(t, {t.size(0), t.size(1), 1, t.size(2)},
                          {t.stride(0), t.stride(1), t.size(2) * t.stride(2), t.stride(2)}, t.storage_offset());
}

// Batched 4-D view of a 3-D (unbatched) or 4-D input, or the PyTorch error.
Tensor batched4(const Tensor& input, const char* op) {
  GRAFT_CHECK(input.dim() == 3 || input.dim() == 4, RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to ",
              op, ", but got input of size: ", input.sizes());
  return input.dim() == 3 ? input.unsqueeze(0) : input;
}

// ---- im2col / col2im nodes ----

/// im2col's and col2im's window: kernel_size, dilation, padding, stride.
struct FoldWindow {
  Pair k{}, d{}, p{}, s{};
};

/// im2col's and col2im's window as pairs, checked with PyTorch's messages.
FoldWindow fold_window(const char* op, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                       IntArrayRef stride) {
  FoldWindow w{detail::pair_arg(kernel_size, op, "kernel_size"), detail::pair_arg(dilation, op, "dilation"),
               detail::pair_arg(padding, op, "padding"), detail::pair_arg(stride, op, "stride")};
  GRAFT_CHECK(w.k[0] > 0 && w.k[1] > 0, RuntimeError, op,
              ": kernel size should be greater than zero, but got kernel_size=(", w.k[0], ", ", w.k[1], ")");
  check_window_args(op, w.s, w.p, w.d);
  return w;
}

}  // namespace

namespace {

// Everything convolution checks, in PyTorch's order and texts; returns its geometry and the
// output's [oh, ow] as a 2-d convolution's.
std::pair<ConvGeometry, Pair> check_convolution(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                bool transposed, IntArrayRef output_padding, int64_t groups) {
  check_conv_tensors("convolution", input, weight, bias);
  GRAFT_CHECK(weight.dim() >= 3, RuntimeError, "weight should have at least three dimensions");
  GRAFT_CHECK(weight.dim() <= 4, NotImplementedError, "graft's convolution is 1-d or 2-d, but got ", weight.dim(),
              "-dimensional weight ", weight.sizes());
  const ConvGeometry g = conv_geometry(weight.dim(), stride, padding, dilation, output_padding);
  GRAFT_CHECK(g.p[0] >= 0 && g.p[1] >= 0, RuntimeError, "negative padding is not supported");
  GRAFT_CHECK(g.op[0] >= 0 && g.op[1] >= 0, RuntimeError, "negative output_padding is not supported");
  GRAFT_CHECK(g.s[0] > 0 && g.s[1] > 0, RuntimeError, "non-positive stride is not supported");
  GRAFT_CHECK(g.d[0] > 0 && g.d[1] > 0, RuntimeError, "dilation should be greater than zero");
  GRAFT_CHECK(groups > 0, RuntimeError, "non-positive groups is not supported");
  check_conv_shapes(input, weight, bias, groups, transposed);
  return {g, conv_output_size(as_image(input, g.one_d), as_image(weight, g.one_d), g, transposed)};
}

}  // namespace

Tensor detail::convolution_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                                   IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                   IntArrayRef output_padding, int64_t groups) {
  const auto [g, out_hw] =
      check_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  NoGradGuard values_only;  // the contiguous copies below are no part of the graph
  Tensor x = as_image(input, g.one_d).contiguous();
  Tensor w = as_image(weight, g.one_d);
  const Pair k{w.size(2), w.size(3)};
  Tensor out;
  if (!transposed) {
    out = conv_values(x, w, window(k, g.s, g.p, g.d, out_hw[0], out_hw[1]), groups);
  } else {
    auto win = window(k, g.s, g.p, g.d, x.size(2), x.size(3));
    out = conv_transpose_values(x, w, win, groups, out_hw[0], out_hw[1]);
  }
  out = add_bias(out, bias);
  if (!g.one_d) return out;
  return kernel::raw_view(out, {out.size(0), out.size(1), out.size(3)}, {out.stride(0), out.stride(1), out.stride(3)},
                          out.storage_offset());
}

namespace {

// The gradients of a 2-d convolution (4-d tensors), as derivatives::convolution_backward.
TensorList convolution_backward_2d(const Tensor& g, const Tensor& x, const Tensor& w, const ConvGeometry& geo,
                                   bool transposed, int64_t groups, std::array<bool, 3> mask) {
  [[maybe_unused]] const auto [stride, padding, dilation, output_padding, one_d] = geo;
  if (!GradMode::is_enabled()) {  // no double backward requested: the fused GEMM path
    TensorList fast =
        fused_backward(g.contiguous(), x.contiguous(), w, stride, padding, dilation, transposed, groups, mask);
    if (!fast.empty()) return fast;
  }
  TensorList r(3);
  const int64_t N = x.size(0);
  if (mask[0]) {
    // The input gradient is the adjoint convolution in the other direction. A convolution's
    // adjoint gets the output_padding that gives back the input's size; a transposed one's
    // adjoint, with output_padding >= stride (allowed when < dilation), has windows past the
    // input's last position, which correspond to no input element.
    std::array<int64_t, 2> adjoint_padding{0, 0};
    if (!transposed)
      for (int i = 0; i < 2; ++i)
        adjoint_padding[i] =
            x.size(2 + i) - ((g.size(2 + i) - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w.size(2 + i) - 1) + 1);
    r[0] = convolution(g, w, Tensor(), {stride[0], stride[1]}, {padding[0], padding[1]}, {dilation[0], dilation[1]},
                       !transposed, {adjoint_padding[0], adjoint_padding[1]}, groups);
    if (r[0].size(2) != x.size(2) || r[0].size(3) != x.size(3))
      r[0] = r[0].narrow(2, 0, x.size(2)).narrow(3, 0, x.size(3));
  }
  if (mask[1]) {
    // conv:       dW_g = sum_n g_g[n] @ im2col(x)_g[n]^T      ([Og, Cg*k])
    // transposed: dW_g = sum_n x_g[n] @ im2col(g)_g[n]^T      ([Cin_g, Cout_g*k])
    const Tensor& img = transposed ? g : x;   // the tensor whose windows are taken
    const Tensor& rows = transposed ? x : g;  // the tensor that multiplies them
    Tensor cols = im2col(img, {w.size(2), w.size(3)}, {dilation[0], dilation[1]}, {padding[0], padding[1]},
                         {stride[0], stride[1]});
    if (transposed && cols.size(2) != x.size(2) * x.size(3)) {  // same output_padding case as above
      const int64_t oh = conv_out(g.size(2), w.size(2), stride[0], padding[0], dilation[0]);
      const int64_t ow = conv_out(g.size(3), w.size(3), stride[1], padding[1], dilation[1]);
      cols = cols.reshape({N, cols.size(1), oh, ow}).narrow(2, 0, x.size(2)).narrow(3, 0, x.size(3));
      cols = cols.reshape({N, cols.size(1), x.size(2) * x.size(3)});
    }
    const int64_t spatial = rows.size(2) * rows.size(3);  // explicit: -1 is ambiguous when N == 0
    Tensor rows3 = rows.reshape({N, rows.size(1), spatial});
    const int64_t Rg = rows.size(1) / groups, Kg = cols.size(1) / groups;
    TensorList parts;
    for (int64_t gi = 0; gi < groups; ++gi)
      parts.push_back(bmm(rows3.narrow(1, gi * Rg, Rg), cols.narrow(1, gi * Kg, Kg).transpose(1, 2)).sum({0}));
    Tensor dw = groups == 1 ? parts[0] : cat(parts, 0);
    r[1] = dw.reshape(w.sizes());
  }
  if (mask[2]) r[2] = g.sum({0, 2, 3});
  return r;
}

}  // namespace

TensorList derivatives::convolution_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                             IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                             bool transposed, IntArrayRef output_padding, int64_t groups,
                                             std::array<bool, 3> output_mask) {
  const std::array<bool, 3>& mask = output_mask;
  const ConvGeometry geo = conv_geometry(weight.dim(), stride, padding, dilation, output_padding);
  if (!mask[0] && !mask[1]) {
    if (!mask[2]) return {Tensor(), Tensor(), Tensor()};
    return {Tensor(), Tensor(), geo.one_d ? grad.sum({0, 2}) : grad.sum({0, 2, 3})};
  }
  if (!geo.one_d) return convolution_backward_2d(grad, input, weight, geo, transposed, groups, mask);
  // a 1-d convolution's, as the 2-d one's over [N, C, 1, L] (in graft ops: double backward too)
  TensorList r = convolution_backward_2d(grad.unsqueeze(2), input.unsqueeze(2), weight.unsqueeze(2), geo, transposed,
                                         groups, mask);
  for (int i : {0, 1})
    if (r[i].defined()) r[i] = r[i].squeeze(2);
  return r;
}

Tensor detail::im2col_forward(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                              IntArrayRef stride) {
  detail::check_tensor(input, "im2col");
  GRAFT_CHECK(input.dim() == 3 || input.dim() == 4, RuntimeError,
              "Input Error: Only 3D or 4D input Tensors are supported (got ", input.dim(), "D)");
  GRAFT_CHECK(is_floating_point(input.dtype()), TypeError, "im2col: expected a floating point input, but got ",
              input.dtype());
  const FoldWindow w = fold_window("im2col", kernel_size, dilation, padding, stride);
  const auto& [k, d, p, s] = w;
  if (input.dim() == 3) {  // unbatched: the batched result's one sample (not a view: the op's own result)
    Tensor r = detail::im2col_forward(
        kernel::raw_view(input, {1, input.size(0), input.size(1), input.size(2)},
                         {0, input.stride(0), input.stride(1), input.stride(2)}, input.storage_offset()),
        kernel_size, dilation, padding, stride);
    return kernel::raw_view(r, {r.size(1), r.size(2)}, {r.stride(1), r.stride(2)}, 0);
  }
  Tensor x = input.contiguous();
  const int64_t H = x.size(2), W = x.size(3);
  const int64_t oh = conv_out(H, k[0], s[0], p[0], d[0]), ow = conv_out(W, k[1], s[1], p[1], d[1]);
  GRAFT_CHECK(oh >= 1 && ow >= 1, RuntimeError, "Given input with spatial size (", H, ", ", W, "), kernel_size=(", k[0],
              ", ", k[1], "), dilation=(", d[0], ", ", d[1], "), padding=(", p[0], ", ", p[1],
              "), calculated shape of the array of sliding blocks as (", oh, ", ", ow,
              "), but its components must be at least one.");
  const int64_t rows = checked_mul(checked_mul(x.size(1), k[0]), k[1]);
  Tensor out = detail::new_empty({x.size(0), rows, checked_mul(oh, ow)}, x.dtype(), x.device());
  kernel::im2col(out, x, window(k, s, p, d, oh, ow), rows * oh * ow, oh * ow);
  return out;
}

Tensor detail::col2im_forward(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
                              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  detail::check_tensor(input, "col2im");
  GRAFT_CHECK(input.dim() == 2 || input.dim() == 3, RuntimeError,
              "Expected 2D (unbatched) or 3D (batched) input to col2im, but got input of size: ", input.sizes());
  GRAFT_CHECK(is_floating_point(input.dtype()), TypeError, "col2im: expected a floating point input, but got ",
              input.dtype());
  const Pair os = detail::pair_arg(output_size, "col2im", "output_size");
  const FoldWindow w = fold_window("col2im", kernel_size, dilation, padding, stride);
  const auto& [k, d, p, s] = w;
  if (input.dim() == 2) {  // unbatched, as im2col's
    Tensor r = detail::col2im_forward(kernel::raw_view(input, {1, input.size(0), input.size(1)},
                                                       {0, input.stride(0), input.stride(1)}, input.storage_offset()),
                                      output_size, kernel_size, dilation, padding, stride);
    return kernel::raw_view(r, {r.size(1), r.size(2), r.size(3)}, {r.stride(1), r.stride(2), r.stride(3)}, 0);
  }
  const int64_t kk = checked_mul(k[0], k[1]);  // a wrapped product was a modulo by zero (SIGFPE)
  GRAFT_CHECK(input.size(1) % kk == 0, RuntimeError,
              "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
              "input.size(1)=",
              input.size(1), " and kernel_size=(", k[0], ", ", k[1], ")");
  const int64_t oh = conv_out(os[0], k[0], s[0], p[0], d[0]), ow = conv_out(os[1], k[1], s[1], p[1], d[1]);
  GRAFT_CHECK(oh >= 1 && ow >= 1 && input.size(2) == checked_mul(oh, ow), RuntimeError, "Given output_size=(", os[0],
              ", ", os[1], "), kernel_size=(", k[0], ", ", k[1], "), dilation=(", d[0], ", ", d[1], "), padding=(",
              p[0], ", ", p[1], "), stride=(", s[0], ", ", s[1],
              "), expected size of input's dimension 2 to match the calculated number of sliding blocks ", oh, " * ",
              ow, " = ", oh * ow, ", but got input.size(2)=", input.size(2), ".");
  Tensor cols = input.contiguous();
  Tensor out =
      zeros({input.size(0), input.size(1) / kk, os[0], os[1]}, TensorOptions(input.dtype()).device(input.device()));
  kernel::col2im(out, cols, window(k, s, p, d, oh, ow), input.size(1) * oh * ow, oh * ow);
  return out;
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  alloc::MemoryOpScope mem_scope("conv2d");
  check_conv_tensors("conv2d", input, weight, bias);
  Tensor out = convolution(batched4(input, "conv2d"), weight, bias, stride, padding, dilation, false, {0}, groups);
  return input.dim() == 3 ? out.squeeze(0) : out;
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  alloc::MemoryOpScope mem_scope("conv1d");
  check_conv_tensors("conv1d", input, weight, bias);
  GRAFT_CHECK(input.dim() == 2 || input.dim() == 3, RuntimeError,
              "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: ", input.sizes());
  const Tensor x = input.dim() == 2 ? input.unsqueeze(0) : input;
  Tensor out = convolution(x, weight, bias, stride, padding, dilation, false, {0}, groups);
  return input.dim() == 2 ? out.squeeze(0) : out;
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  alloc::MemoryOpScope mem_scope("conv_transpose2d");
  check_conv_tensors("conv_transpose2d", input, weight, bias);
  Tensor x = batched4(input, "conv_transpose2d");
  Tensor out = convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups);
  return input.dim() == 3 ? out.squeeze(0) : out;
}

namespace {
// conv1d/conv2d with padding "valid" or "same" (stride 1 only; the output keeps the input's size):
// the symmetric part of 'same' goes to the convolution, an odd remainder is padded onto the
// input's end first (PyTorch's _convolution_mode).
Tensor conv_with_padding_mode(size_t dims, const Tensor& input, const Tensor& weight, const Tensor& bias,
                              IntArrayRef stride, std::string_view padding, IntArrayRef dilation, int64_t groups) {
  GRAFT_CHECK(padding == "valid" || padding == "same", RuntimeError, "Invalid padding string: '", padding, "'");
  std::vector<int64_t> symmetric(dims, 0), extra(dims, 0);
  if (padding == "same") {
    for (int64_t s : stride)
      GRAFT_CHECK(s == 1, RuntimeError, "padding='same' is not supported for strided convolutions");
    const bool kernel_known = weight.defined() && weight.dim() == static_cast<int64_t>(dims) + 2;
    for (size_t d = 0; d < dims; ++d) {
      const int64_t k = kernel_known ? weight.size(static_cast<int64_t>(d) + 2) : 1;  // the conv reports a bad weight
      const int64_t dil = dilation.size() == 1 ? dilation[0] : (d < dilation.size() ? dilation[d] : 1);
      const int64_t total = checked_mul(dil, k - 1);
      symmetric[d] = total / 2;
      extra[d] = total % 2;
    }
  }
  Tensor x = input;
  if (extra != std::vector<int64_t>(dims, 0)) {
    std::vector<int64_t> pads;  // graft::pad takes the last dim first
    for (size_t d = dims; d-- > 0;) {
      pads.push_back(0);
      pads.push_back(extra[d]);
    }
    x = pad(input, pads, 0.0);
  }
  return dims == 1 ? conv1d(x, weight, bias, stride, symmetric, dilation, groups)
                   : conv2d(x, weight, bias, stride, symmetric, dilation, groups);
}
}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_with_padding_mode(2, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_with_padding_mode(1, input, weight, bias, stride, padding, dilation, groups);
}

}  // namespace graft
