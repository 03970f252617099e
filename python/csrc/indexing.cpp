// Tensor.__getitem__ / __setitem__ with PyTorch's rules: ints select, slices (any positive
// step) narrow, None adds a dim, ... stands for the dims not named, and integer tensors,
// lists and boolean masks are advanced indices (graft::index / index_put_). Basic indexing
// returns views that share storage and version counter, as in PyTorch.
#include <algorithm>

#include "python_common.h"

namespace graft::python {
namespace {

/// One parsed entry of an index tuple.
struct IndexItem {
  enum Kind { Int, Slice, None, Ellipsis, Advanced, True, False } kind;
  int64_t value = 0;
  py::handle slice;
  Tensor tensor;  // Advanced
};

/// A Python list used as an index: an int64 tensor, or a bool tensor when it holds only bools.
Tensor list_index(py::handle list) {
  py::object seq = py::reinterpret_borrow<py::object>(list);
  bool all_bool = py::len(seq) > 0;
  for (py::handle v : seq) all_bool &= PyBool_Check(v.ptr());
  if (all_bool) {
    std::vector<int64_t> bits;
    for (py::handle v : seq) bits.push_back(v.ptr() == Py_True);
    return tensor(bits).to(kBool);
  }
  // nested lists (x[[[0, 1], [1, 0]]]) go through graft.tensor's conversion
  py::object t = py::module_::import("graft").attr("tensor")(list, py::arg("dtype") = py::cast(kInt64));
  return t.cast<Tensor>();
}

/// A numpy.ndarray (checked by type name, so numpy is never imported here).
bool is_ndarray(py::handle o) { return std::string(Py_TYPE(o.ptr())->tp_name) == "numpy.ndarray"; }

/// An ndarray index as a tensor: bool arrays are masks, any other array selects as int64.
Tensor ndarray_index(py::handle a) {
  py::module_ graft_mod = py::module_::import("graft");
  bool is_bool = std::string(py::str(a.attr("dtype").attr("kind"))) == "b";
  py::object t = graft_mod.attr("tensor")(a, py::arg("dtype") = py::cast(is_bool ? kBool : kInt64));
  return t.cast<Tensor>();
}

/// PyTorch's (and NumPy's) rule for a non-tuple sequence index: a short list or array that
/// holds a tensor, a sequence, a slice, None or ... is read as a tuple of indices
/// (`x[[rows, cols]]` is `x[rows, cols]`).
bool sequence_as_tuple(py::handle index) {
  if (PyTuple_Check(index.ptr())) return true;
  if (!PyList_Check(index.ptr()) && !is_ndarray(index)) return false;
  Py_ssize_t n = PySequence_Size(index.ptr());
  if (n < 0) {
    PyErr_Clear();
    return false;
  }
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    py::object item = py::reinterpret_steal<py::object>(PySequence_GetItem(index.ptr(), i));
    if (!item) {
      PyErr_Clear();
      return false;
    }
    if (is_tensor(item) || PySequence_Check(item.ptr()) || PySlice_Check(item.ptr()) || item.is_none() ||
        item.ptr() == Py_Ellipsis)
      return true;
  }
  return false;
}

std::vector<IndexItem> parse(py::handle index) {
  std::vector<IndexItem> items;
  auto add = [&](py::handle o) {
    IndexItem it{IndexItem::None, 0, {}, {}};
    if (o.is_none()) {
      it.kind = IndexItem::None;
    } else if (o.ptr() == Py_Ellipsis) {
      it.kind = IndexItem::Ellipsis;
    } else if (PyBool_Check(o.ptr())) {
      it.kind = o.ptr() == Py_True ? IndexItem::True : IndexItem::False;
    } else if (PyLong_Check(o.ptr())) {
      it.kind = IndexItem::Int;
      it.value = o.cast<int64_t>();
    } else if (PySlice_Check(o.ptr())) {
      it.kind = IndexItem::Slice;
      it.slice = o;
    } else if (is_tensor(o) || is_ndarray(o)) {
      Tensor t = is_tensor(o) ? as_tensor_unchecked(o) : ndarray_index(o);
      if (t.dim() == 0 && is_integral(t.dtype(), false)) {  // a 0-d integer tensor selects, as an int
        it.kind = IndexItem::Int;
        it.value = t.item().to_long();
      } else {
        GRAFT_CHECK(t.dtype() == kBool || is_integral(t.dtype(), false), IndexError,
                    "tensors used as indices must be long, int or bool tensors");
        it.kind = IndexItem::Advanced;
        it.tensor = t;
      }
    } else if (PyList_Check(o.ptr()) ||
               (PySequence_Check(o.ptr()) && !PyUnicode_Check(o.ptr()) && !PyBytes_Check(o.ptr()))) {
      it.kind = IndexItem::Advanced;  // a list, or any other sequence (a range, a deque), as PyTorch's
      it.tensor = list_index(o);
    } else if (PyIndex_Check(o.ptr())) {
      it.kind = IndexItem::Int;
      it.value = py::int_(py::reinterpret_borrow<py::object>(o)).cast<int64_t>();
    } else {
      throw IndexError(
          "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got " +
          std::string(py::str(o.get_type().attr("__name__"))) + ")");
    }
    items.push_back(std::move(it));
  };
  if (sequence_as_tuple(index)) {
    // owned items: a sequence may make them on access (the rows of a 2-d ndarray are fresh
    // views), and a py::handle taken from the sequence iterator would outlive them
    auto seq = py::reinterpret_borrow<py::sequence>(index);
    for (size_t i = 0; i < seq.size(); ++i) {
      py::object o = seq[i];
      add(o);
    }
  } else {
    add(index);
  }
  return items;
}

/// Applies the basic part of the index (ints, slices, None, ...) to `self`, and collects the
/// advanced indices against the dims of the result.
Tensor apply_basic(const Tensor& self, const std::vector<IndexItem>& items, std::vector<std::optional<Tensor>>& adv) {
  int64_t consumed = 0;
  bool seen_ellipsis = false;
  for (const IndexItem& it : items) {
    if (it.kind == IndexItem::Int || it.kind == IndexItem::Slice)
      consumed += 1;
    else if (it.kind == IndexItem::Advanced)
      consumed += it.tensor.dtype() == kBool ? it.tensor.dim() : 1;
    else if (it.kind == IndexItem::Ellipsis) {
      GRAFT_CHECK(!seen_ellipsis, IndexError, "an index can only have a single ellipsis ('...')");
      seen_ellipsis = true;
    }
  }
  GRAFT_CHECK(consumed <= self.dim(), IndexError, "too many indices for tensor of dimension ", self.dim());
  Tensor r = self;
  int64_t d = 0;          // current dim of r
  int64_t position = -1;  // the item's place in the index (the "dimension" PyTorch's errors name)
  int64_t extra = 0;      // dims of r covered by masks beyond their one entry of `adv` each
  bool any_adv = false;
  const bool has_advanced =
      std::any_of(items.begin(), items.end(), [](const IndexItem& it) { return it.kind == IndexItem::Advanced; });
  auto add_advanced = [&](const Tensor& index) {
    // one entry of `adv` per index; a k-dim mask covers k dims (index() expands it itself)
    any_adv = true;
    const int64_t slot = d - extra;
    while (static_cast<int64_t>(adv.size()) < slot) adv.push_back(std::nullopt);
    adv.resize(slot);
    adv.push_back(index);
    const int64_t covered = index.dtype() == kBool ? index.dim() : 1;
    d += covered;
    extra += covered - 1;
  };
  for (const IndexItem& it : items) {
    ++position;
    switch (it.kind) {
      case IndexItem::None:
        r = r.unsqueeze(d);
        adv.insert(adv.begin() + std::min<int64_t>(d - extra, adv.size()), std::nullopt);
        ++d;
        break;
      case IndexItem::True:
      case IndexItem::False:
        r = r.unsqueeze(d);
        if (has_advanced) {
          // beside advanced indices a bool is one of them (PyTorch: a 0-d mask): a [1] mask on
          // the new unit dim, broadcast with the others
          add_advanced(full({1}, Scalar(it.kind == IndexItem::True), TensorOptions(kBool)));
          break;
        }
        if (it.kind == IndexItem::False) r = r.slice(d, 0, 0);
        ++d;
        break;
      case IndexItem::Ellipsis:
        d += self.dim() - consumed;
        break;
      case IndexItem::Int: {
        int64_t size = r.size(d);
        GRAFT_CHECK(it.value >= -size && it.value < size, IndexError, "index ", it.value,
                    " is out of bounds for dimension ", position, " with size ", size);
        r = r.select(d, it.value);
        break;
      }
      case IndexItem::Slice: {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(it.slice.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
        GRAFT_CHECK(step > 0, ValueError, "step must be greater than zero");
        Py_ssize_t n = PySlice_AdjustIndices(r.size(d), &start, &stop, step);
        (void)n;
        // a full slice too, as PyTorch 1.13 records it (x[:, 1:3] is two SliceBackward0)
        r = r.slice(d, start, std::max(start, stop), step);
        ++d;
        break;
      }
      case IndexItem::Advanced:
        add_advanced(it.tensor);
        break;
    }
  }
  if (!any_adv) adv.clear();
  return r;
}

Tensor value_tensor(py::handle value, const Tensor& like) {
  if (is_tensor(value)) return as_tensor_unchecked(value);
  if (is_number(value)) return scalar_tensor(to_scalar(value), TensorOptions(like.dtype()).device(like.device()));
  py::object t = py::module_::import("graft").attr("tensor")(value, py::arg("dtype") = py::cast(like.dtype()));
  return t.cast<Tensor>();
}

}  // namespace

void init_indexing(py::class_<TensorImpl, intrusive_ptr<TensorImpl>>& cls) {
  cls.def("__getitem__", [](const Tensor& self, py::handle index) -> Tensor {
    // fast paths: x[i] and x[a:b]
    if (PyLong_Check(index.ptr()) && !PyBool_Check(index.ptr())) {
      GRAFT_CHECK(self.dim() > 0, IndexError,
                  "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                  "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
      int64_t i = index.cast<int64_t>(), size = self.size(0);
      GRAFT_CHECK(i >= -size && i < size, IndexError, "index ", i, " is out of bounds for dimension 0 with size ",
                  size);
      return self.select(0, i);
    }
    std::vector<std::optional<Tensor>> adv;
    Tensor r = apply_basic(self, parse(index), adv);
    if (adv.empty()) return r.is_same(self) ? alias(self) : r;  // x[...] is still a view (AliasBackward0)
    return graft::index(r, adv);
  });
  cls.def("__setitem__", [](const Tensor& self, py::handle index, py::handle value) {
    std::vector<std::optional<Tensor>> adv;
    Tensor target = apply_basic(self, parse(index), adv);
    Tensor v = value_tensor(value, self);
    if (adv.empty()) {
      target.copy_(v);
      return;
    }
    index_put_(target, adv, v.to(target.dtype()), false);
  });
}

}  // namespace graft::python
