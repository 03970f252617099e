#pragma once
// The op registry: one OpEntry per public op (src/ops/op_table.def), in the spirit of
// PyTorch's OpInfo. An entry holds one or more OpCases (ways of calling the op: overloads,
// dims, keepdim, ...). Each case lists small sample inputs, the call into graft, a naive
// reference written with plain loops over std::vector<double> (never the graft op under
// test), and flags. registry_test.cpp runs the generic checks over every case.
//
// Adding an op: write its entry in the op_registry_<family>.cpp matching its family.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graft/graft.h"

namespace graft::testing {

using Shape64 = std::vector<int64_t>;

/// A reference tensor: contiguous row-major values as doubles, plus sizes and dtype.
struct RT {
  Shape64 sizes;
  std::vector<double> v;
  DType dtype = kFloat64;
  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const { return static_cast<int64_t>(v.size()); }
  int64_t size(int64_t d) const { return sizes[static_cast<size_t>(d < 0 ? d + dim() : d)]; }
  bool floating() const { return is_floating_point(dtype); }
};

/// Value domains for generated float inputs.
enum class Domain {
  Any,       ///< [-2, 2]
  Positive,  ///< [0.5, 2]
  NonZero,   ///< [-2, 2] with |x| >= 0.25 (abs, sign, relu, div denominators, ...)
  Unit,      ///< [-0.9, 0.9]
  AboveOne,  ///< [1.25, 3] (acosh)
  Wide,      ///< [-5, 5] (hardsigmoid, hardswish: across their kinks at -3 and 3)
};

// ---- sample builders (deterministic pseudo-random values) ----
/// Float input of the given sizes in `dom`; values avoid the points in `kinks` by >= 0.1.
RT rnd(Shape64 sizes, Domain dom = Domain::Any, std::vector<double> kinks = {});
/// Int64 tensor with the given values (reshaped to sizes).
RT ints(Shape64 sizes, std::vector<double> vals);
/// Bool tensor with the given 0/1 values.
RT bools(Shape64 sizes, std::vector<double> vals);
/// Float tensor with the given values.
RT vals(Shape64 sizes, std::vector<double> vals);

// ---- reference helpers (plain loops) ----
int64_t numel_of(const Shape64& s);
Shape64 contiguous_strides_of(const Shape64& s);
/// Multi-index of flat position k in sizes.
Shape64 unravel(int64_t k, const Shape64& sizes);
Shape64 broadcast(const Shape64& a, const Shape64& b);
/// Value of `a` at multi-index `idx` of the broadcast shape `out` (a broadcasts to out).
double bcast_at(const RT& a, const Shape64& idx, const Shape64& out);
RT map(const RT& a, const std::function<double(double)>& f, DType out = kFloat64);
RT zip(const RT& a, const RT& b, const std::function<double(double, double)>& f, DType out = kFloat64);
RT zip3(const RT& a, const RT& b, const RT& c, const std::function<double(double, double, double)>& f,
        DType out = kFloat64);
/// Reduces the groups over `dims` (empty = all) with f(group values in row-major order).
RT reduce(const RT& a, Shape64 dims, bool keepdim, const std::function<double(const std::vector<double>&)>& f,
          DType out = kFloat64);
/// Replaces each 1-D lane along `dim` by f(lane) (same length).
RT along(const RT& a, int64_t dim, const std::function<std::vector<double>(const std::vector<double>&)>& f);
/// Reads a strided window (sizes, strides, offset) out of a's contiguous values.
RT window(const RT& a, const Shape64& sizes, const Shape64& strides, int64_t offset);
RT permute_ref(const RT& a, const Shape64& dims);
RT reshape_ref(const RT& a, Shape64 sizes);
/// matmul's reference (NumPy's rules: 1-D operands get a dim added and removed; batches broadcast).
RT matmul_ref(const RT& a, const RT& b);

using TensorFn = std::function<TensorList(const TensorList&)>;
using RefFn = std::function<std::vector<RT>(const std::vector<RT>&)>;

struct Sample {
  std::string desc;
  std::vector<RT> inputs;
  bool grad = true;  ///< false: skip gradcheck for this sample (e.g. at a kink)
};

/// One way of calling an op, with its samples and reference.
struct OpCase {
  std::string variant;  ///< e.g. "tensor_tensor" or "dim1_keepdim"
  std::vector<Sample> samples;
  TensorFn fn;                       ///< the graft call; inputs as built from samples
  RefFn ref;                         ///< naive reference
  TensorFn outplace;                 ///< in-place cases: the out-of-place op to compare with
  bool differentiable = true;        ///< gradcheck (floating inputs/outputs only)
  bool gradgrad = true;              ///< also gradgradcheck
  bool f32 = false;                  ///< float32 forward smoke test
  bool noncontig = true;             ///< check non-contiguous inputs give the same result
  double atol = 1e-10, rtol = 1e-9;  ///< forward tolerance in float64
};

struct OpEntry {
  std::string name;  ///< as in op_table.def
  std::vector<OpCase> cases;
};

/// A case of the given samples, call and reference (gradchecked unless not differentiable).
inline OpCase with(std::string variant, std::vector<Sample> samples, TensorFn fn, RefFn ref,
                   bool differentiable = true) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = std::move(fn);
  c.ref = std::move(ref);
  c.differentiable = differentiable;
  return c;
}
/// The position of the multi-index idx in the contiguous row-major layout of sizes.
inline int64_t flat_at(const Shape64& sizes, const Shape64& idx) {
  const Shape64 strides = contiguous_strides_of(sizes);
  int64_t k = 0;
  for (size_t d = 0; d < idx.size(); ++d) k += idx[d] * strides[d];
  return k;
}
/// a's value at the multi-index idx.
inline double at(const RT& a, const Shape64& idx) { return a.v[static_cast<size_t>(flat_at(a.sizes, idx))]; }

/// Marks a case for the float32 smoke test.
inline OpCase f32(OpCase c) {
  c.f32 = true;
  return c;
}

using Registry = std::vector<OpEntry>;
void register_elementwise(Registry& r);
void register_reductions(Registry& r);
void register_linalg(Registry& r);
void register_shape_index(Registry& r);
void register_indexing(Registry& r);
void register_inplace(Registry& r);
void register_conv(Registry& r);
void register_layers(Registry& r);
void register_norm_loss(Registry& r);
void register_scans_and_order(Registry& r);
void register_products(Registry& r);
void register_structure_search(Registry& r);
void register_scatter_and_draws(Registry& r);
void register_factorizations(Registry& r);
/// Every entry (built once).
const Registry& op_registry();

}  // namespace graft::testing
