#pragma once
/// The device seam. Ops never call a backend directly: they validate, promote and allocate
/// their outputs (on their inputs' device), then call the functions below, which look up the
/// output's device in one table of kernels per DeviceType. A backend is a folder under
/// src/backend/ that fills a KernelTable: `cpu` computes values, `meta` only what a device
/// would allocate (its kernels write nothing; outputs already carry their metadata).
/// Kernels compute values only: no autograd, no argument checks beyond internal asserts.
/// Design: docs/notes/devices.md.
#include <cstdint>
#include <random>
#include <utility>

#include "graft/core/scalar.h"
#include "graft/core/tensor.h"

namespace graft::kernel {

/// The hand-written unary kernels; the generated ops (exp, floor, isnan, ...) are reached by
/// their GeneratedKernel number instead (generated_kernel_ids.h, from src/ops/ops.yaml).
enum class UnaryOp {
  Gelu,
  GeluTanh,
  Clamp,
  Threshold,  ///< x <= p0 ? p1 : x (PyTorch's threshold; p0 and p1 converted to the dtype first)
  BitNot      ///< ~x on integers, not on bool
};
/// The hand-written binary kernels (arithmetic); the generated ones (maximum, eq, ...) are
/// reached by their GeneratedBinaryKernel number. ThresholdBackward is b <= alpha ? 0 : a (a the
/// output's gradient, b threshold's input, alpha the threshold: relu's and threshold's backward).
enum class BinaryOp { Add, Sub, Mul, Div, Pow, ThresholdBackward };
/// Integer-style divisions: a // b (floor), trunc(a / b), Python's a % b.
enum class DivMode { Floor, Remainder, Trunc };
enum class ReduceOp { Sum, Prod, Max, Min, LogSumExp };
/// The running reductions along a dim (cumsum, cumprod, cummax, cummin, logcumsumexp).
enum class ScanOp { Sum, Prod, Max, Min, LogSumExp };

/// The distributions of the random fills (Tensor.uniform_, normal_, bernoulli_, ...): each
/// element of the tensor, in its logical (row-major) order, gets one draw from the generator,
/// computed in double and converted to the element's dtype (so every dtype gets the same draws
/// for the same seed).
enum class RandomFill {
  Uniform,      ///< [a, b)
  Normal,       ///< mean a, standard deviation b
  Bernoulli,    ///< 1 with probability a, else 0
  Integers,     ///< integers in [from, last]
  Exponential,  ///< rate a
  Geometric,    ///< trials until the first success of probability a (1, 2, ...)
  LogNormal,    ///< exp of a normal of mean a, standard deviation b
  Cauchy,       ///< median a, half width b
  TruncNormal   ///< Normal, redrawn outside [lo, hi] (at most 1000 draws, then clamped)
};
/// A random fill's parameters (which it reads: RandomFill).
struct RandomParams {
  double a = 0, b = 0, lo = 0, hi = 0;
  int64_t from = 0, last = 0;
};
/// Geometry of a 2-D sliding window (convolution, unfold/fold, pooling): kernel, stride,
/// padding, dilation, and the output grid it produces.
struct Window2d {
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t oh, ow;  ///< output rows and columns
};

/// out = f(a) for a generated op's kernel (`a` already converted as the op's family says);
/// `args` holds the op's non-tensor arguments in declaration order (the activation family's
/// negative_slope, beta, ...), nullptr for ops without any.
using UnaryKernelFn = void (*)(const Tensor& out, const Tensor& a, const double* args);
/// out = f(a, b), broadcast, for a generated binary op's kernel (a and b of the compute dtype).
using BinaryKernelFn = void (*)(const Tensor& out, const Tensor& a, const Tensor& b);

/// Calls X(name) for every kernel of a KernelTable, in its order: a backend fills its table with
/// `{.name = "...", GRAFT_FOR_EACH_KERNEL(GRAFT_KERNEL_ENTRY) .generated = ..., .generated_binary = ...}`, taking the
/// functions of those names from its own namespace.
// clang-format off
#define GRAFT_FOR_EACH_KERNEL(X)                                                                             \
  X(unary) X(binary) X(binary_scalar) X(rounding_div) X(where) X(copy) X(fill) X(reduce) X(arg_reduce) X(var) \
  X(gemm) X(index_select) X(index_add) X(gather) X(scatter_add) X(im2col) X(col2im) X(max_pool2d)         \
  X(random_fill) X(multinomial) X(sort) X(scan) X(search_sorted) X(triangle) X(vector_norm)                 \
  X(lu_factor) X(lu_solve) X(cholesky) X(triangular_solve) X(qr) X(svd) X(eigh)
// clang-format on
#define GRAFT_KERNEL_ENTRY(name) .name = &name,

/// One backend's kernels. The semantics of each entry are those of the dispatch function of
/// the same name below.
struct KernelTable {
  const char* name;  ///< PyTorch's backend name: "CPU", "Meta"
  void (*unary)(UnaryOp op, const Tensor& out, const Tensor& a, double p0, double p1);
  void (*binary)(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha);
  void (*binary_scalar)(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& s, const Scalar& alpha,
                        bool reverse);
  bool (*rounding_div)(DivMode mode, const Tensor& out, const Tensor& a, const Tensor& b);
  void (*where)(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
  void (*copy)(const Tensor& dst, const Tensor& src);
  void (*fill)(const Tensor& dst, const Scalar& v);
  void (*reduce)(ReduceOp op, const Tensor& out, const Tensor& a, uint64_t mask);
  void (*arg_reduce)(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& a, int64_t dim);
  void (*var)(const Tensor& out, const Tensor& a, uint64_t mask, double correction, bool sqrt_result);
  void (*gemm)(const Tensor& c, const Tensor& a, const Tensor& b);
  void (*index_select)(const Tensor& out, const Tensor& a, int64_t dim, const Tensor& index);
  void (*index_add)(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& source);
  void (*gather)(const Tensor& out, const Tensor& a, int64_t dim, const Tensor& index);
  void (*scatter_add)(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
  void (*im2col)(const Tensor& cols, const Tensor& x, const Window2d& w, int64_t ns, int64_t rs);
  void (*col2im)(const Tensor& x, const Tensor& cols, const Window2d& w, int64_t ns, int64_t rs);
  void (*max_pool2d)(const Tensor& out, const Tensor& indices, const Tensor& x, const Window2d& w);
  void (*random_fill)(RandomFill kind, const Tensor& self, const RandomParams& p, std::mt19937_64& gen);
  void (*multinomial)(const Tensor& out, const Tensor& probs, bool replacement, std::mt19937_64& gen);
  void (*sort)(const Tensor& values, const Tensor& indices, const Tensor& a, int64_t dim, bool descending);
  void (*scan)(ScanOp op, const Tensor& out, const Tensor& indices, const Tensor& a, int64_t dim);
  void (*search_sorted)(const Tensor& out, const Tensor& sorted, const Tensor& values, bool right);
  void (*triangle)(const Tensor& out, const Tensor& a, int64_t diagonal, bool lower);
  void (*vector_norm)(const Tensor& out, const Tensor& a, uint64_t mask, double ord);
  void (*lu_factor)(const Tensor& lu, const Tensor& pivots, const Tensor& info);
  void (*lu_solve)(const Tensor& b, const Tensor& lu, const Tensor& pivots, bool transpose);
  void (*cholesky)(const Tensor& a, const Tensor& info, bool upper);
  void (*triangular_solve)(const Tensor& b, const Tensor& a, bool upper, bool left, bool unitriangular);
  void (*qr)(const Tensor& q, const Tensor& r, const Tensor& a);
  void (*svd)(const Tensor& u, const Tensor& s, const Tensor& vh, const Tensor& a, const Tensor& info);
  void (*eigh)(const Tensor& w, const Tensor& v, const Tensor& info, bool upper, bool vectors);
  const UnaryKernelFn* generated;          ///< indexed by GeneratedKernel
  const BinaryKernelFn* generated_binary;  ///< indexed by GeneratedBinaryKernel
};

/// Each device type's table (null: none in this build), filled at compile time
/// (src/backend/dispatch.cpp).
extern const KernelTable* const kKernelTables[kNumDeviceTypes];
/// Throws RuntimeError for a device this build has no kernels for.
[[noreturn]] void no_kernels_for(Device device);
/// The kernels of `device`'s type. Throws RuntimeError for a device this build has none for.
[[gnu::always_inline]] inline const KernelTable& kernels_for(Device device) {
  const KernelTable* t = kKernelTables[static_cast<int>(device.type())];
  if (!t) [[unlikely]]
    no_kernels_for(device);
  return *t;
}

/// Throws PyTorch's NotImplementedError for an op that cannot run on `device` (data-dependent
/// ops on meta): "Could not run 'aten::<op>' with arguments from the '<Backend>' backend. ...".
[[noreturn]] void not_implemented_for(const char* aten_op, Device device);

/// Throws PyTorch's RuntimeError unless `b` is on `a`'s device: "Expected all tensors to be on
/// the same device, but found at least two devices, meta and cpu!".
void check_same_device(const Tensor& a, const Tensor& b);
/// Throws unless dst's kernel can copy from src's device: anything may be copied onto meta
/// (nothing is written); out of meta raises PyTorch's "Cannot copy out of meta tensor; no data!".
void check_copy_devices(const Tensor& dst, const Tensor& src);
[[gnu::always_inline]] inline void same_device(const Tensor& a, const Tensor& b) {
  if (b.defined() && a.device() != b.device()) check_same_device(a, b);
}
/// The kernels of `out`'s device, after checking that every defined input is on that device.
template <class... Inputs>
[[gnu::always_inline]] inline const KernelTable& kernels_on(const Tensor& out, const Inputs&... inputs) {
  (same_device(out, inputs), ...);
  return kernels_for(out.device());
}

// ---- 16-bit floats: computed in float32 ----
// The kernels compute float16 and bfloat16 tensors in float32, as PyTorch's CPU kernels do (its
// "opmath" type): the dispatch below hands a kernel float32 copies of its 16-bit tensors and
// rounds the results back once (src/backend/reduced_precision.cpp). The copies come from the
// tensors' own device's allocator, so the meta device sees the same memory as a real run. copy
// and fill convert to and from 16 bits themselves.

/// True when a defined tensor among `ts` is float16 or bfloat16.
template <class... Ts>
[[gnu::always_inline]] inline bool any_reduced(const Ts&... ts) {
  return ((ts.defined() && is_reduced_floating_point(ts.dtype())) || ...);
}
/// t itself, or a contiguous float32 copy of it (scratch on t's device) when t is float16 or
/// bfloat16.
Tensor widen(const Tensor& t);
/// Writes `wide` (a widen() of t) back into t, rounding to t's dtype; nothing when they are one.
void narrow_into(const Tensor& t, const Tensor& wide);
/// Runs `k(widen(outs)..., widen(ins)...)`-style kernels: calls `call` with every tensor of
/// `ts` widened, then narrows the first `n_outputs` of them back.
template <size_t n_outputs, class Call, class... Ts>
void widened(Call&& call, const Ts&... ts) {
  const Tensor wide[] = {widen(ts)...};
  [&]<size_t... I>(std::index_sequence<I...>) { call(wide[I]...); }
  (std::index_sequence_for<Ts...>{});
  const Tensor* orig[] = {&ts...};
  for (size_t i = 0; i < n_outputs; ++i) narrow_into(*orig[i], wide[i]);
}

// ---- the dispatch: the output's device picks the table; the inputs must be on it too (copy
// alone crosses devices)

/// out = op(a); `a` has out's dtype. p0/p1: Clamp's (min, max; NaN = none).
inline void unary(UnaryOp op, const Tensor& out, const Tensor& a, double p0 = 0, double p1 = 0) {
  if (any_reduced(out, a)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x) { kernel::unary(op, o, x, p0, p1); }, out, a);
  kernels_for(out.device()).unary(op, out, a, p0, p1);
}
/// out = a op b (Add/Sub: a op alpha*b), broadcast; a and b have the compute dtype.
inline void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1) {
  if (any_reduced(out, a, b)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x, const Tensor& y) { kernel::binary(op, o, x, y, alpha); },
                      out, a, b);
  kernels_on(out, a, b).binary(op, out, a, b, alpha);
}
/// out = a op s, with s converted to a's dtype; `reverse` computes s op a.
inline void binary_scalar(BinaryOp op, const Tensor& out, const Tensor& a, const Scalar& s, const Scalar& alpha = 1,
                          bool reverse = false) {
  if (any_reduced(out, a)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x) { kernel::binary_scalar(op, o, x, s, alpha, reverse); },
                      out, a);
  kernels_on(out, a).binary_scalar(op, out, a, s, alpha, reverse);
}
/// out = a // b, a % b or trunc(a / b), broadcast, a and b of out's dtype. Returns true when an
/// integer division by zero happened (the caller raises).
inline bool rounding_div(DivMode mode, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (any_reduced(out, a, b)) [[unlikely]] {
    bool zero_division = false;
    widened<1>(
        [&](const Tensor& o, const Tensor& x, const Tensor& y) { zero_division = kernel::rounding_div(mode, o, x, y); },
        out, a, b);
    return zero_division;
  }
  return kernels_on(out, a, b).rounding_div(mode, out, a, b);
}
/// out = cond ? a : b (broadcast; cond bool, a and b out's dtype).
inline void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (any_reduced(out, cond, a, b)) [[unlikely]]
    return widened<1>(
        [&](const Tensor& o, const Tensor& c, const Tensor& x, const Tensor& y) { kernel::where(o, c, x, y); }, out,
        cond, a, b);
  kernels_on(out, cond, a, b).where(out, cond, a, b);
}
/// dst = src broadcast to dst's shape, converting dtype. dst may be any strided tensor. Both on
/// one device (copies between devices are Tensor::to's business).
inline void copy(const Tensor& dst, const Tensor& src) {
  if (src.device() != dst.device()) check_copy_devices(dst, src);
  kernels_for(dst.device()).copy(dst, src);
}
/// Every element of dst = v.
inline void fill(const Tensor& dst, const Scalar& v) { kernels_for(dst.device()).fill(dst, v); }
/// Reduces over the dims in `mask` into `out` (shape with those dims removed or kept as 1).
inline void reduce(ReduceOp op, const Tensor& out, const Tensor& a, uint64_t mask) {
  if (any_reduced(out, a)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x) { kernel::reduce(op, o, x, mask); }, out, a);
  kernels_for(a.device()).reduce(op, out, a, mask);
}
/// Max/min over one dim: values (may be undefined) and int64 indices (first occurrence).
inline void arg_reduce(bool is_max, const Tensor& values, const Tensor& indices, const Tensor& a, int64_t dim) {
  if (any_reduced(values, indices, a)) [[unlikely]]
    return widened<1>(
        [&](const Tensor& v, const Tensor& i, const Tensor& x) { kernel::arg_reduce(is_max, v, i, x, dim); }, values,
        indices, a);
  kernels_for(a.device()).arg_reduce(is_max, values, indices, a, dim);
}
/// Variance over `mask` with the given correction (its square root with sqrt_result).
inline void var(const Tensor& out, const Tensor& a, uint64_t mask, double correction, bool sqrt_result = false) {
  if (any_reduced(out, a)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x) { kernel::var(o, x, mask, correction, sqrt_result); }, out,
                      a);
  kernels_for(a.device()).var(out, a, mask, correction, sqrt_result);
}
/// c = a @ b for 2-D (or batched 3-D) tensors of float32/float64/integral dtype; c needs unit
/// column stride only (rows and batches may be strided), a and b any strides.
inline void gemm(const Tensor& c, const Tensor& a, const Tensor& b) {
  same_device(a, b);
  same_device(c, a);
  if (any_reduced(c, a, b)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x, const Tensor& y) { kernel::gemm(o, x, y); }, c, a, b);
  kernels_for(c.device()).gemm(c, a, b);
}
inline void index_select(const Tensor& out, const Tensor& a, int64_t dim, const Tensor& index) {
  if (any_reduced(out, a, index)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x, const Tensor& i) { kernel::index_select(o, x, dim, i); },
                      out, a, index);
  kernels_on(out, a, index).index_select(out, a, dim, index);
}
/// out (already a copy of self) += source along dim at index.
inline void index_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& source) {
  if (any_reduced(out, index, source)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& i, const Tensor& x) { kernel::index_add(o, dim, i, x); }, out,
                      index, source);
  kernels_on(out, index, source).index_add(out, dim, index, source);
}
inline void gather(const Tensor& out, const Tensor& a, int64_t dim, const Tensor& index) {
  if (any_reduced(out, a, index)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x, const Tensor& i) { kernel::gather(o, x, dim, i); }, out, a,
                      index);
  kernels_on(out, a, index).gather(out, a, dim, index);
}
/// out (already a copy of self) scatter-adds src at index along dim.
inline void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  if (any_reduced(out, index, src)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& i, const Tensor& x) { kernel::scatter_add(o, dim, i, x); },
                      out, index, src);
  kernels_on(out, index, src).scatter_add(out, dim, index, src);
}
/// im2col: x [N, C, H, W] (contiguous) -> the columns of every window position, zero where the
/// window reads padding. Element (n, row, l) of the columns (row = (c*kh + i)*kw + j,
/// l = window position) is written at cols.data + n*ns + row*rs + l: ns = rows*L, rs = L gives
/// [N, C*kh*kw, L]; ns = L, rs = N*L gives one [C*kh*kw, N*L] matrix for a single GEMM.
inline void im2col(const Tensor& cols, const Tensor& x, const Window2d& w, int64_t ns, int64_t rs) {
  if (any_reduced(cols, x)) [[unlikely]]
    return widened<1>([&](const Tensor& c, const Tensor& y) { kernel::im2col(c, y, w, ns, rs); }, cols, x);
  kernels_on(cols, x).im2col(cols, x, w, ns, rs);
}
/// col2im: x [N, C, H, W] (contiguous, zero-filled by the caller) += every column scattered
/// back to the input positions it was read from (the adjoint of im2col; same layout args).
inline void col2im(const Tensor& x, const Tensor& cols, const Window2d& w, int64_t ns, int64_t rs) {
  if (any_reduced(x, cols)) [[unlikely]]
    return widened<1>([&](const Tensor& y, const Tensor& c) { kernel::col2im(y, c, w, ns, rs); }, x, cols);
  kernels_on(x, cols).col2im(x, cols, w, ns, rs);
}
/// Max pooling over planes: x [P, H, W] (contiguous) -> out [P, oh, ow] and int64 indices
/// (flat h*W + w of the max in each plane; NaN wins, then the first maximum).
inline void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& x, const Window2d& w) {
  if (any_reduced(out, indices, x)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& i, const Tensor& y) { kernel::max_pool2d(o, i, y, w); }, out,
                      indices, x);
  kernels_on(out, x).max_pool2d(out, indices, x, w);
}
/// Every element of self drawn from `kind` with `p` (RandomFill), from `gen`, which the caller
/// holds locked; self may be any strided tensor without internal overlap.
inline void random_fill(RandomFill kind, const Tensor& self, const RandomParams& p, std::mt19937_64& gen) {
  if (any_reduced(self)) [[unlikely]]
    return widened<1>([&](const Tensor& o) { kernel::random_fill(kind, o, p, gen); }, self);
  kernels_for(self.device()).random_fill(kind, self, p, gen);
}
/// out [rows, n] (int64, contiguous) = n categories drawn from each row of probs [rows, C]
/// (contiguous, floating, non-negative weights with a positive sum), with or without
/// replacement, from `gen`, which the caller holds locked.
inline void multinomial(const Tensor& out, const Tensor& probs, bool replacement, std::mt19937_64& gen) {
  if (any_reduced(out, probs)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x) { kernel::multinomial(o, x, replacement, gen); }, out,
                      probs);
  kernels_on(out, probs).multinomial(out, probs, replacement, gen);
}
/// Each lane of `a` along dim sorted (ascending or descending; NaN counts as the largest
/// value; ties keep their order), its first values.size(dim) elements written to values (a's
/// dtype) and their positions in the lane to indices (int64); both contiguous, of a's shape but
/// for dim: sort (the whole lane) and topk (its first k).
inline void sort(const Tensor& values, const Tensor& indices, const Tensor& a, int64_t dim, bool descending) {
  if (any_reduced(values, indices, a)) [[unlikely]]
    return widened<1>(
        [&](const Tensor& v, const Tensor& i, const Tensor& x) { kernel::sort(v, i, x, dim, descending); }, values,
        indices, a);
  kernels_on(values, indices, a).sort(values, indices, a, dim, descending);
}
/// out (contiguous, a's shape and dtype) = the running `op` of each lane of a along dim: sums
/// and products accumulated in double (floating) or int64; Max/Min also write, to indices
/// (int64, contiguous, out's shape; undefined for the others), the position of the running
/// extreme (ties and NaN as cummax: the later tie, the latest NaN, which nothing replaces); LogSumExp for
/// floating a, each step a stable log-add-exp.
inline void scan(ScanOp op, const Tensor& out, const Tensor& indices, const Tensor& a, int64_t dim) {
  if (any_reduced(out, a)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x) { kernel::scan(op, o, indices, x, dim); }, out, a);
  kernels_on(out, a).scan(op, out, indices, a, dim);
}
/// out [B, m] (int64, contiguous) = the insertion point of each of values [B, m] in the
/// ascending lane sorted [B, n] of its row (B may be 1 for every row: sorted is then shared):
/// the first position whose element is >= the value (right: >); a NaN value goes last. sorted
/// and values contiguous, of one dtype (not 16-bit: the caller widens them, which is exact).
inline void search_sorted(const Tensor& out, const Tensor& sorted, const Tensor& values, bool right) {
  kernels_on(out, sorted, values).search_sorted(out, sorted, values, right);
}
/// out = a over its last two dims with the elements above the `diagonal`-th diagonal (lower:
/// tril) or below it (upper: triu) zeroed; out may be a itself (in place), any strides.
inline void triangle(const Tensor& out, const Tensor& a, int64_t diagonal, bool lower) {
  if (any_reduced(out, a)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x) { kernel::triangle(o, x, diagonal, lower); }, out, a);
  kernels_on(out, a).triangle(out, a, diagonal, lower);
}
/// out = the ord-norm of a over the dims in `mask` (a floating, out of its dtype; accumulated in
/// double): (sum |x|^ord)^(1/ord); ord inf / -inf the largest / smallest |x|; ord 0 the count of
/// nonzero elements; NaN anywhere gives NaN.
inline void vector_norm(const Tensor& out, const Tensor& a, uint64_t mask, double ord) {
  if (any_reduced(out, a)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x) { kernel::vector_norm(o, x, mask, ord); }, out, a);
  kernels_on(out, a).vector_norm(out, a, mask, ord);
}
// ---- LAPACK (torch.linalg). Every matrix operand is a batch of column-major matrices: its last
// two dims, transposed, are contiguous, and its batch dims contiguous over them (what
// `empty({..., cols, rows}).mT()` gives, PyTorch's layout for these results). Float32 and float64
// only (the ops refuse the rest). `info` is int32, one per matrix: LAPACK's info for it.

/// lu [..., m, n] factored in place as P L U (getrf, partial pivoting): L's unit lower triangle
/// and U's upper one; pivots [..., min(m, n)] (int32, contiguous) 1-based row swaps; info > 0
/// names the first zero of U's diagonal (1-based).
inline void lu_factor(const Tensor& lu, const Tensor& pivots, const Tensor& info) {
  kernels_on(lu, pivots).lu_factor(lu, pivots, info);
}
/// b [..., n, k] overwritten with A^-1 b (A^-T b when transpose) for lu_factor's lu and pivots
/// [..., n, n] of A, batch for batch (getrs).
inline void lu_solve(const Tensor& b, const Tensor& lu, const Tensor& pivots, bool transpose) {
  kernels_on(b, lu, pivots).lu_solve(b, lu, pivots, transpose);
}
/// a [..., n, n] overwritten by its Cholesky factor L (U = L^T when upper), read from that
/// triangle only, the other one zeroed (potrf); info > 0 the order of the first leading minor
/// that is not positive-definite.
inline void cholesky(const Tensor& a, const Tensor& info, bool upper) { kernels_on(a, info).cholesky(a, info, upper); }
/// b overwritten with the solution X of A X = b (left) or X A = b (right) for the triangle of a
/// (upper or lower; unitriangular: its diagonal taken as ones), batch for batch (trsm).
inline void triangular_solve(const Tensor& b, const Tensor& a, bool upper, bool left, bool unitriangular) {
  kernels_on(b, a).triangular_solve(b, a, upper, left, unitriangular);
}
/// The QR factorization of a [..., m, n] (destroyed): r [..., rows, n] (rows: min(m, n), or m)
/// the upper triangle R, q [..., m, cols] (cols min(m, n) or m; numel 0: Q not wanted) Q's first
/// columns (geqrf, orgqr).
inline void qr(const Tensor& q, const Tensor& r, const Tensor& a) { kernels_on(r, a).qr(q, r, a); }
/// The singular values s [..., k] (contiguous, descending, k = min(m, n)) of a [..., m, n]
/// (destroyed) and, when u has elements, the singular vectors: u [..., m, k or m], vh
/// [..., k or n, n] (gesdd); info > 0: it did not converge.
inline void svd(const Tensor& u, const Tensor& s, const Tensor& vh, const Tensor& a, const Tensor& info) {
  kernels_on(s, a).svd(u, s, vh, a, info);
}
/// The eigenvalues w [..., n] (contiguous, ascending) of the symmetric matrices v [..., n, n]
/// read from their lower (upper) triangle, v overwritten by the eigenvectors when `vectors`
/// (syevd); info > 0: it did not converge.
inline void eigh(const Tensor& w, const Tensor& v, const Tensor& info, bool upper, bool vectors) {
  kernels_on(w, v).eigh(w, v, info, upper, vectors);
}

/// out = the generated op number `k` of a (see generated_kernel_ids.h), with the op's
/// non-tensor arguments `args` (nullptr when it has none).
inline void generated(int k, const Tensor& out, const Tensor& a, const double* args = nullptr) {
  if (any_reduced(out, a)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x) { kernel::generated(k, o, x, args); }, out, a);
  kernels_for(out.device()).generated[k](out, a, args);
}
/// out = the generated binary op number `k` of a and b (see generated_kernel_ids.h).
inline void generated_binary(int k, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (any_reduced(out, a, b)) [[unlikely]]
    return widened<1>([&](const Tensor& o, const Tensor& x, const Tensor& y) { kernel::generated_binary(k, o, x, y); },
                      out, a, b);
  kernels_on(out, a, b).generated_binary[k](out, a, b);
}

/// A view of t's storage with the given geometry and no autograd history (kernels only).
inline Tensor raw_view(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return Tensor(make_intrusive<TensorImpl>(t.impl()->storage(), t.dtype(), sizes, strides, offset));
}
/// raw_view of t.select(dim, i).
Tensor select_raw(const Tensor& t, int64_t dim, int64_t i);

}  // namespace graft::kernel
