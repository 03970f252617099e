// The autograd engine from Python: Tensor.backward, graft.autograd.backward / grad (run with
// the GIL released; Python hooks and custom Functions take it back), tensor hooks, grad_fn
// nodes (name(), next_functions), grad modes, inference mode and anomaly mode.
#include <pybind11/functional.h>

#include "python_common.h"

namespace graft::python {
namespace {

std::vector<Tensor> tensors_of(py::handle o, const char* what) {
  std::vector<Tensor> out;
  if (o.is_none()) return out;
  if (is_tensor(o)) return {as_tensor_unchecked(o)};
  for (py::handle h : o) {
    GRAFT_CHECK(is_tensor(h), TypeError, what, " must be Tensors, got ",
                std::string(py::str(h.get_type().attr("__name__"))));
    out.push_back(as_tensor_unchecked(h));
  }
  return out;
}

/// grad_tensors / grad_outputs: entries may be None (implicit ones for scalar outputs).
Tensor gradient_or_none(py::handle h) {
  if (h.is_none()) return Tensor();
  GRAFT_CHECK(is_tensor(h), TypeError, "gradients can be either Tensors or None, but got ",
              std::string(py::str(h.get_type().attr("__name__"))));
  return as_tensor_unchecked(h);
}

std::vector<Tensor> optional_tensors_of(py::handle o, size_t n) {
  std::vector<Tensor> out;
  if (o.is_none()) return out;
  if (!PyList_Check(o.ptr()) && !PyTuple_Check(o.ptr())) return {gradient_or_none(o)};
  for (py::handle h : o) out.push_back(gradient_or_none(h));
  GRAFT_CHECK(out.size() == n, RuntimeError, "got ", n, " tensors and ", out.size(), " gradients");
  return out;
}

/// Fills implicit ones for undefined entries of grad_outputs (one-element outputs only).
std::vector<Tensor> complete_grads(const std::vector<Tensor>& outputs, std::vector<Tensor> grads) {
  if (grads.empty()) return grads;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (grads[i].defined() || !outputs[i].requires_grad()) continue;
    GRAFT_CHECK(outputs[i].numel() == 1, RuntimeError, "grad can be implicitly created only for scalar outputs");
    grads[i] = ones_like(outputs[i]);
  }
  return grads;
}

std::optional<TensorList> inputs_arg(py::handle inputs) {
  if (inputs.is_none()) return std::nullopt;
  return tensors_of(inputs, "inputs");
}

/// Called after each outermost backward() that returned (graft.doctor's steps without an
/// optimizer); nullptr: none. A strong reference, deliberately never released at exit.
PyObject* g_backward_finished = nullptr;

void run_backward(const std::vector<Tensor>& tensors, std::vector<Tensor> grads, std::optional<bool> retain_graph,
                  bool create_graph, const std::optional<TensorList>& inputs) {
  grads = complete_grads(tensors, std::move(grads));
  {
    ReleaseGil nogil;
    autograd::backward(tensors, grads, retain_graph, create_graph, inputs);
  }
  if (g_backward_finished == nullptr || autograd::current_graph_task_id() >= 0) return;  // none, or nested
  try {
    py::reinterpret_borrow<py::object>(g_backward_finished)();
  } catch (py::error_already_set& e) {  // an observer's failure is not the backward pass's
    e.discard_as_unraisable("graft: backward-finished callback");
  }
}

/// PythonTensorHook for `fn` (named by its __name__, as PyTorch's size-check message does).
PythonTensorHook python_hook(py::function fn) {
  std::string name =
      py::hasattr(fn, "__name__") ? py::str(fn.attr("__name__")).cast<std::string>() : std::string(py::str(fn));
  return PythonTensorHook{SafePyObject(std::move(fn)), std::move(name)};
}

/// graft.inference_mode's guard object (a C++ InferenceMode held across __enter__/__exit__).
struct InferenceModeGuard {
  explicit InferenceModeGuard(bool enabled) : enabled(enabled) {}
  bool enabled;
  std::unique_ptr<InferenceMode> guard;
};

}  // namespace

Tensor PythonTensorHook::operator()(const Tensor& grad) const {
  py::gil_scoped_acquire gil;
  py::object r = fn.get()(grad);
  if (r.is_none()) return Tensor();
  GRAFT_CHECK(is_tensor(r), TypeError, "expected Variable, but hook returned '",
              std::string(py::str(r.get_type().attr("__name__"))), "'");
  Tensor t = as_tensor_unchecked(r);
  GRAFT_CHECK(t.sizes().equals(grad.sizes()), RuntimeError, "hook '", name, "' has changed the size of value");
  return t;
}

namespace {

/// Tensor hooks, their handles, backward and grad.
void bind_hooks(py::module_& m) {
  py::handle tensor_cls = tensor_type();
  py::class_<TensorImpl, intrusive_ptr<TensorImpl>> cls =
      py::reinterpret_borrow<py::class_<TensorImpl, intrusive_ptr<TensorImpl>>>(tensor_cls);

  cls.def(
      "backward",
      [](const Tensor& self, py::object gradient, std::optional<bool> retain_graph, bool create_graph,
         py::object inputs) {
        std::vector<Tensor> grads;
        if (!gradient.is_none()) grads.push_back(gradient_or_none(gradient));
        run_backward({self}, std::move(grads), retain_graph, create_graph, inputs_arg(inputs));
      },
      py::arg("gradient") = py::none(), py::arg("retain_graph") = py::none(), py::arg("create_graph") = false,
      py::arg("inputs") = py::none());

  py::class_<HookHandle>(m, "RemovableHandle")
      .def("remove", &HookHandle::remove)
      .def("__enter__", [](py::handle self) { return self; })
      .def("__exit__", [](HookHandle& h, py::args) { h.remove(); });
  cls.def(
      "register_hook",
      [](const Tensor& self, py::function fn) { return self.register_hook(python_hook(std::move(fn))); },
      py::arg("hook"));

  m.def(
      "_backward",
      [](py::handle tensors, py::handle grad_tensors, std::optional<bool> retain_graph, bool create_graph,
         py::handle inputs) {
        std::vector<Tensor> ts = tensors_of(tensors, "tensors");
        run_backward(ts, optional_tensors_of(grad_tensors, ts.size()), retain_graph, create_graph, inputs_arg(inputs));
      },
      py::arg("tensors"), py::arg("grad_tensors") = py::none(), py::arg("retain_graph") = py::none(),
      py::arg("create_graph") = false, py::arg("inputs") = py::none());
  m.def(
      "_grad",
      [](py::handle outputs, py::handle inputs, py::handle grad_outputs, std::optional<bool> retain_graph,
         bool create_graph, bool allow_unused, bool materialize_grads) {
        std::vector<Tensor> outs = tensors_of(outputs, "outputs");
        std::vector<Tensor> ins = tensors_of(inputs, "inputs");
        std::vector<Tensor> gos = complete_grads(outs, optional_tensors_of(grad_outputs, outs.size()));
        TensorList r;
        {
          ReleaseGil nogil;
          r = autograd::grad(outs, ins, gos, retain_graph, create_graph, allow_unused, materialize_grads);
        }
        py::tuple out(r.size());
        for (size_t i = 0; i < r.size(); ++i) out[i] = py::cast(r[i]);
        return out;
      },
      py::arg("outputs"), py::arg("inputs"), py::arg("grad_outputs") = py::none(), py::arg("retain_graph") = py::none(),
      py::arg("create_graph") = false, py::arg("allow_unused") = false, py::arg("materialize_grads") = false);
}

/// graft.autograd.graph.Node: name, next_functions, hooks.
void bind_graph_nodes(py::module_& m) {
  // ---- graph nodes ----
  py::class_<Node, intrusive_ptr<Node>> node(m, "Node");
  node.def("name", &Node::name)
      .def_property_readonly("next_functions",
                             [](const Node& n) {
                               const auto& edges = n.next_functions();
                               py::tuple out(edges.size());
                               for (size_t i = 0; i < edges.size(); ++i) {
                                 py::object f = edges[i].function ? py::cast(edges[i].function) : py::none();
                                 out[i] = py::make_tuple(f, edges[i].input_nr);
                               }
                               return out;
                             })
      .def_property_readonly("_sequence_nr", &Node::sequence_nr)
      .def("_num_inputs", &Node::num_inputs)
      .def("__repr__", [](py::handle self) {
        const Node& n = self.cast<const Node&>();
        char buf[32];
        std::snprintf(buf, sizeof buf, "%p", static_cast<const void*>(self.ptr()));
        return "<" + n.class_name() + " object at " + buf + ">";
      });
  node.attr("__module__") = "graft.autograd.graph";
}

/// Grad mode, inference mode and anomaly mode.
void bind_modes(py::module_& m) {
  // ---- modes ----
  m.def(
      "_set_backward_finished_callback",
      [](py::object fn) {
        Py_XDECREF(g_backward_finished);
        g_backward_finished = fn.is_none() ? nullptr : fn.release().ptr();
      },
      py::arg("fn"), "Calls fn() after each outermost backward() that returns (None: no call).");
  m.def("_current_graph_task_id", &autograd::current_graph_task_id,
        "The id of the backward pass running on this thread, -1 outside one.");
  m.def("_is_checkpoint_valid", &autograd::is_checkpoint_valid,
        "False inside a backward pass that computes only some gradients (grad(), backward(inputs=)).");
  m.def("is_grad_enabled", &GradMode::is_enabled);
  m.def("_set_grad_enabled", &GradMode::set_enabled, py::arg("mode"));
  m.def("is_inference_mode_enabled", &InferenceMode::is_enabled);
  py::class_<InferenceModeGuard>(m, "_InferenceMode")
      .def(py::init<bool>(), py::arg("mode") = true)
      .def("__enter__",
           [](InferenceModeGuard& g) {
             if (g.enabled)
               g.guard = std::make_unique<InferenceMode>(true);
             else
               g.guard = std::make_unique<InferenceMode>(false);
           })
      .def("__exit__", [](InferenceModeGuard& g, py::args) { g.guard.reset(); });
  m.def("is_anomaly_enabled", &autograd::AnomalyMode::is_enabled);
  m.def("is_anomaly_check_nan_enabled", &autograd::AnomalyMode::should_check_nan);
  m.def("_set_anomaly_enabled", &autograd::AnomalyMode::set_enabled, py::arg("enabled"), py::arg("check_nan") = true);
  // Anomaly mode records the Python stack of the forward call that created each node.
  autograd::set_anomaly_trace_provider([]() -> std::string {
    py::gil_scoped_acquire gil;
    py::list frames = py::module_::import("traceback").attr("format_stack")();
    std::string out;
    for (py::handle f : frames) out += f.cast<std::string>();  // innermost last: the forward call
    return out;
  });
}

}  // namespace

void init_autograd(py::module_& m) {
  bind_hooks(m);
  bind_graph_nodes(m);
  bind_modes(m);
}

}  // namespace graft::python
