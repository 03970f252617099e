// Contractions written in permute, reshape and mm/bmm (declared in src/ops/ops.yaml, the
// composite family): tensordot, kron and einsum. einsum parses its equation, takes the diagonal
// of each operand's repeated subscript, lines every operand up on one order of dims and
// contracts them pairwise, left to right, each pair one bmm (as PyTorch's sumproduct_pair).
#include <algorithm>
#include <numeric>

#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
namespace {

// A dim's id in einsum: a subscript (A-Z are 0-25, a-z 26-51, PyTorch's order of the implicit
// output) or an ellipsis dim (kEllipsisBase + its place in the broadcast ellipsis block).
constexpr int kEllipsis = -1;  // a parsed term's "..."
constexpr int kEllipsisBase = 52;

char label_char(int l) { return static_cast<char>(l < 26 ? 'A' + l : 'a' + (l - 26)); }

// The subscripts of eq[begin, end) ("ij", "...k"), kEllipsis for "...".
std::vector<int> parse_term(const std::string& eq, size_t begin, size_t end) {
  std::vector<int> labels;
  for (size_t i = begin; i < end; ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      GRAFT_CHECK(i + 2 < end && eq[i + 1] == '.' && eq[i + 2] == '.', RuntimeError,
                  "einsum(): found '.' for operand that is not part of any ellipsis");
      GRAFT_CHECK(std::find(labels.begin(), labels.end(), kEllipsis) == labels.end(), RuntimeError,
                  "einsum(): found '.' for operand for which an ellipsis was already found");
      labels.push_back(kEllipsis);
      i += 2;
      continue;
    }
    const bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
    GRAFT_CHECK(upper || lower, RuntimeError, "einsum(): invalid subscript given at index ", i,
                " in the equation string, subscripts must be in [a-zA-Z]");
    labels.push_back(upper ? c - 'A' : c - 'a' + 26);
  }
  return labels;
}

// The equation parsed against its operands: each operand's dim ids, and the output's.
struct Equation {
  std::vector<std::vector<int>> inputs;  // one id per dim of each operand ("..." expanded)
  std::vector<int> output;               // the output's ids, in order
  int64_t ellipsis_dims = 0;             // the broadcast ellipsis block's length
};

// Checks an operand's subscripts against its dims and expands its "..." into ellipsis ids
// (right-aligned in a block of `block` dims).
std::vector<int> operand_ids(const std::vector<int>& term, const Tensor& t, size_t index, int64_t block) {
  const bool has_ellipsis = std::find(term.begin(), term.end(), kEllipsis) != term.end();
  const int64_t letters = static_cast<int64_t>(term.size()) - (has_ellipsis ? 1 : 0);
  const int64_t own = t.dim() - letters;
  std::vector<int> ids;
  for (int l : term) {
    if (l != kEllipsis) {
      ids.push_back(l);
      continue;
    }
    for (int64_t k = block - own; k < block; ++k) ids.push_back(static_cast<int>(kEllipsisBase + k));
  }
  return ids;
}

void check_term_dims(const std::vector<int>& term, const Tensor& t, size_t index) {
  const bool has_ellipsis = std::find(term.begin(), term.end(), kEllipsis) != term.end();
  const int64_t letters = static_cast<int64_t>(term.size()) - (has_ellipsis ? 1 : 0);
  if (has_ellipsis)
    GRAFT_CHECK(letters <= t.dim(), RuntimeError, "einsum(): the number of subscripts in the equation (", letters,
                ") is more than the number of dimensions (", t.dim(), ") for operand ", index);
  else
    GRAFT_CHECK(letters == t.dim(), RuntimeError, "einsum(): the number of subscripts in the equation (", letters,
                ") does not match the number of dimensions (", t.dim(), ") for operand ", index,
                " and no ellipsis was given");
}

// The output's ids: explicit after "->" or, implicit, the ellipsis block then the subscripts
// seen exactly once, in id order.
std::vector<int> output_ids(const std::string& eq, size_t arrow, const Equation& e) {
  std::vector<int> counts(kEllipsisBase, 0);
  bool any_ellipsis = e.ellipsis_dims > 0;
  for (const auto& ids : e.inputs)
    for (int id : ids)
      if (id < kEllipsisBase) ++counts[static_cast<size_t>(id)];
  std::vector<int> out;
  auto add_block = [&] {
    for (int64_t k = 0; k < e.ellipsis_dims; ++k) out.push_back(static_cast<int>(kEllipsisBase + k));
  };
  if (arrow == std::string::npos) {
    if (any_ellipsis) add_block();
    for (int l = 0; l < kEllipsisBase; ++l)
      if (counts[static_cast<size_t>(l)] == 1) out.push_back(l);
    return out;
  }
  for (int l : parse_term(eq, arrow + 2, eq.size())) {
    if (l == kEllipsis) {
      add_block();
      continue;
    }
    GRAFT_CHECK(counts[static_cast<size_t>(l)] > 0, RuntimeError, "einsum(): output subscript ", label_char(l),
                " does not appear in the equation for any input operand");
    GRAFT_CHECK(std::find(out.begin(), out.end(), l) == out.end(), RuntimeError, "einsum(): output subscript ",
                label_char(l), " appears more than once in the output");
    out.push_back(l);
  }
  return out;
}

Equation parse_equation(const std::string& eq, const TensorList& tensors) {
  GRAFT_CHECK(!tensors.empty(), RuntimeError, "einsum(): must provide at least one operand");
  const size_t arrow = eq.find("->");
  const size_t lhs_end = arrow == std::string::npos ? eq.size() : arrow;
  std::vector<std::vector<int>> terms;
  for (size_t begin = 0;;) {
    const size_t comma = std::min(eq.find(',', begin), lhs_end);
    GRAFT_CHECK(terms.size() < tensors.size(), RuntimeError,
                "einsum(): fewer operands were provided than were specified in the equation");
    terms.push_back(parse_term(eq, begin, comma));
    if (comma >= lhs_end) break;
    begin = comma + 1;
  }
  GRAFT_CHECK(terms.size() == tensors.size(), RuntimeError,
              "einsum(): more operands were provided than specified in the equation");
  Equation e;
  for (size_t i = 0; i < terms.size(); ++i) {
    check_term_dims(terms[i], tensors[i], i);
    const bool has = std::find(terms[i].begin(), terms[i].end(), kEllipsis) != terms[i].end();
    if (has) e.ellipsis_dims = std::max(e.ellipsis_dims, tensors[i].dim() - static_cast<int64_t>(terms[i].size()) + 1);
  }
  for (size_t i = 0; i < terms.size(); ++i) e.inputs.push_back(operand_ids(terms[i], tensors[i], i, e.ellipsis_dims));
  e.output = output_ids(eq, arrow, e);
  return e;
}

// The operand with each repeated subscript's diagonal taken (ids updated to match).
Tensor take_diagonals(Tensor t, std::vector<int>& ids, size_t index) {
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto j = static_cast<size_t>(std::find(ids.begin() + static_cast<std::ptrdiff_t>(i) + 1, ids.end(), ids[i]) -
                                       ids.begin());
    if (j == ids.size()) continue;
    const auto di = static_cast<int64_t>(i), dj = static_cast<int64_t>(j);
    GRAFT_CHECK(t.size(di) == t.size(dj), RuntimeError, "einsum(): subscript ", label_char(ids[i]),
                " is repeated for operand ", index, " but the sizes don't match, ", t.size(dj), " != ", t.size(di));
    t = t.diagonal(0, di, dj);
    const int id = ids[i];
    ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(j));
    ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(i));
    ids.push_back(id);
    i = static_cast<size_t>(-1);  // the dims moved: look again from the start
  }
  return t;
}

// t (dims `ids`, distinct) permuted into `order`, a size-1 dim where it lacks an id.
Tensor line_up(const Tensor& t, const std::vector<int>& ids, const std::vector<int>& order) {
  std::vector<int64_t> perm;
  Shape sizes;
  for (int id : order) {
    const auto it = std::find(ids.begin(), ids.end(), id);
    if (it != ids.end()) perm.push_back(it - ids.begin());
    sizes.push_back(it != ids.end() ? t.size(it - ids.begin()) : 1);
  }
  return t.permute(perm).reshape(sizes);
}

std::vector<int64_t> joined(std::initializer_list<const std::vector<int64_t>*> parts) {
  std::vector<int64_t> all;
  for (const auto* p : parts) all.insert(all.end(), p->begin(), p->end());
  return all;
}

int64_t extent(const Tensor& t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= t.size(d);
  return n;
}

// a and b (lined up: the same dims, each size equal or 1) multiplied and summed over the dims in
// `sum` (left of size 1), as one bmm of [batch, left, k] by [batch, k, right].
Tensor sum_product_pair(Tensor a, Tensor b, const std::vector<bool>& sum) {
  std::vector<int64_t> batch, left, right, contracted, ones;
  for (int64_t d = 0; d < a.dim(); ++d) {
    const int64_t sa = a.size(d), sb = b.size(d);
    if (sum[static_cast<size_t>(d)] && sa != 1 && sb != 1) {
      contracted.push_back(d);
      continue;
    }
    if (sum[static_cast<size_t>(d)]) {  // only one side has it: sum it there first
      if (sa != 1) a = a.sum({d}, true);
      if (sb != 1) b = b.sum({d}, true);
      ones.push_back(d);
    } else if (sa == 1 && sb == 1) {
      ones.push_back(d);
    } else {
      (sb == 1 ? left : sa == 1 ? right : batch).push_back(d);
    }
  }
  const int64_t nb = extent(a, batch), nl = extent(a, left), nk = extent(a, contracted), nr = extent(b, right);
  const Tensor am = a.permute(joined({&batch, &left, &contracted, &right, &ones})).reshape({nb, nl, nk});
  const Tensor bm = b.permute(joined({&batch, &contracted, &right, &left, &ones})).reshape({nb, nk, nr});
  const std::vector<int64_t> placed = joined({&batch, &left, &right, &contracted, &ones});
  Shape sizes;
  for (int64_t d : placed) {
    const bool kept = std::find(contracted.begin(), contracted.end(), d) == contracted.end();
    sizes.push_back(!kept ? 1 : std::max(a.size(d), b.size(d)));
  }
  std::vector<int64_t> inverse(placed.size());
  for (size_t i = 0; i < placed.size(); ++i) inverse[static_cast<size_t>(placed[i])] = static_cast<int64_t>(i);
  return bmm(am, bm).reshape(sizes).permute(inverse);
}

// Every lined-up operand's size at each dim equal to the others' or 1.
void check_broadcast(const std::vector<Tensor>& lined, const std::vector<int>& order) {
  for (size_t p = 0; p < order.size(); ++p) {
    int64_t seen = 1;
    for (size_t i = 0; i < lined.size(); ++i) {
      const int64_t s = lined[i].size(static_cast<int64_t>(p));
      if (s == 1 || s == seen || seen == 1) {
        seen = std::max(seen, s);
        continue;
      }
      if (order[p] >= kEllipsisBase) (void)detail::broadcast_shapes({seen}, {s});  // throws its text
      throw RuntimeError(detail::str("einsum(): subscript ", label_char(order[p]), " has size ", s, " for operand ", i,
                                     " which does not broadcast with previously seen size ", seen));
    }
  }
}

}  // namespace

Tensor einsum(const std::string& equation, const TensorList& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) detail::check_tensor(tensors[i], "einsum", "tensors");
  Equation e = parse_equation(equation, tensors);
  std::vector<int> order = e.output;  // the output's ids, then those summed away
  for (int id = 0; id < kEllipsisBase + e.ellipsis_dims; ++id)
    if (std::find(order.begin(), order.end(), id) == order.end() &&
        std::any_of(e.inputs.begin(), e.inputs.end(),
                    [id](const auto& ids) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }))
      order.push_back(id);
  std::vector<Tensor> lined;
  std::vector<std::vector<bool>> has(tensors.size(), std::vector<bool>(order.size()));
  for (size_t i = 0; i < tensors.size(); ++i) {
    Tensor t = take_diagonals(tensors[i], e.inputs[i], i);
    for (size_t p = 0; p < order.size(); ++p)
      has[i][p] = std::find(e.inputs[i].begin(), e.inputs[i].end(), order[p]) != e.inputs[i].end();
    lined.push_back(line_up(t, e.inputs[i], order));
  }
  check_broadcast(lined, order);
  const size_t n_out = e.output.size();
  auto summable = [&](size_t after) {  // the summed dims no operand after `after` has
    std::vector<bool> sum(order.size(), false);
    for (size_t p = n_out; p < order.size(); ++p) {
      sum[p] = true;
      for (size_t j = after + 1; j < lined.size(); ++j) sum[p] = sum[p] && !has[j][p];
    }
    return sum;
  };
  Tensor result = lined[0];
  const std::vector<bool> first = summable(0);
  std::vector<int64_t> alone;
  for (size_t p = 0; p < order.size(); ++p)
    if (first[p] && result.size(static_cast<int64_t>(p)) != 1) alone.push_back(static_cast<int64_t>(p));
  if (!alone.empty()) result = result.sum(alone, true);
  for (size_t i = 1; i < lined.size(); ++i) result = sum_product_pair(result, lined[i], summable(i));
  Shape out_sizes;
  for (size_t p = 0; p < n_out; ++p) out_sizes.push_back(result.size(static_cast<int64_t>(p)));
  return result.reshape(out_sizes);
}

Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_a, IntArrayRef dims_b) {
  detail::check_tensor(self, "tensordot", "self");
  detail::check_tensor(other, "tensordot", "other");
  GRAFT_CHECK(dims_a.size() == dims_b.size(), RuntimeError, "both dimension lists should have same length");
  std::vector<bool> in_a(static_cast<size_t>(self.dim()), false), in_b(static_cast<size_t>(other.dim()), false);
  std::vector<int64_t> contracted_a, contracted_b, free_a, free_b;
  Shape out_sizes;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t da = detail::wrap_dim(dims_a[i], self.dim(), "tensordot");
    const int64_t db = detail::wrap_dim(dims_b[i], other.dim(), "tensordot");
    GRAFT_CHECK(self.size(da) == other.size(db), RuntimeError,
                "contracted dimensions need to match, but first has size ", self.size(da), " in dim ", da,
                " and second has size ", other.size(db), " in dim ", db);
    in_a[static_cast<size_t>(da)] = in_b[static_cast<size_t>(db)] = true;
    contracted_a.push_back(da);
    contracted_b.push_back(db);
  }
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!in_a[static_cast<size_t>(d)]) free_a.push_back(d), out_sizes.push_back(self.size(d));
  for (int64_t d = 0; d < other.dim(); ++d)
    if (!in_b[static_cast<size_t>(d)]) free_b.push_back(d), out_sizes.push_back(other.size(d));
  const int64_t k = extent(self, contracted_a);
  const Tensor a = self.permute(joined({&free_a, &contracted_a})).reshape({extent(self, free_a), k});
  const Tensor b = other.permute(joined({&contracted_b, &free_b})).reshape({k, extent(other, free_b)});
  return mm(a, b).reshape(out_sizes);
}

Tensor kron(const Tensor& self, const Tensor& other) {
  detail::check_tensor(self, "kron", "self");
  detail::check_tensor(other, "kron", "other");
  const int64_t n = std::max(self.dim(), other.dim());
  Shape a_sizes, b_sizes, out_sizes;
  for (int64_t d = 0; d < n; ++d) {  // dims aligned at the right; a missing one is 1
    const int64_t sa = d < n - self.dim() ? 1 : self.size(d - (n - self.dim()));
    const int64_t sb = d < n - other.dim() ? 1 : other.size(d - (n - other.dim()));
    a_sizes.push_back(sa);
    a_sizes.push_back(1);
    b_sizes.push_back(1);
    b_sizes.push_back(sb);
    out_sizes.push_back(sa * sb);
  }
  return mul(self.reshape(a_sizes), other.reshape(b_sizes)).reshape(out_sizes);
}

}  // namespace graft
