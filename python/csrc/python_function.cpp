// Custom autograd Functions written in Python (graft.autograd.Function), built on graft's C++
// custom-function node (include/graft/autograd/function.h).
//
// One C++ object, PyNode, is at once the node of the graph, the `ctx` that forward/backward
// receive and the `grad_fn` of the outputs (as in PyTorch, where grad_fn IS the ctx). Its
// Python class is graft.autograd.function.BackwardCFunction; any Python wrapper of the node
// (the ctx in forward, the ctx in backward, `y.grad_fn`) shows the same state, because the
// state lives in the node:
//   - saved tensors: the C++ AutogradContext (released after backward unless retain_graph);
//   - `ctx.k = 3` attributes: a dict held by the node (freed with the node).
// A wrapper holds the node; the node never holds a wrapper, so there is no reference cycle.
// (A user can still make one the gc cannot see: an OUTPUT stored as a ctx attribute,
// `ctx.out = out`, instead of ctx.save_for_backward(out) - PyTorch's documented pitfall.)
#include "graft/autograd/function.h"

#include "python_common.h"

namespace graft::python {
namespace {

std::string type_name(py::handle o) { return py::str(o.get_type().attr("__name__")).cast<std::string>(); }

/// The node of a Python custom Function. Its backward takes the GIL and calls the Python
/// backward (the engine runs with the GIL released).
class PyNode final : public autograd::detail::CppNodeBase {
 public:
  std::string name() const override { return name_; }
  SafePyObject forward_cls;            ///< the Function subclass
  SafePyObject backward_fn;            ///< its backward (or vjp)
  SafePyObject attrs;                  ///< ctx attributes (a dict)
  std::vector<bool> is_tensor_output;  ///< per forward output: False for None and non-tensors

 protected:
  TensorList call_backward(TensorList grads) override;
};

[[noreturn]] void wrong_count(const std::string& name, size_t expected, size_t got) {
  throw RuntimeError(detail::str("function ", name, " returned an incorrect number of gradients (expected ", expected,
                                 ", got ", got, ")"));
}

TensorList PyNode::call_backward(TensorList grads) {
  py::gil_scoped_acquire gil;
  TensorList out;
  {
    py::tuple args(grads.size() + 1);
    args[0] = py::cast(intrusive_ptr<PyNode>(this));
    for (size_t i = 0; i < grads.size(); ++i) {
      const bool tensor_slot = i >= is_tensor_output.size() || is_tensor_output[i];
      args[i + 1] = tensor_slot ? py::cast(grads[i]) : py::none();
    }
    grads.clear();
    py::object r = backward_fn.get()(*args);
    py::tuple res = PyTuple_Check(r.ptr()) ? py::reinterpret_borrow<py::tuple>(r) : py::make_tuple(r);
    const size_t n_args = is_tensor_input.size();
    // The count is checked first (trailing Nones are tolerated), then the types.
    if (res.size() < n_args) wrong_count(name_, n_args, res.size());
    for (size_t i = n_args; i < res.size(); ++i)
      if (!res[i].is_none()) wrong_count(name_, n_args, res.size());
    for (size_t i = 0; i < n_args; ++i) {
      py::handle g = res[i];
      if (g.is_none()) {
        out.emplace_back();
        continue;
      }
      GRAFT_CHECK(is_tensor(g), RuntimeError, "expected Variable or None (got ", type_name(g), ")");
      out.push_back(as_tensor_unchecked(g));
    }
  }
  return out;
}

/// Tensors among `args` (one flag per argument).
TensorList tensor_args(const py::tuple& args, std::vector<bool>& is_tensor_arg) {
  TensorList out;
  for (py::handle a : args) {
    const bool t = is_tensor(a);
    is_tensor_arg.push_back(t);
    if (t) out.push_back(as_tensor_unchecked(a));
  }
  return out;
}

/// ctx.mark_dirty arguments: tensors only.
TensorList dirty_args(const py::args& args) {
  TensorList out;
  for (size_t i = 0; i < args.size(); ++i) {
    GRAFT_CHECK(is_tensor(args[i]), RuntimeError, "mark_dirty can only accept variables, but argument ", i,
                " is of type ", type_name(args[i]));
    out.push_back(as_tensor_unchecked(args[i]));
  }
  return out;
}

/// ctx.mark_non_differentiable arguments: tensors only.
TensorList non_differentiable_args(const py::args& args) {
  TensorList out;
  for (py::handle a : args) {
    GRAFT_CHECK(is_tensor(a), RuntimeError, "mark_non_differentiable only accepts variable arguments, but got ",
                type_name(a));
    out.push_back(as_tensor_unchecked(a));
  }
  return out;
}

/// Function.apply: records the node, runs forward without recording, and attaches the node
/// to forward's tensor outputs (PyTorch's THPFunction_apply).
py::object function_apply(py::handle cls, py::object backward_fn, bool once_differentiable, py::object setup_context,
                          const py::tuple& args, const py::dict& kwargs) {
  auto node = make_intrusive<PyNode>();
  node->name_ = py::str(cls.attr("__name__")).cast<std::string>() + "Backward";
  node->forward_cls = SafePyObject(py::reinterpret_borrow<py::object>(cls));
  node->backward_fn = SafePyObject(std::move(backward_fn));
  node->attrs = SafePyObject(py::dict());
  node->once_differentiable_ = once_differentiable;

  TensorList inputs = tensor_args(args, node->is_tensor_input);
  const bool executable = autograd::detail::connect_inputs(node.get(), inputs);

  py::object ctx = py::cast(node);
  py::object result;
  {
    AutoGradMode no_grad(false);
    py::object forward = cls.attr("forward");
    if (setup_context.is_none()) {
      result = forward(ctx, *args, **kwargs);
    } else {
      result = forward(*args, **kwargs);
      setup_context(ctx, args, result);
    }
  }

  const bool is_tuple = PyTuple_Check(result.ptr());
  py::tuple items = is_tuple ? py::reinterpret_borrow<py::tuple>(result) : py::make_tuple(result);
  TensorList outs;
  for (py::handle o : items) {
    const bool t = is_tensor(o);
    node->is_tensor_output.push_back(t);
    outs.push_back(t ? as_tensor_unchecked(o) : Tensor());
  }
  autograd::detail::wrap_outputs(node.get(), inputs, outs, executable);
  py::tuple wrapped(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    wrapped[i] = node->is_tensor_output[i] ? py::cast(outs[i]) : py::reinterpret_borrow<py::object>(items[i]);
  if (is_tuple) return wrapped;
  return wrapped[0];
}

}  // namespace

void init_python_function(py::module_& m) {
  py::class_<PyNode, Node, intrusive_ptr<PyNode>> ctx(m, "BackwardCFunction");
  ctx.attr("__module__") = "graft.autograd.function";
  ctx.def(
         "save_for_backward",
         [](PyNode& n, py::args args) {
           TensorList ts;
           for (size_t i = 0; i < args.size(); ++i) {
             if (args[i].is_none()) {
               ts.emplace_back();
               continue;
             }
             GRAFT_CHECK(is_tensor(args[i]), TypeError, "save_for_backward can only save variables, but argument ", i,
                         " is of type ", type_name(args[i]));
             ts.push_back(as_tensor_unchecked(args[i]));
           }
           n.ctx.save_for_backward(std::move(ts));
         },
         "Saves tensors (inputs or outputs of forward, or None) for backward; read them back with "
         "ctx.saved_tensors.")
      .def_property_readonly(
          "saved_tensors",
          [](const PyNode& n) {
            TensorList ts = n.ctx.get_saved_variables();
            py::tuple out(ts.size());
            for (size_t i = 0; i < ts.size(); ++i) out[i] = py::cast(ts[i]);
            return out;
          },
          "The tensors given to save_for_backward; released after backward unless retain_graph=True.")
      .def(
          "mark_dirty", [](PyNode& n, py::args args) { n.ctx.mark_dirty(dirty_args(args)); },
          "Declares inputs that forward modified in place (they must be returned).")
      .def(
          "mark_non_differentiable",
          [](PyNode& n, py::args args) { n.ctx.mark_non_differentiable(non_differentiable_args(args)); },
          "Declares outputs that are not differentiable (they get requires_grad=False).")
      .def(
          "set_materialize_grads", [](PyNode& n, bool value) { n.ctx.set_materialize_grads(value); }, py::arg("value"),
          "When False, backward receives None (not zeros) for outputs without a gradient.")
      .def_property_readonly(
          "needs_input_grad",
          [](const PyNode& n) {
            py::tuple out(n.ctx.num_inputs());
            for (size_t i = 0; i < n.ctx.num_inputs(); ++i) out[i] = py::bool_(n.ctx.needs_input_grad(i));
            return out;
          },
          "One bool per forward argument: whether it is a tensor that requires grad.")
      .def_property_readonly("_forward_cls", [](const PyNode& n) { return n.forward_cls.get(); })
      // the ctx attributes themselves (graft.doctor's holder search walks them: "y.grad_fn.cache")
      .def_property_readonly("_ctx_attrs", [](const PyNode& n) { return n.attrs.get(); })
      // ctx.<name> = value: kept in the node, so every wrapper of it sees the attribute.
      .def("__getattr__",
           [](py::handle self, const py::str& name) -> py::object {
             py::dict d = self.cast<const PyNode&>().attrs.get();
             if (d.contains(name)) return d[name];
             throw py::attribute_error("'" + type_name(self) + "' object has no attribute '" +
                                       name.cast<std::string>() + "'");
           })
      .def("__setattr__",
           [](py::handle self, const py::str& name, py::object value) {
             // properties of the class (saved_tensors, needs_input_grad, ...) keep their rules
             PyObject* descr = _PyType_Lookup(Py_TYPE(self.ptr()), name.ptr());
             if (descr && Py_TYPE(descr)->tp_descr_set) {
               if (PyObject_GenericSetAttr(self.ptr(), name.ptr(), value.ptr()) != 0) throw py::error_already_set();
               return;
             }
             py::dict d = self.cast<const PyNode&>().attrs.get();
             d[name] = std::move(value);
           })
      .def("__delattr__", [](py::handle self, const py::str& name) {
        py::dict d = self.cast<const PyNode&>().attrs.get();
        if (!d.contains(name))
          throw py::attribute_error("'" + type_name(self) + "' object has no attribute '" + name.cast<std::string>() +
                                    "'");
        PyDict_DelItem(d.ptr(), name.ptr());
      });

  m.def("_function_apply", &function_apply, py::arg("cls"), py::arg("backward_fn"), py::arg("once_differentiable"),
        py::arg("setup_context"), py::arg("args"), py::arg("kwargs"));
}

}  // namespace graft::python
