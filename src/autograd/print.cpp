// Tensor printing in PyTorch's format: tensor([[1.0000, 2.5000], ...], requires_grad=True).
// Float formatting follows torch/_tensor_str.py: integer mode, fixed 4 decimals, or
// scientific when the dynamic range is large; every entry padded to a common width.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "graft/autograd/node.h"
#include "graft/core/grad_mode.h"
#include "graft/ops/ops.h"

namespace graft {
namespace {

constexpr int64_t kThreshold = 1000, kEdge = 3;

struct Formatter {
  DType dtype;
  bool int_mode = true, sci = false;
  size_t width = 1;

  explicit Formatter(const std::vector<Scalar>& scalars, DType dt) : dtype(dt) {
    if (is_floating_point(dt)) {
      std::vector<double> vals;
      for (const Scalar& x : scalars) vals.push_back(x.to_double());
      double mx = 0, mn = INFINITY;
      bool any = false;
      for (double v : vals) {
        if (!std::isfinite(v)) continue;
        if (v != std::ceil(v)) int_mode = false;
        double a = std::fabs(v);
        if (a == 0) continue;
        any = true;
        mx = std::max(mx, a);
        mn = std::min(mn, a);
      }
      if (any) {
        if (int_mode)
          sci = (mx / mn > 1000.0) || mx > 1e8;
        else
          sci = (mx / mn > 1000.0) || mx > 1e8 || mn < 1e-4;
      }
      // as _tensor_str.py: the width comes from the non-zero finite values only
      for (const Scalar& x : scalars)
        if (std::isfinite(x.to_double()) && x.to_double() != 0) width = std::max(width, fmt(x).size());
      return;
    }
    for (const Scalar& x : scalars) width = std::max(width, fmt(x).size());
  }
  // Integers are formatted from their exact int64 value (no trip through double).
  std::string fmt(const Scalar& x) const {
    char buf[64];
    if (dtype == kBool) return x.to<bool>() ? "True" : "False";
    if (!is_floating_point(dtype)) {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x.to_long()));
      return buf;
    }
    const double v = x.to_double();
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci)
      std::snprintf(buf, sizeof buf, "%.4e", v);
    else if (int_mode)
      std::snprintf(buf, sizeof buf, "%.0f.", v);
    else
      std::snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
  }
  std::string pad(const Scalar& v) const {
    std::string s = fmt(v);
    return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
  }
};

// The number of leading size-1 dims of `t` above its last one, and `t` without them (a view).
// Printing them one select() at a time costs O(dims) per level and a stack frame each: a
// [1] * 100000 tensor took quadratic time and could overflow the stack; stripped at once, the
// recursion only descends through dims of size 2 or more (fewer than 64 of them).
int64_t strip_unit_dims(const Tensor& t, Tensor& rest) {
  int64_t k = 0;
  while (k + 1 < t.dim() && t.size(k) == 1) ++k;
  if (k > 0) {
    Shape sizes, strides;
    for (int64_t d = k; d < t.dim(); ++d) {
      sizes.push_back(t.size(d));
      strides.push_back(t.stride(d));
    }
    rest = t.as_strided(sizes, strides, t.storage_offset());
  }
  return k;
}

// Collects the values that will be shown (edges only when summarizing).
void collect(const Tensor& t, bool summarize, std::vector<Scalar>& out) {
  if (t.dim() == 0) {
    out.push_back(t.item());
    return;
  }
  Tensor rest;
  if (strip_unit_dims(t, rest)) return collect(rest, summarize, out);
  int64_t n = t.size(0);
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdge && i == kEdge) i = n - kEdge;
    collect(t.select(0, i), summarize, out);
  }
}

constexpr size_t kLineWidth = 80;

void render(std::ostringstream& os, const Tensor& t, const Formatter& f, bool summarize, size_t indent) {
  if (t.dim() == 0) {
    os << f.pad(t.item());
    return;
  }
  Tensor rest;
  if (const int64_t k = strip_unit_dims(t, rest)) {  // "[[[" + the rest, indented as deep, + "]]]"
    os << std::string(static_cast<size_t>(k), '[');
    render(os, rest, f, summarize, indent + static_cast<size_t>(k));
    os << std::string(static_cast<size_t>(k), ']');
    return;
  }
  const int64_t n = t.size(0);
  const bool cut = summarize && n > 2 * kEdge;
  if (t.dim() == 1) {  // _vector_str: wraps at 80 columns
    std::vector<std::string> items;
    for (int64_t i = 0; i < n; ++i) {
      if (cut && i == kEdge) {
        items.push_back(" ...");
        i = n - kEdge;
      }
      items.push_back(f.pad(t.select(0, i).item()));
    }
    const size_t per_line = std::max<size_t>(1, (kLineWidth > indent ? kLineWidth - indent : 0) / (f.width + 2));
    os << "[";
    for (size_t k = 0; k < items.size(); ++k) {
      if (k && k % per_line)
        os << ", ";
      else if (k)
        os << ",\n" << std::string(indent + 1, ' ');
      os << items[k];
    }
    os << "]";
    return;
  }
  std::string sep(1, ',');
  sep.append(static_cast<size_t>(t.dim() - 1), '\n');
  sep.append(indent + 1, ' ');
  os << "[";
  for (int64_t i = 0; i < n; ++i) {
    if (i) os << sep;
    if (cut && i == kEdge) {
      os << "..." << sep;
      i = n - kEdge;
    }
    render(os, t.select(0, i), f, summarize, indent + 1);
  }
  os << "]";
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "[ Tensor (undefined) ]";
  NoGradGuard ng;
  std::ostringstream os;
  os << "tensor(";
  std::vector<std::string> suffixes;
  auto size_suffix = [&] {
    std::string sz = "size=(";
    for (int64_t i = 0; i < dim(); ++i) sz += (i ? ", " : "") + std::to_string(size(i));
    return sz + (dim() == 1 ? ",)" : ")");
  };
  if (device().is_meta()) {  // no values to show: PyTorch's "tensor(..., device='meta', size=(2, 3))"
    os << "...";
    suffixes.push_back("device='meta'");
    suffixes.push_back(size_suffix());
    if (dtype() != default_dtype()) suffixes.push_back(std::string("dtype=graft.") + dtype_name(dtype()));
  } else {
    const bool summarize = numel() > kThreshold;
    std::vector<Scalar> vals;
    Tensor d = detach();
    if (numel() > 0) collect(d, summarize, vals);
    Formatter f(vals, dtype());
    if (numel() == 0)
      os << "[]";
    else
      render(os, d, f, summarize, 7);
  }
  if (device().is_meta()) {
  } else if (numel() == 0) {
    if (dim() != 1) suffixes.push_back(size_suffix());
    if (dtype() != default_dtype()) suffixes.push_back(std::string("dtype=graft.") + dtype_name(dtype()));
  } else if (dtype() != kFloat32 && dtype() != kInt64 && dtype() != kBool) {
    suffixes.push_back(std::string("dtype=graft.") + dtype_name(dtype()));
  }
  if (grad_fn())
    suffixes.push_back("grad_fn=<" + grad_fn()->class_name() + ">");
  else if (requires_grad())
    suffixes.push_back("requires_grad=True");
  // _add_suffixes: a suffix that would pass 80 columns starts a new line
  const std::string body = os.str();
  const size_t nl = body.rfind('\n');
  size_t last_line_len = (nl == std::string::npos ? body.size() + 1 : body.size() - nl) + 1;
  for (const auto& sfx : suffixes) {
    if (last_line_len + sfx.size() + 2 > kLineWidth) {
      os << ",\n" << std::string(7, ' ') << sfx;
      last_line_len = 7 + sfx.size();
    } else {
      os << ", " << sfx;
      last_line_len += sfx.size() + 2;
    }
  }
  os << ")";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace graft
