// Matrix ops: the forwards of mm, bmm and dot (GEMM kernels; declared in src/ops/ops.yaml),
// matmul and linear (composed), tril and triu.
#include "graft/ops/autocast.h"
#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {

namespace {

void check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  GRAFT_CHECK(a.dtype() == b.dtype(), RuntimeError, op,
              ": expected mat1 and mat2 to have the same dtype, but got: ", dtype_cpp_name(a.dtype()),
              " != ", dtype_cpp_name(b.dtype()));
  GRAFT_CHECK(a.dtype() != kBool, RuntimeError, op, ": \"addmm_impl_cpu_\" not implemented for 'Bool'");
}

/// a @ b (matrices or batches, checked by the caller) into a new tensor of `out_sizes`.
Tensor gemm_out(const Tensor& a, const Tensor& b, IntArrayRef out_sizes) {
  Tensor out = detail::new_empty(out_sizes, a.dtype(), a.device());
  kernel::gemm(out, a, b);
  return out;
}

}  // namespace

// mm and bmm are declared in src/ops/ops.yaml (the function family): these are their forwards,
// graft::mm and graft::bmm (generated) record MmBackward0 / BmmBackward0 around them.
Tensor detail::mm_forward(const Tensor& a, const Tensor& b) {
  detail::check_tensor(a, "mm", "self");
  detail::check_tensor(b, "mm", "mat2");
  GRAFT_CHECK(a.dim() == 2, RuntimeError, "mm: self must be a matrix, got ", a.dim(), "-D tensor of shape ", a.sizes());
  GRAFT_CHECK(b.dim() == 2, RuntimeError, "mm: mat2 must be a matrix, got ", b.dim(), "-D tensor of shape ", b.sizes());
  GRAFT_CHECK(a.size(1) == b.size(0), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x",
              a.size(1), " and ", b.size(0), "x", b.size(1), ")");
  check_same_dtype(a, b, "mm");
  return gemm_out(a, b, {a.size(0), b.size(1)});
}

Tensor detail::bmm_forward(const Tensor& a, const Tensor& b) {
  detail::check_tensor(a, "bmm", "self");
  detail::check_tensor(b, "bmm", "mat2");
  GRAFT_CHECK(a.dim() == 3, RuntimeError, "batch1 must be a 3D tensor, got shape ", a.sizes());
  GRAFT_CHECK(b.dim() == 3, RuntimeError, "batch2 must be a 3D tensor, got shape ", b.sizes());
  GRAFT_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), RuntimeError,
              "Expected size for first two dimensions of batch2 tensor to be: [", a.size(0), ", ", a.size(2),
              "] but got: [", b.size(0), ", ", b.size(1), "].");
  check_same_dtype(a, b, "bmm");
  return gemm_out(a, b, {a.size(0), a.size(1), b.size(2)});
}

Tensor detail::dot_forward(const Tensor& a, const Tensor& b) {
  detail::check_tensor(a, "dot", "self");
  detail::check_tensor(b, "dot", "tensor");
  GRAFT_CHECK(a.dim() == 1 && b.dim() == 1, RuntimeError, "1D tensors expected, but got ", a.dim(), "D and ", b.dim(),
              "D tensors");
  GRAFT_CHECK(a.dtype() == b.dtype(), RuntimeError, "dot : expected both vectors to have same dtype, but found ",
              dtype_cpp_name(a.dtype()), " and ", dtype_cpp_name(b.dtype()));
  GRAFT_CHECK(a.size(0) == b.size(0), RuntimeError, "inconsistent tensor size, expected tensor [", a.size(0),
              "] and src [", b.size(0), "] to have the same number of elements, but got ", a.size(0), " and ",
              b.size(0), " elements respectively");
  GRAFT_CHECK(a.dtype() != kBool, RuntimeError, "\"dot\" not implemented for 'Bool'");
  // a row times a column, on raw views (no graph of their own)
  const int64_t n = a.size(0);
  Tensor out = detail::new_empty({}, a.dtype(), a.device());
  kernel::gemm(kernel::raw_view(out, {1, 1}, {1, 1}, 0),
               kernel::raw_view(a, {1, n}, {1, a.stride(0)}, a.storage_offset()),
               kernel::raw_view(b, {n, 1}, {b.stride(0), 1}, b.storage_offset()));
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (autocast::active()) [[unlikely]]
    return autocast::run(
        autocast::CastPolicy::LowerPrecision, [](const Tensor& x, const Tensor& y) { return matmul(x, y); }, a, b);
  alloc::MemoryOpScope mem_scope("matmul");
  detail::check_tensor(a, "matmul", "self");
  detail::check_tensor(b, "matmul", "other");
  const int64_t da = a.dim(), db = b.dim();
  GRAFT_CHECK(da > 0 && db > 0, RuntimeError, "both arguments to matmul need to be at least 1D, but they are ", da,
              "D and ", db, "D");
  if (da == 1 && db == 1) return dot(a, b);  // DotBackward0, as PyTorch's matmul
  if (da == 2 && db == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (da == 1 && db == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return mm(a, b);
  if (da >= 3 && db <= 2) {
    // fold a's batch dims into rows: one GEMM
    Tensor b2 = db == 1 ? b.unsqueeze(1) : b;
    Shape out_sizes = a.sizes().shape();
    GRAFT_CHECK(a.size(-1) == b2.size(0), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (",
                a.numel() / std::max<int64_t>(a.size(-1), 1), "x", a.size(-1), " and ", b2.size(0), "x", b2.size(1),
                ")");
    int64_t rows = 1;  // not reshape(-1, K): -1 cannot be inferred when K == 0
    for (int64_t d = 0; d < da - 1; ++d) rows *= a.size(d);
    Tensor r = mm(a.reshape({rows, a.size(-1)}), b2);
    out_sizes.back() = b2.size(1);
    r = r.reshape(out_sizes);
    return db == 1 ? r.squeeze(-1) : r;
  }
  // general batched case with broadcasting
  Tensor a3 = da == 1 ? a.unsqueeze(0) : a;
  Tensor b3 = db == 1 ? b.unsqueeze(1) : b;
  const int64_t n = a3.size(-2), m = a3.size(-1), m2 = b3.size(-2), p = b3.size(-1);
  GRAFT_CHECK(m == m2, RuntimeError, "Expected size for first two dimensions of batch2 tensor to be: [", m2, ", ", m,
              "] but got: [", m2, ", ", p, "]. (matmul shapes ", a.sizes(), " and ", b.sizes(), ")");
  Shape ba(a3.sizes().begin(), a3.sizes().end() - 2), bb(b3.sizes().begin(), b3.sizes().end() - 2);
  Shape batch = detail::broadcast_shapes(ba, bb);
  int64_t B = compute_numel(batch);
  Shape ea = batch, eb = batch;
  ea.push_back(n);
  ea.push_back(m);
  eb.push_back(m);
  eb.push_back(p);
  Tensor r = bmm(a3.expand(ea).reshape({B, n, m}), b3.expand(eb).reshape({B, m, p}));
  Shape out = batch;
  if (da > 1) out.push_back(n);
  if (db > 1) out.push_back(p);
  return r.reshape(out);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (autocast::active()) [[unlikely]]
    return autocast::run(
        autocast::CastPolicy::LowerPrecision,
        [](const Tensor& i, const Tensor& w, const Tensor& b) { return linear(i, w, b); }, x, weight, bias);
  alloc::MemoryOpScope mem_scope("linear");
  detail::check_tensor(x, "linear", "input");
  detail::check_tensor(weight, "linear", "weight");
  GRAFT_CHECK(weight.dim() == 2 || weight.dim() == 1, RuntimeError, "linear: weight must be 1-D or 2-D, got shape ",
              weight.sizes());
  Tensor y = matmul(x, weight.t());
  return bias.defined() ? y + bias : y;
}

// ---- tril and triu: the matrices' triangles (one pass; in place, self itself) ----
static Tensor triangle_forward(const Tensor& self, int64_t diagonal, bool lower, Tensor* into) {
  const char* name = lower ? "tril" : "triu";
  detail::check_tensor(self, name);
  GRAFT_CHECK(self.dim() >= 2, RuntimeError, name, ": input tensor must have at least 2 dimensions");
  detail::ElementwiseOutput out(into, self.sizes(), self.dtype(), self.device(), {&self});
  kernel::triangle(out.out(), self, diagonal, lower);
  return out.result();
}
Tensor detail::tril_forward(const Tensor& self, int64_t diagonal, Tensor* into) {
  return triangle_forward(self, diagonal, true, into);
}
Tensor detail::triu_forward(const Tensor& self, int64_t diagonal, Tensor* into) {
  return triangle_forward(self, diagonal, false, into);
}

}  // namespace graft
