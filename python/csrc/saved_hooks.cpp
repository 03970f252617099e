// graft.autograd.graph.saved_tensors_hooks over the C++ SavedTensorsHooksGuard: Python pack
// and unpack hooks, installed per thread. The pack hook runs once per saved tensor when an op
// saves it (forward), and its result is kept in the graph (held with SafePyObject, freed with
// the saved tensor); the unpack hook turns it back into a tensor on every access.
#include <memory>

#include "python_common.h"

namespace graft::python {
namespace {

/// The guards pushed from Python on this thread, innermost last (`with` blocks nest, so they
/// are popped in reverse order).
struct GuardStack {
  std::vector<std::unique_ptr<SavedTensorsHooksGuard>> guards;
  // Guards still pushed when the thread exits (a `with` never exited) are left alone: the core's
  // thread-local hook stack they would pop may already be destroyed.
  ~GuardStack() {
    for (auto& g : guards) static_cast<void>(g.release());
  }
};
thread_local GuardStack tl_guards;

std::function<std::any(const Tensor&)> python_pack(py::function fn) {
  SafePyObject f(std::move(fn));
  return [f](const Tensor& t) -> std::any {
    py::gil_scoped_acquire gil;
    return SafePyObject(f.get()(t));
  };
}

std::function<Tensor(const std::any&)> python_unpack(py::function fn) {
  SafePyObject f(std::move(fn));
  return [f](const std::any& packed) -> Tensor {
    py::gil_scoped_acquire gil;
    py::object r = f.get()(std::any_cast<const SafePyObject&>(packed).get());
    GRAFT_CHECK(is_tensor(r), TypeError,
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of type ",
                py::str(r.get_type().attr("__name__")).cast<std::string>());
    return as_tensor_unchecked(r);
  };
}

/// A tensor saved outside any node (torch._C._autograd._make_saved_tensor): the saved-tensor
/// hooks active now pack it, and unpack() checks its version as a node's saved tensor would.
/// Activation checkpointing keeps its inputs this way.
struct PySavedTensor {
  SavedVariable saved;
};

}  // namespace

void init_saved_hooks(py::module_& m) {
  py::class_<PySavedTensor>(m, "_SavedTensor")
      .def(
          "unpack", [](const PySavedTensor& s) { return s.saved.unpack(); },
          "The saved tensor (through the unpack hook if one packed it); raises if it was modified in place.");
  m.def(
      "_make_saved_tensor",
      [](const Tensor& t) {
        GRAFT_CHECK(t.defined(), TypeError, "_make_saved_tensor: expected a Tensor");
        return PySavedTensor{SavedVariable(t, /*is_output=*/false)};
      },
      py::arg("tensor"));
  m.def(
      "_push_saved_tensors_hooks",
      [](py::function pack_hook, py::function unpack_hook) {
        tl_guards.guards.push_back(std::make_unique<SavedTensorsHooksGuard>(python_pack(std::move(pack_hook)),
                                                                            python_unpack(std::move(unpack_hook))));
      },
      py::arg("pack_hook"), py::arg("unpack_hook"));
  m.def("_pop_saved_tensors_hooks", []() {
    GRAFT_CHECK(!tl_guards.guards.empty(), RuntimeError, "saved_tensors_hooks: no hooks to pop on this thread");
    tl_guards.guards.pop_back();
  });
}

}  // namespace graft::python
