// Registry entries: views, copies, concatenation/splitting, indexing, and the copies that move
// or zero elements (tril/triu, flip, roll).
#include <algorithm>
#include <cmath>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;
using UFn = std::function<Tensor(const Tensor&)>;
using URef = std::function<RT(const RT&)>;

OpCase one(std::string variant, UFn f, URef ref, std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [f](const TensorList& x) { return TensorList{f(x[0])}; };
  c.ref = [ref](const V& x) { return V{ref(x[0])}; };
  return c;
}
int64_t wrap(int64_t d, int64_t n) { return d < 0 ? d + n : d; }
RT slice_ref(const RT& a, int64_t dim, int64_t start, int64_t len, int64_t step = 1) {
  const int64_t d = wrap(dim, a.dim());
  Shape64 st = contiguous_strides_of(a.sizes), s = a.sizes, st2 = st;
  s[d] = len;
  st2[d] *= step;
  return window(a, s, st2, start * st[d]);
}
RT select_ref(const RT& a, int64_t dim, int64_t index) {
  const int64_t d = wrap(dim, a.dim());
  if (index < 0) index += a.sizes[d];
  Shape64 st = contiguous_strides_of(a.sizes), s = a.sizes, st2 = st;
  s.erase(s.begin() + d);
  st2.erase(st2.begin() + d);
  return window(a, s, st2, index * st[d]);
}
RT expand_ref(const RT& a, Shape64 to) {
  RT z{to, std::vector<double>(static_cast<size_t>(numel_of(to)), 0.0), kFloat64};
  return zip(
      a, z, [](double x, double) { return x; }, a.dtype);
}
RT swap_ref(const RT& a, int64_t d0, int64_t d1) {
  Shape64 p;
  for (int64_t i = 0; i < a.dim(); ++i) p.push_back(i);
  if (a.dim() > 0) std::swap(p[wrap(d0, a.dim())], p[wrap(d1, a.dim())]);
  return permute_ref(a, p);
}
RT cat_ref(const std::vector<RT>& xs, int64_t dim) {
  const RT* ref = nullptr;
  for (auto& x : xs)
    if (!(x.dim() == 1 && x.numel() == 0)) {
      ref = &x;
      break;
    }
  if (!ref) return vals({0}, {});
  const int64_t d = wrap(dim, ref->dim());
  Shape64 out = ref->sizes;
  out[d] = 0;
  for (auto& x : xs)
    if (!(x.dim() == 1 && x.numel() == 0)) out[d] += x.sizes[d];
  RT r{out, std::vector<double>(static_cast<size_t>(numel_of(out))), kFloat64};
  Shape64 ost = contiguous_strides_of(out);
  int64_t off = 0;
  for (auto& x : xs) {
    if (x.dim() == 1 && x.numel() == 0) continue;
    for (int64_t k = 0; k < x.numel(); ++k) {
      Shape64 idx = unravel(k, x.sizes);
      idx[d] += off;
      int64_t o = 0;
      for (size_t i = 0; i < idx.size(); ++i) o += idx[i] * ost[i];
      r.v[o] = x.v[k];
    }
    off += x.sizes[d];
  }
  return r;
}
V split_ref(const RT& a, const Shape64& pieces, int64_t dim) {
  V out;
  int64_t off = 0;
  for (auto p : pieces) {
    out.push_back(slice_ref(a, dim, off, p));
    off += p;
  }
  return out;
}
// Position in a contiguous tensor of `sizes` of multi-index idx with idx[dim] replaced by j.
int64_t offset_with(const Shape64& sizes, Shape64 idx, int64_t dim, int64_t j) {
  Shape64 st = contiguous_strides_of(sizes);
  if (!idx.empty()) idx[dim] = j;
  int64_t o = 0;
  for (size_t i = 0; i < idx.size(); ++i) o += idx[i] * st[i];
  return o;
}

// tril (lower) / triu of the last two dims: each element kept or zeroed by its (row, column)
RT triangle_ref(const RT& a, int64_t diagonal, bool lower) {
  RT out = a;
  const int64_t rows = a.sizes[a.sizes.size() - 2], cols = a.sizes.back();
  for (int64_t k = 0; k < a.numel(); ++k) {
    const int64_t i = (k / cols) % rows, j = k % cols;
    if (lower ? j - i > diagonal : j - i < diagonal) out.v[static_cast<size_t>(k)] = 0;
  }
  return out;
}
// Element idx of the output reads element idx' of a, where idx' = f(idx) per dim.
RT remap_ref(const RT& a, const std::function<int64_t(int64_t d, int64_t i)>& f) {
  RT out = a;
  const Shape64 st = contiguous_strides_of(a.sizes);
  for (int64_t k = 0; k < a.numel(); ++k) {
    Shape64 idx = unravel(k, a.sizes);
    int64_t from = 0;
    for (int64_t d = 0; d < a.dim(); ++d) from += f(d, idx[static_cast<size_t>(d)]) * st[static_cast<size_t>(d)];
    out.v[static_cast<size_t>(k)] = a.v[static_cast<size_t>(from)];
  }
  return out;
}
RT flip_ref(const RT& a, Shape64 dims) {
  return remap_ref(a, [&](int64_t d, int64_t i) {
    const bool flipped = std::find(dims.begin(), dims.end(), d) != dims.end();
    return flipped ? a.sizes[static_cast<size_t>(d)] - 1 - i : i;
  });
}
// roll: output index i along dim d reads (i - shift) mod n
RT roll_ref(const RT& a, Shape64 shifts, Shape64 dims) {
  return remap_ref(a, [&](int64_t d, int64_t i) {
    const int64_t n = a.sizes[static_cast<size_t>(d)];
    for (size_t k = 0; k < dims.size(); ++k)
      if (dims[k] == d) i = ((i - shifts[k]) % n + n) % n;
    return i;
  });
}

void register_moves(Registry& r) {
  std::vector<Sample> mats = {{"3x4", {rnd({3, 4})}},
                              {"2x3x2", {rnd({2, 3, 2})}},
                              {"empty_0x2x3", {rnd({0, 2, 3})}},
                              {"int_2x3", {ints({2, 3}, {1, 2, 3, 4, 5, 6})}},
                              {"bool_2x2", {bools({2, 2}, {1, 1, 1, 1})}}};
  for (bool lower : {true, false}) {
    auto op = [lower](const Tensor& a, int64_t k) { return lower ? tril(a, k) : triu(a, k); };
    r.push_back({lower ? "tril" : "triu",
                 {f32(one(
                      "", [op](auto& a) { return op(a, 0); },
                      [lower](const RT& a) { return triangle_ref(a, 0, lower); }, mats)),
                  one(
                      "diagonal1", [op](auto& a) { return op(a, 1); },
                      [lower](const RT& a) { return triangle_ref(a, 1, lower); }, mats),
                  one(
                      "diagonal_neg2", [op](auto& a) { return op(a, -2); },
                      [lower](const RT& a) { return triangle_ref(a, -2, lower); }, mats)}});
  }
  std::vector<Sample> any = {{"3x4", {rnd({3, 4})}},
                             {"2x3x2", {rnd({2, 3, 2})}},
                             {"empty_0x3", {rnd({0, 3})}},
                             {"int_2x3", {ints({2, 3}, {1, 2, 3, 4, 5, 6})}}};
  r.push_back({"flip",
               {f32(one(
                    "dim0", [](auto& a) { return flip(a, {0}); }, [](const RT& a) { return flip_ref(a, {0}); }, any)),
                one(
                    "dims_neg1_0",
                    [](auto& a) {
                      return flip(a, {-1, 0});
                    },
                    [](const RT& a) {
                      return flip_ref(a, {a.dim() - 1, 0});
                    },
                    any),
                one(
                    "0d", [](auto& a) { return flip(a, {0}); }, [](const RT& a) { return a; }, {{"0d", {rnd({})}}})}});
  r.push_back(
      {"roll",
       {f32(one(
            "dim0", [](auto& a) { return roll(a, {1}, {0}); }, [](const RT& a) { return roll_ref(a, {1}, {0}); }, any)),
        one(
            "two_dims",
            [](auto& a) {
              return roll(a, {-1, 5}, {1, 0});
            },
            [](const RT& a) {
              return roll_ref(a, {-1, 5}, {1, 0});
            },
            any),
        one(
            "repeated_dim",
            [](auto& a) {
              return roll(a, {1, 1}, {0, 0});
            },
            [](const RT& a) { return roll_ref(a, {2}, {0}); }, any),
        one(
            "flattened", [](auto& a) { return roll(a, {2}); },
            [](const RT& a) { return reshape_ref(roll_ref(reshape_ref(a, {a.numel()}), {2}, {0}), a.sizes); }, any)}});
}

}  // namespace

void register_shape_index(Registry& r) {
  register_moves(r);
  std::vector<Sample> s23 = {{"2x3", {rnd({2, 3})}}};
  // ---- views ----
  {
    OpCase v = one(
        "2x3_to_3x2",
        [](auto& a) {
          return a.view({3, 2});
        },
        [](const RT& a) {
          return reshape_ref(a, {3, 2});
        },
        {{"2x3", {rnd({2, 3})}}});
    v.noncontig = false;  // view of a non-contiguous input is (correctly) an error for these shapes
    OpCase v2 = one(
        "infer_to_2x1x3",
        [](auto& a) {
          return a.view({2, -1, 3});
        },
        [](const RT& a) {
          return reshape_ref(a, {2, 1, 3});
        },
        {{"6", {rnd({6})}}, {"2x3", {rnd({2, 3})}}});
    v2.noncontig = false;
    OpCase v3 = one(
        "0d_to_1", [](auto& a) { return a.view({1}); }, [](const RT& a) { return reshape_ref(a, {1}); },
        {{"0d", {rnd({})}}});
    OpCase v4 = one(
        "empty",
        [](auto& a) {
          return a.view({3, 0});
        },
        [](const RT& a) {
          return reshape_ref(a, {3, 0});
        },
        {{"0x3", {rnd({0, 3})}}});
    r.push_back({"view", {v, v2, v3, v4}});
  }
  r.push_back({"reshape",
               {one(
                    "2x3_to_3x2",
                    [](auto& a) {
                      return a.reshape({3, 2});
                    },
                    [](const RT& a) {
                      return reshape_ref(a, {3, 2});
                    },
                    {{"2x3", {rnd({2, 3})}}, {"6", {rnd({6})}}}),
                one(
                    "flat_infer", [](auto& a) { return a.reshape({-1}); },
                    [](const RT& a) { return reshape_ref(a, {a.numel()}); },
                    {{"2x3", {rnd({2, 3})}}, {"0d", {rnd({})}}, {"empty_2x0", {rnd({2, 0})}}}),
                one(
                    "to_0d", [](auto& a) { return a.reshape({}); }, [](const RT& a) { return reshape_ref(a, {}); },
                    {{"1x1", {rnd({1, 1})}}})}});
  r.push_back(
      {"transpose",
       {one(
            "0_1", [](auto& a) { return a.transpose(0, 1); }, [](const RT& a) { return swap_ref(a, 0, 1); },
            {{"2x3", {rnd({2, 3})}}, {"2x3x2", {rnd({2, 3, 2})}}, {"empty_0x2", {rnd({0, 2})}}}),
        one(
            "0_neg1", [](auto& a) { return a.transpose(0, -1); }, [](const RT& a) { return swap_ref(a, 0, -1); },
            {{"2x3x2", {rnd({2, 3, 2})}}}),
        one(
            "0d", [](auto& a) { return a.transpose(0, -1); }, [](const RT& a) { return a; }, {{"0d", {rnd({})}}})}});
  r.push_back({"alias",
               {one(
                   "", [](auto& a) { return graft::alias(a); }, [](const RT& a) { return a; },
                   {{"2x3", {rnd({2, 3})}}, {"0d", {rnd({})}}, {"empty_0x2", {rnd({0, 2})}}})}});
  r.push_back({"t",
               {one(
                    "2d", [](auto& a) { return a.t(); }, [](const RT& a) { return swap_ref(a, 0, 1); }, s23),
                one(
                    "1d_0d", [](auto& a) { return a.t(); }, [](const RT& a) { return a; },
                    {{"3", {rnd({3})}}, {"0d", {rnd({})}}})}});
  r.push_back({"permute",
               {one(
                    "2_0_1",
                    [](auto& a) {
                      return a.permute({2, 0, 1});
                    },
                    [](const RT& a) {
                      return permute_ref(a, {2, 0, 1});
                    },
                    {{"2x3x2", {rnd({2, 3, 2})}}, {"empty_2x0x3", {rnd({2, 0, 3})}}}),
                one(
                    "neg_dims",
                    [](auto& a) {
                      return a.permute({-1, 0});
                    },
                    [](const RT& a) {
                      return permute_ref(a, {1, 0});
                    },
                    s23),
                one(
                    "0d", [](auto& a) { return a.permute({}); }, [](const RT& a) { return a; }, {{"0d", {rnd({})}}})}});
  r.push_back({"expand",
               {one(
                    "3x1_to_2x3x2",
                    [](auto& a) {
                      return a.expand({2, 3, 2});
                    },
                    [](const RT& a) {
                      return expand_ref(a, {2, 3, 2});
                    },
                    {{"3x1", {rnd({3, 1})}}}),
                one(
                    "minus1",
                    [](auto& a) {
                      return a.expand({2, -1});
                    },
                    [](const RT& a) {
                      return expand_ref(a, {2, 3});
                    },
                    {{"3", {rnd({3})}}, {"1x3", {rnd({1, 3})}}}),
                one(
                    "0d_to_2x2",
                    [](auto& a) {
                      return a.expand({2, 2});
                    },
                    [](const RT& a) {
                      return expand_ref(a, {2, 2});
                    },
                    {{"0d", {rnd({})}}}),
                one(
                    "to_empty",
                    [](auto& a) {
                      return a.expand({0, 3});
                    },
                    [](const RT& a) {
                      return expand_ref(a, {0, 3});
                    },
                    {{"1x3", {rnd({1, 3})}}})}});
  auto squeezed = [](const RT& a, int64_t only) {
    Shape64 s;
    for (int64_t d = 0; d < a.dim(); ++d)
      if (!(a.sizes[d] == 1 && (only < 0 || d == only))) s.push_back(a.sizes[d]);
    return reshape_ref(a, s);
  };
  r.push_back(
      {"squeeze",
       {one(
            "all", [](auto& a) { return a.squeeze(); }, [squeezed](const RT& a) { return squeezed(a, -1); },
            {{"2x1x3x1", {rnd({2, 1, 3, 1})}}, {"1x1", {rnd({1, 1})}}, {"0d", {rnd({})}}, {"1x0", {rnd({1, 0})}}}),
        one(
            "dim1", [](auto& a) { return a.squeeze(1); }, [squeezed](const RT& a) { return squeezed(a, 1); },
            {{"2x1x3", {rnd({2, 1, 3})}}, {"2x3_noop", {rnd({2, 3})}}}),
        // PyTorch 2's squeeze.dims: dims 0 and -1 (2 of 1x3x1; 0 of 1x3x2, -1 left as it is)
        one(
            "dims_0_neg1",
            [](auto& a) {
              return a.squeeze(IntArrayRef{0, -1});
            },
            [squeezed](const RT& a) {
              return a.sizes.back() == 1 ? squeezed(squeezed(a, a.dim() - 1), 0) : squeezed(a, 0);
            },
            {{"1x3x1", {rnd({1, 3, 1})}}, {"1x3x2", {rnd({1, 3, 2})}}})}});
  auto unsq = [](const RT& a, int64_t d) {
    Shape64 s = a.sizes;
    s.insert(s.begin() + wrap(d, a.dim() + 1), 1);
    return reshape_ref(a, s);
  };
  r.push_back({"unsqueeze",
               {one(
                    "0", [](auto& a) { return a.unsqueeze(0); }, [unsq](const RT& a) { return unsq(a, 0); },
                    {{"2x3", {rnd({2, 3})}}, {"0d", {rnd({})}}, {"empty_0", {rnd({0})}}}),
                one(
                    "neg1", [](auto& a) { return a.unsqueeze(-1); }, [unsq](const RT& a) { return unsq(a, -1); },
                    {{"2x3", {rnd({2, 3})}}, {"0d", {rnd({})}}}),
                one(
                    "1", [](auto& a) { return a.unsqueeze(1); }, [unsq](const RT& a) { return unsq(a, 1); },
                    {{"2x3", {rnd({2, 3})}}})}});
  r.push_back({"flatten",
               {one(
                    "all", [](auto& a) { return a.flatten(); }, [](const RT& a) { return reshape_ref(a, {a.numel()}); },
                    {{"2x3x2", {rnd({2, 3, 2})}}, {"0d", {rnd({})}}, {"empty_2x0", {rnd({2, 0})}}}),
                one(
                    "start1", [](auto& a) { return a.flatten(1); },
                    [](const RT& a) {
                      return reshape_ref(a, {a.sizes[0], a.numel() / a.sizes[0]});
                    },
                    {{"2x3x2", {rnd({2, 3, 2})}}})}});
  r.push_back({"narrow",
               {one(
                    "dim0", [](auto& a) { return a.narrow(0, 1, 2); },
                    [](const RT& a) { return slice_ref(a, 0, 1, 2); }, {{"4x2", {rnd({4, 2})}}}),
                one(
                    "dim1_neg_start", [](auto& a) { return a.narrow(1, -2, 1); },
                    [](const RT& a) { return slice_ref(a, 1, a.sizes[1] - 2, 1); }, {{"2x3", {rnd({2, 3})}}}),
                one(
                    "empty_len0", [](auto& a) { return a.narrow(1, 1, 0); },
                    [](const RT& a) { return slice_ref(a, 1, 1, 0); }, {{"2x3", {rnd({2, 3})}}})}});
  r.push_back(
      {"select",
       {one(
            "dim0", [](auto& a) { return a.select(0, 1); }, [](const RT& a) { return select_ref(a, 0, 1); },
            {{"3x2", {rnd({3, 2})}}, {"2", {rnd({2})}}}),
        one(
            "dim_neg1_idx_neg1", [](auto& a) { return a.select(-1, -1); },
            [](const RT& a) { return select_ref(a, -1, -1); }, {{"2x3", {rnd({2, 3})}}, {"2x2x3", {rnd({2, 2, 3})}}}),
        one(
            "operator_index", [](auto& a) { return a[0]; }, [](const RT& a) { return select_ref(a, 0, 0); },
            {{"2x3", {rnd({2, 3})}}})}});
  r.push_back({"slice",
               {one(
                    "step2", [](auto& a) { return a.slice(1, 0, std::nullopt, 2); },
                    [](const RT& a) { return slice_ref(a, 1, 0, (a.sizes[1] + 1) / 2, 2); },
                    {{"2x5", {rnd({2, 5})}}, {"3x4", {rnd({3, 4})}}}),
                one(
                    "neg_start_end", [](auto& a) { return a.slice(0, -3, -1); },
                    [](const RT& a) { return slice_ref(a, 0, a.sizes[0] - 3, 2); }, {{"4x2", {rnd({4, 2})}}}),
                one(
                    "clamped_end", [](auto& a) { return a.slice(0, 1, 100); },
                    [](const RT& a) { return slice_ref(a, 0, 1, a.sizes[0] - 1); }, {{"3", {rnd({3})}}}),
                one(
                    "empty_result", [](auto& a) { return a.slice(0, 2, 1); },
                    [](const RT& a) { return slice_ref(a, 0, 2, 0); }, {{"3x2", {rnd({3, 2})}}})}});
  {
    OpCase a = one(
        "window",
        [](auto& x) {
          return x.as_strided({2, 2}, {1, 3}, 1);
        },
        [](const RT& x) {
          return window(x, {2, 2}, {1, 3}, 1);
        },
        {{"3x3", {rnd({3, 3})}}});
    a.noncontig = false;  // strides are storage strides: a non-contiguous input means something else
    OpCase ov = one(
        "overlapping",
        [](auto& x) {
          return x.as_strided({3, 2}, {1, 1});
        },
        [](const RT& x) {
          return window(x, {3, 2}, {1, 1}, 0);
        },
        {{"4", {rnd({4})}}});
    ov.noncontig = false;
    OpCase s0 = one(
        "to_0d", [](auto& x) { return x.as_strided({}, {}, 2); }, [](const RT& x) { return window(x, {}, {}, 2); },
        {{"2x2", {rnd({2, 2})}}});
    s0.noncontig = false;
    r.push_back({"as_strided", {a, ov, s0}});
  }
  {
    OpCase c;
    c.variant = "window";
    c.samples = {{"base3x3_src2x2", {rnd({3, 3}), rnd({2, 2})}}};
    c.fn = [](const TensorList& x) { return TensorList{as_strided_scatter(x[0], x[1], {2, 2}, {1, 3}, 1)}; };
    c.ref = [](const V& x) {
      RT out = x[0];
      for (int64_t k = 0; k < 4; ++k) {
        Shape64 idx = unravel(k, {2, 2});
        out.v[1 + idx[0] * 1 + idx[1] * 3] = x[1].v[k];
      }
      return V{out};
    };
    OpCase sel = c;
    sel.variant = "row";
    sel.samples = {{"base2x3_src3", {rnd({2, 3}), rnd({3})}}};
    sel.fn = [](const TensorList& x) { return TensorList{as_strided_scatter(x[0], x[1], {3}, {1}, 3)}; };
    sel.ref = [](const V& x) {
      RT out = x[0];
      for (int64_t k = 0; k < 3; ++k) out.v[3 + k] = x[1].v[k];
      return V{out};
    };
    r.push_back({"as_strided_scatter", {c, sel}});
  }
  // ---- copies ----
  std::vector<Sample> copy_samples = {{"2x3", {rnd({2, 3})}}, {"0d", {rnd({})}}, {"empty", {rnd({0, 2})}}};
  r.push_back({"contiguous",
               {one(
                   "", [](auto& a) { return a.contiguous(); }, [](const RT& a) { return a; }, copy_samples)}});
  {
    OpCase c = one(
        "", [](auto& a) { return clone(a); }, [](const RT& a) { return a; }, copy_samples);
    c.f32 = true;
    r.push_back({"clone",
                 {c, one(
                         "method", [](auto& a) { return a.clone(); }, [](const RT& a) { return a; }, copy_samples)}});
  }
  {
    OpCase f = one(
        "to_float32", [](auto& a) { return a.to(kFloat32); },
        [](const RT& a) {
          RT o = map(a, [](double x) { return static_cast<double>(static_cast<float>(x)); });
          o.dtype = kFloat32;
          return o;
        },
        copy_samples);
    f.differentiable = false;  // float32 output: finite differences are too coarse
    OpCase rt = one(
        "float64_float32_roundtrip_grad", [](auto& a) { return a.to(kFloat32).to(kFloat64); },
        [](const RT& a) { return map(a, [](double x) { return static_cast<double>(static_cast<float>(x)); }); },
        {{"2x3", {vals({2, 3}, {0.5, -1, 2, 0.25, 1.5, -2})}}});
    rt.differentiable = false;  // gradient checked in NonContiguous (backward through both casts)
    OpCase cp = one(
        "same_dtype_copy", [](auto& a) { return a.to(kFloat64, true); }, [](const RT& a) { return a; }, copy_samples);
    OpCase il = one(
        "to_int64", [](auto& a) { return a.to(kInt64); },
        [](const RT& a) {
          return map(
              a, [](double x) { return std::trunc(x); }, kInt64);
        },
        {{"4", {vals({4}, {1.5, -2.5, 0.2, 3})}}});
    il.differentiable = false;
    OpCase fi = one(
        "int_to_float64", [](auto& a) { return a.to(kFloat64); },
        [](const RT& a) {
          RT o = a;
          o.dtype = kFloat64;
          return o;
        },
        {{"3", {ints({3}, {1, -2, 7})}}});
    fi.differentiable = false;
    r.push_back({"to_copy", {f, rt, cp, il, fi}});
  }
  // ---- cat / stack / split / chunk ----
  {
    auto list_case = [](std::string variant, bool stack_, int64_t dim, std::vector<Sample> samples) {
      OpCase c;
      c.variant = std::move(variant);
      c.samples = std::move(samples);
      c.fn = [stack_, dim](const TensorList& x) { return TensorList{stack_ ? stack(x, dim) : cat(x, dim)}; };
      c.ref = [stack_, dim](const V& x) {
        if (!stack_) return V{cat_ref(x, dim)};
        V u;
        for (auto& t : x) {
          Shape64 s = t.sizes;
          s.insert(s.begin() + wrap(dim, t.dim() + 1), 1);
          u.push_back(reshape_ref(t, s));
        }
        return V{cat_ref(u, dim)};
      };
      return c;
    };
    r.push_back({"cat",
                 {list_case("dim0", false, 0,
                            {{"2x3_1x3", {rnd({2, 3}), rnd({1, 3})}},
                             {"three_1d", {rnd({2}), rnd({1}), rnd({3})}},
                             {"with_empty_0x3", {rnd({0, 3}), rnd({2, 3})}},
                             {"legacy_skip_1d_empty", {rnd({2, 2}), rnd({0}), rnd({1, 2})}, false}}),
                  list_case("dim_neg1", false, -1, {{"2x1_2x3", {rnd({2, 1}), rnd({2, 3})}}}),
                  list_case("single", false, 1, {{"2x2", {rnd({2, 2})}}})}});
    r.push_back(
        {"stack",
         {list_case("dim0", true, 0, {{"3_3", {rnd({3}), rnd({3})}}, {"0d_0d_0d", {rnd({}), rnd({}), rnd({})}}}),
          list_case("dim_neg1", true, -1, {{"2x2_2x2", {rnd({2, 2}), rnd({2, 2})}}}),
          list_case("dim1_empty", true, 1, {{"0x2_0x2", {rnd({0, 2}), rnd({0, 2})}}})}});
  }
  {
    auto split_case = [](std::string variant, std::function<TensorList(const Tensor&)> f,
                         std::function<Shape64(const RT&)> pieces, int64_t dim, std::vector<Sample> samples) {
      OpCase c;
      c.variant = std::move(variant);
      c.samples = std::move(samples);
      c.fn = [f](const TensorList& x) { return f(x[0]); };
      c.ref = [pieces, dim](const V& x) { return split_ref(x[0], pieces(x[0]), dim); };
      return c;
    };
    r.push_back({"split",
                 {split_case(
                      "size2_dim0", [](const Tensor& a) { return split(a, 2, 0); },
                      [](const RT& a) {
                        Shape64 p;
                        for (int64_t s = 0; s < a.sizes[0]; s += 2) p.push_back(std::min<int64_t>(2, a.sizes[0] - s));
                        return p;
                      },
                      0, {{"5x2", {rnd({5, 2})}}, {"4", {rnd({4})}}}),
                  split_case(
                      "size1_dim1", [](const Tensor& a) { return a.split(1, 1); },
                      [](const RT&) {
                        return Shape64{1, 1, 1};
                      },
                      1, {{"2x3", {rnd({2, 3})}}}),
                  split_case(
                      "one_output_used", [](const Tensor& a) { return TensorList{split(a, 2, 0)[1]}; },
                      [](const RT&) { return Shape64{2}; }, 0, {}),
                  split_case(
                      "empty_dim", [](const Tensor& a) { return split(a, 2, 1); },
                      [](const RT&) {
                        return Shape64{2, 1};
                      },
                      1, {{"0x3", {rnd({0, 3})}}})}});
    // reference for one_output_used: the second piece of size 2 along dim 0
    r.back().cases[2].samples = {{"4x2", {rnd({4, 2})}}};
    r.back().cases[2].ref = [](const V& x) { return V{slice_ref(x[0], 0, 2, 2)}; };
    r.push_back({"split_with_sizes",
                 {split_case(
                      "dim_neg1",
                      [](const Tensor& a) {
                        return split_with_sizes(a, {1, 0, 2}, -1);
                      },
                      [](const RT&) {
                        return Shape64{1, 0, 2};
                      },
                      -1, {{"2x3", {rnd({2, 3})}}}),
                  split_case(
                      "method_dim0",
                      [](const Tensor& a) {
                        return a.split(IntArrayRef{2, 1}, 0);
                      },
                      [](const RT&) {
                        return Shape64{2, 1};
                      },
                      0, {{"3x2", {rnd({3, 2})}}})}});
    r.push_back({"chunk",
                 {split_case(
                      "3_of_5", [](const Tensor& a) { return chunk(a, 3, 0); },
                      [](const RT&) {
                        return Shape64{2, 2, 1};
                      },
                      0, {{"5x2", {rnd({5, 2})}}}),
                  split_case(
                      "2_of_4_dim1", [](const Tensor& a) { return a.chunk(2, 1); },
                      [](const RT&) {
                        return Shape64{2, 2};
                      },
                      1, {{"2x4", {rnd({2, 4})}}}),
                  split_case(
                      "4_of_3", [](const Tensor& a) { return chunk(a, 4, 0); },
                      [](const RT&) {
                        return Shape64{1, 1, 1};
                      },
                      0, {{"3", {rnd({3})}}})}});
  }
  {
    // unbind: every select along dim as one multi-output call
    auto unbind_case = [](std::string variant, std::function<TensorList(const Tensor&)> f, int64_t dim,
                          std::vector<Sample> samples) {
      OpCase c;
      c.variant = std::move(variant);
      c.samples = std::move(samples);
      c.fn = [f](const TensorList& x) { return f(x[0]); };
      c.ref = [dim](const V& x) {
        V out;
        for (int64_t i = 0; i < x[0].size(dim); ++i) out.push_back(select_ref(x[0], dim, i));
        return out;
      };
      return c;
    };
    OpCase one_used = unbind_case("one_output_used", [](const Tensor& a) { return TensorList{unbind(a, 0)[1]}; }, 0,
                                  {{"3x2", {rnd({3, 2})}}});
    one_used.ref = [](const V& x) { return V{select_ref(x[0], 0, 1)}; };
    r.push_back({"unbind",
                 {unbind_case("dim0", [](const Tensor& a) { return unbind(a); }, 0,
                              {{"3x2", {rnd({3, 2})}}, {"2", {rnd({2})}}, {"2x0", {rnd({2, 0})}}}),
                  unbind_case("dim_neg1", [](const Tensor& a) { return a.unbind(-1); }, -1,
                              {{"2x3", {rnd({2, 3})}}, {"2x2x3", {rnd({2, 2, 3})}}}),
                  one_used}});
  }
  {
    // repeat: out[i] = a[i mod size] over the sizes padded with leading ones
    auto repeat_case = [](std::string variant, Shape64 reps, std::vector<Sample> samples) {
      OpCase c;
      c.variant = std::move(variant);
      c.samples = std::move(samples);
      c.fn = [reps](const TensorList& x) { return TensorList{repeat(x[0], reps)}; };
      c.ref = [reps](const V& x) {
        const RT& a = x[0];
        Shape64 padded(reps.size() - a.sizes.size(), 1), out;
        padded.insert(padded.end(), a.sizes.begin(), a.sizes.end());
        for (size_t i = 0; i < reps.size(); ++i) out.push_back(padded[i] * reps[i]);
        RT r{out, {}, a.dtype};
        const Shape64 st = contiguous_strides_of(padded);
        for (int64_t k = 0; k < numel_of(out); ++k) {
          Shape64 idx = unravel(k, out);
          int64_t o = 0;
          for (size_t i = 0; i < idx.size(); ++i) o += (idx[i] % padded[i]) * st[i];
          r.v.push_back(a.v[static_cast<size_t>(o)]);
        }
        return V{r};
      };
      return c;
    };
    r.push_back({"repeat",
                 {f32(repeat_case("2_1_3", {2, 1, 3},
                                  {{"2x3_to_3d", {rnd({2, 3})}}, {"4_pad", {rnd({4})}}, {"0d_pad", {rnd({})}}})),
                  repeat_case("ones_copy", {1, 1}, {{"2x3", {rnd({2, 3})}}}),
                  repeat_case("zero", {0, 2}, {{"2x3", {rnd({2, 3})}}}),
                  repeat_case("empty_input", {3, 2}, {{"0x2", {rnd({0, 2})}}}),
                  repeat_case("0d_no_reps", {}, {{"0d", {rnd({})}}})}});
  }
  // ---- indexing ----
  {
    OpCase c;
    c.variant = "dim0";
    c.samples = {{"3x2_idx3_dup", {rnd({3, 2}), ints({3}, {2, 0, 2})}},
                 {"4_idx2", {rnd({4}), ints({2}, {3, 1})}},
                 {"0d_idx0d", {rnd({}), ints({}, {0})}},
                 {"3x2_idx_empty", {rnd({3, 2}), ints({0}, {})}}};
    c.fn = [](const TensorList& x) { return TensorList{index_select(x[0], 0, x[1])}; };
    c.ref = [](const V& x) {
      if (x[0].dim() == 0) return V{x[0]};
      V parts;
      for (double i : x[1].v) parts.push_back(slice_ref(x[0], 0, static_cast<int64_t>(i), 1));
      if (parts.empty()) return V{slice_ref(x[0], 0, 0, 0)};
      return V{cat_ref(parts, 0)};
    };
    OpCase c1 = c;
    c1.variant = "dim1";
    c1.samples = {{"2x3_idx4", {rnd({2, 3}), ints({4}, {1, 1, 0, 2})}}};
    c1.fn = [](const TensorList& x) { return TensorList{x[0].index_select(1, x[1])}; };
    c1.ref = [](const V& x) {
      V parts;
      for (double i : x[1].v) parts.push_back(slice_ref(x[0], 1, static_cast<int64_t>(i), 1));
      return V{cat_ref(parts, 1)};
    };
    r.push_back({"index_select", {c, c1}});
  }
  {
    auto index_add_ref = [](int64_t dim) {
      return [dim](const V& x) {
        RT out = x[0];
        const int64_t d = wrap(dim, x[0].dim());
        for (int64_t k = 0; k < x[2].numel(); ++k) {
          Shape64 idx = unravel(k, x[2].sizes);
          const int64_t j = static_cast<int64_t>(x[1].v[static_cast<size_t>(idx[d])]);
          out.v[offset_with(out.sizes, idx, d, j)] += x[2].v[k];
        }
        return V{out};
      };
    };
    OpCase c;
    c.variant = "dim0";
    c.samples = {{"3x2_idx3dup_src3x2", {rnd({3, 2}), ints({3}, {2, 0, 2}), rnd({3, 2})}},
                 {"4_idx2_src2", {rnd({4}), ints({2}, {3, 3}), rnd({2})}},
                 {"empty_index", {rnd({3, 2}), ints({0}, {}), rnd({0, 2})}}};
    c.fn = [](const TensorList& x) { return TensorList{index_add(x[0], 0, x[1], x[2])}; };
    c.ref = index_add_ref(0);
    OpCase c1 = c;
    c1.variant = "dim1";
    c1.samples = {{"2x3_idx2_src2x2", {rnd({2, 3}), ints({2}, {2, 0}), rnd({2, 2})}}};
    c1.fn = [](const TensorList& x) { return TensorList{index_add(x[0], 1, x[1], x[2])}; };
    c1.ref = index_add_ref(1);
    r.push_back({"index_add", {c, c1}});
  }
  {
    auto gather_ref = [](int64_t dim) {
      return [dim](const V& x) {
        RT out{x[1].sizes, {}, kFloat64};
        const int64_t d = wrap(dim, std::max<int64_t>(x[0].dim(), 1));
        for (int64_t k = 0; k < x[1].numel(); ++k) {
          Shape64 idx = unravel(k, x[1].sizes);
          out.v.push_back(x[0].v[offset_with(x[0].sizes, idx, d, static_cast<int64_t>(x[1].v[k]))]);
        }
        return V{out};
      };
    };
    OpCase c;
    c.variant = "dim1";
    c.samples = {{"2x3_idx2x2", {rnd({2, 3}), ints({2, 2}, {2, 0, 1, 1})}},
                 {"2x3_idx2x4", {rnd({2, 3}), ints({2, 4}, {0, 0, 2, 1, 2, 2, 1, 0})}},
                 {"2x3_idx_empty", {rnd({2, 3}), ints({2, 0}, {})}}};
    c.fn = [](const TensorList& x) { return TensorList{gather(x[0], 1, x[1])}; };
    c.ref = gather_ref(1);
    OpCase c0 = c;
    c0.variant = "dim0";
    c0.samples = {{"3x2_idx2x2", {rnd({3, 2}), ints({2, 2}, {2, 0, 0, 0})}}, {"3_idx2", {rnd({3}), ints({2}, {1, 2})}}};
    c0.fn = [](const TensorList& x) { return TensorList{x[0].gather(0, x[1])}; };
    c0.ref = gather_ref(0);
    r.push_back({"gather", {c, c0}});
  }
  {
    auto scatter_ref = [](int64_t dim) {
      return [dim](const V& x) {
        RT out = x[0];
        for (int64_t k = 0; k < x[1].numel(); ++k) {
          Shape64 idx = unravel(k, x[1].sizes);
          Shape64 sst = contiguous_strides_of(x[2].sizes);
          int64_t so = 0;
          for (size_t i = 0; i < idx.size(); ++i) so += idx[i] * sst[i];
          out.v[offset_with(out.sizes, idx, dim, static_cast<int64_t>(x[1].v[k]))] += x[2].v[so];
        }
        return V{out};
      };
    };
    OpCase c;
    c.variant = "dim0";
    c.samples = {{"3x2_idx2x2_dup", {rnd({3, 2}), ints({2, 2}, {2, 0, 2, 2}), rnd({2, 2})}},
                 {"3_idx3", {rnd({3}), ints({3}, {0, 0, 1}), rnd({3})}},
                 {"3x2_idx_empty", {rnd({3, 2}), ints({0, 2}, {}), rnd({0, 2})}}};
    c.fn = [](const TensorList& x) { return TensorList{scatter_add(x[0], 0, x[1], x[2])}; };
    c.ref = scatter_ref(0);
    OpCase c1 = c;
    c1.variant = "dim1";
    c1.samples = {{"2x3_idx2x3", {rnd({2, 3}), ints({2, 3}, {1, 1, 0, 2, 0, 2}), rnd({2, 3})}}};
    c1.fn = [](const TensorList& x) { return TensorList{x[0].scatter_add(1, x[1], x[2])}; };
    c1.ref = scatter_ref(1);
    r.push_back({"scatter_add", {c, c1}});
  }
  {
    OpCase c;
    c.variant = "";
    c.samples = {{"2x3_mask2x3", {rnd({2, 3}), bools({2, 3}, {1, 0, 0, 1, 1, 0})}},
                 {"2x3_mask3_bcast", {rnd({2, 3}), bools({3}, {0, 1, 0})}},
                 {"0d_mask0d", {rnd({}), bools({}, {1})}},
                 {"empty", {rnd({0, 3}), bools({3}, {1, 0, 1})}}};
    c.fn = [](const TensorList& x) { return TensorList{masked_fill(x[0], x[1], -7.5)}; };
    c.ref = [](const V& x) { return V{zip(x[0], x[1], [](double a, double m) { return m != 0 ? -7.5 : a; })}; };
    OpCase b = c;
    b.variant = "mask_bcasts_self";
    b.samples = {{"3_mask2x3", {rnd({3}), bools({2, 3}, {1, 0, 0, 0, 1, 0})}}};
    OpCase i = c;
    i.variant = "int";
    i.samples = {{"int_3", {ints({3}, {1, 2, 3}), bools({3}, {0, 1, 0})}}};
    i.fn = [](const TensorList& x) { return TensorList{x[0].masked_fill(x[1], 9)}; };
    i.ref = [](const V& x) {
      return V{zip(
          x[0], x[1], [](double a, double m) { return m != 0 ? 9 : a; }, kInt64)};
    };
    i.differentiable = false;
    r.push_back({"masked_fill", {c, b, i}});
  }
}

}  // namespace graft::testing
