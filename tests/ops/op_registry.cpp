// Sample builders and naive reference helpers shared by the registry files; op_registry().
#include "ops/op_registry.h"

#include <cmath>
#include <stdexcept>

namespace graft::testing {

namespace {
uint64_t g_state = 0x9E3779B97F4A7C15ull;
double next_uniform() {  // splitmix64 -> [0, 1)
  uint64_t z = (g_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}
}  // namespace

RT rnd(Shape64 sizes, Domain dom, std::vector<double> kinks) {
  RT r;
  r.sizes = sizes;
  const int64_t n = numel_of(sizes);
  for (int64_t i = 0; i < n; ++i) {
    double x = 0;
    for (int tries = 0;; ++tries) {
      double u = next_uniform();
      switch (dom) {
        case Domain::Any:
          x = -2 + 4 * u;
          break;
        case Domain::Positive:
          x = 0.5 + 1.5 * u;
          break;
        case Domain::NonZero:
          x = (u < 0.5 ? -1 : 1) * (0.25 + 1.75 * (u < 0.5 ? 2 * u : 2 * u - 1));
          break;
        case Domain::Unit:
          x = -0.9 + 1.8 * u;
          break;
        case Domain::AboveOne:
          x = 1.25 + 1.75 * u;
          break;
        case Domain::Wide:
          x = -5 + 10 * u;
          break;
      }
      bool ok = true;
      for (double k : kinks) ok = ok && std::fabs(x - k) >= 0.1;
      for (double prev : r.v) ok = ok && std::fabs(x - prev) >= 1e-3;  // distinct (max/min ties)
      if (ok || tries > 1000) break;
    }
    r.v.push_back(x);
  }
  return r;
}
RT vals(Shape64 sizes, std::vector<double> v) {
  if (numel_of(sizes) != static_cast<int64_t>(v.size())) throw std::logic_error("vals: size mismatch");
  return RT{std::move(sizes), std::move(v), kFloat64};
}
RT ints(Shape64 sizes, std::vector<double> v) {
  RT r = vals(std::move(sizes), std::move(v));
  r.dtype = kInt64;
  return r;
}
RT bools(Shape64 sizes, std::vector<double> v) {
  RT r = vals(std::move(sizes), std::move(v));
  r.dtype = kBool;
  return r;
}

int64_t numel_of(const Shape64& s) {
  int64_t n = 1;
  for (auto x : s) n *= x;
  return n;
}
Shape64 contiguous_strides_of(const Shape64& s) {
  Shape64 st(s.size(), 1);
  for (int64_t d = static_cast<int64_t>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * std::max<int64_t>(s[d + 1], 1);
  return st;
}
Shape64 unravel(int64_t k, const Shape64& sizes) {
  Shape64 idx(sizes.size(), 0);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    idx[d] = k % sizes[d];
    k /= sizes[d];
  }
  return idx;
}
Shape64 broadcast(const Shape64& a, const Shape64& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape64 out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) throw std::logic_error("broadcast: incompatible");
    out[i] = x == 1 ? y : x;
  }
  return out;
}
double bcast_at(const RT& a, const Shape64& idx, const Shape64& out) {
  const size_t lead = out.size() - a.sizes.size();
  int64_t off = 0;
  Shape64 st = contiguous_strides_of(a.sizes);
  for (size_t d = 0; d < a.sizes.size(); ++d) off += (a.sizes[d] == 1 ? 0 : idx[d + lead]) * st[d];
  return a.v[static_cast<size_t>(off)];
}
RT map(const RT& a, const std::function<double(double)>& f, DType out) {
  RT r{a.sizes, {}, out};
  for (double x : a.v) r.v.push_back(f(x));
  return r;
}
RT zip(const RT& a, const RT& b, const std::function<double(double, double)>& f, DType out) {
  RT r{broadcast(a.sizes, b.sizes), {}, out};
  for (int64_t k = 0; k < numel_of(r.sizes); ++k) {
    Shape64 idx = unravel(k, r.sizes);
    r.v.push_back(f(bcast_at(a, idx, r.sizes), bcast_at(b, idx, r.sizes)));
  }
  return r;
}
RT zip3(const RT& a, const RT& b, const RT& c, const std::function<double(double, double, double)>& f, DType out) {
  RT r{broadcast(broadcast(a.sizes, b.sizes), c.sizes), {}, out};
  for (int64_t k = 0; k < numel_of(r.sizes); ++k) {
    Shape64 idx = unravel(k, r.sizes);
    r.v.push_back(f(bcast_at(a, idx, r.sizes), bcast_at(b, idx, r.sizes), bcast_at(c, idx, r.sizes)));
  }
  return r;
}
RT reduce(const RT& a, Shape64 dims, bool keepdim, const std::function<double(const std::vector<double>&)>& f,
          DType out) {
  const int64_t nd = a.dim();
  if (nd == 0) return RT{{}, {f(a.v)}, out};  // 0-d: dim 0 / -1 / all reduce the one element
  std::vector<bool> red(static_cast<size_t>(nd), dims.empty());
  for (auto d : dims) red[static_cast<size_t>(d < 0 ? d + nd : d)] = true;
  Shape64 os, ks;  // output sizes, keepdim sizes
  for (int64_t d = 0; d < nd; ++d) {
    ks.push_back(red[d] ? 1 : a.sizes[d]);
    if (!red[d] || keepdim) os.push_back(ks.back());
  }
  std::vector<std::vector<double>> groups(static_cast<size_t>(numel_of(ks)));
  Shape64 kst = contiguous_strides_of(ks);
  for (int64_t k = 0; k < a.numel(); ++k) {
    Shape64 idx = unravel(k, a.sizes);
    int64_t g = 0;
    for (int64_t d = 0; d < nd; ++d) g += (red[d] ? 0 : idx[d]) * kst[d];
    groups[static_cast<size_t>(g)].push_back(a.v[k]);
  }
  RT r{os, {}, out};
  for (auto& g : groups) r.v.push_back(f(g));
  return r;
}
RT along(const RT& a, int64_t dim, const std::function<std::vector<double>(const std::vector<double>&)>& f) {
  RT r = a;
  if (a.dim() == 0) {
    r.v = f(a.v);
    return r;
  }
  const int64_t d = dim < 0 ? dim + a.dim() : dim;
  Shape64 st = contiguous_strides_of(a.sizes);
  for (int64_t k = 0; k < a.numel(); ++k) {
    if (unravel(k, a.sizes)[d] != 0) continue;
    std::vector<double> lane;
    for (int64_t i = 0; i < a.sizes[d]; ++i) lane.push_back(a.v[k + i * st[d]]);
    auto out = f(lane);
    for (int64_t i = 0; i < a.sizes[d]; ++i) r.v[k + i * st[d]] = out[i];
  }
  return r;
}
RT window(const RT& a, const Shape64& sizes, const Shape64& strides, int64_t offset) {
  RT r{sizes, {}, a.dtype};
  for (int64_t k = 0; k < numel_of(sizes); ++k) {
    Shape64 idx = unravel(k, sizes);
    int64_t off = offset;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    r.v.push_back(a.v[static_cast<size_t>(off)]);
  }
  return r;
}
RT permute_ref(const RT& a, const Shape64& dims) {
  Shape64 st = contiguous_strides_of(a.sizes), s2, st2;
  for (auto d : dims) {
    int64_t w = d < 0 ? d + a.dim() : d;
    s2.push_back(a.sizes[w]);
    st2.push_back(st[w]);
  }
  return window(a, s2, st2, 0);
}
RT reshape_ref(const RT& a, Shape64 sizes) {
  RT r = a;
  r.sizes = std::move(sizes);
  return r;
}

const Registry& op_registry() {
  static const Registry reg = [] {
    Registry r;
    register_elementwise(r);
    register_reductions(r);
    register_linalg(r);
    register_shape_index(r);
    register_indexing(r);
    register_inplace(r);
    register_conv(r);
    register_layers(r);
    register_norm_loss(r);
    register_scans_and_order(r);
    register_products(r);
    register_structure_search(r);
    register_scatter_and_draws(r);
    register_factorizations(r);
    return r;
  }();
  return reg;
}

}  // namespace graft::testing
