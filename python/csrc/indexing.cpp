// Tensor.__getitem__ / __setitem__: the Python index (an int, slice, None, ..., tensor, list,
// ndarray, or a tuple of them) parsed into graft's index items and applied with PyTorch's rules
// by the library (graft/ops/tensor_indexing.h), the same code as C++'s Tensor::index. Basic
// indexing returns views that share storage and version counter, as in PyTorch.
#include "graft/ops/tensor_indexing.h"
#include "python_common.h"

namespace graft::python {
namespace {

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

// One Python index object as an index item: None, ..., a bool, an int (or anything with
// __index__, or a 0-d integer tensor), a slice, a tensor, an ndarray or a sequence (advanced).
indexing::TensorIndex to_index_item(py::handle o) {
  if (o.is_none()) return indexing::None;
  if (o.ptr() == Py_Ellipsis) return indexing::Ellipsis;
  if (PyBool_Check(o.ptr())) return o.ptr() == Py_True;
  if (PyLong_Check(o.ptr())) return o.cast<int64_t>();
  if (PySlice_Check(o.ptr())) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(o.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
    return indexing::Slice(start, stop, step);
  }
  if (is_tensor(o) || is_ndarray(o)) {
    Tensor t = is_tensor(o) ? as_tensor_unchecked(o) : ndarray_index(o);
    if (t.dim() == 0 && is_integral(t.dtype(), false)) return t.item().to_long();  // selects, as an int
    return t;
  }
  if (PyList_Check(o.ptr()) || (PySequence_Check(o.ptr()) && !PyUnicode_Check(o.ptr()) && !PyBytes_Check(o.ptr())))
    return list_index(o);  // a list, or any other sequence (a range, a deque), as PyTorch's
  if (PyIndex_Check(o.ptr())) return py::int_(py::reinterpret_borrow<py::object>(o)).cast<int64_t>();
  throw IndexError(
      "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got " +
      std::string(py::str(o.get_type().attr("__name__"))) + ")");
}

std::vector<indexing::TensorIndex> parse(py::handle index) {
  std::vector<indexing::TensorIndex> items;
  if (!sequence_as_tuple(index)) {
    items.push_back(to_index_item(index));
    return items;
  }
  // owned items: a sequence may make them on access (the rows of a 2-d ndarray are fresh
  // views), and a py::handle taken from the sequence iterator would outlive them
  auto seq = py::reinterpret_borrow<py::sequence>(index);
  for (size_t i = 0; i < seq.size(); ++i) {
    py::object o = seq[i];
    items.push_back(to_index_item(o));
  }
  return items;
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
    return detail::index_with(self, parse(index));
  });
  cls.def("__setitem__", [](const Tensor& self, py::handle index, py::handle value) {
    const std::vector<indexing::TensorIndex> items = parse(index);
    detail::index_put_with(self, items, value_tensor(value, self));
  });
}

}  // namespace graft::python
