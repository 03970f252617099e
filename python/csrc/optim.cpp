// graft._C._optim: the update arithmetic behind graft.optim's Python optimizers. Python keeps
// PyTorch's data structures (param_groups as dicts, state as a dict of dicts); for each group
// it gathers the parameters that have gradients and their state tensors into lists and calls
// one function here, which checks every parameter first (a rejected call changes nothing),
// then runs the C++ optimizers' fused per-parameter loops with the GIL released: the library's
// graft::optim::functional (include/graft/optim/functional.h). State tensors made there are
// tagged optimizer_state in the allocator.
#include <optional>
#include <utility>
#include <vector>

#include "graft/optim/functional.h"
#include "python_common.h"

namespace graft::python {
namespace {

/// A library function called with the GIL released (the arguments are already converted).
template <class... Args>
auto without_gil(void (*f)(Args...)) {
  return [f](Args... args) {
    ReleaseGil nogil;
    f(std::forward<Args>(args)...);
  };
}

}  // namespace

void init_optim(py::module_& m) {
  auto o = m.def_submodule("_optim", "graft.optim's per-group updates (fused C++ loops, GIL released)");
  o.def(
      "sgd",
      [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads, std::vector<std::optional<Tensor>> bufs,
         double lr, double momentum, double dampening, double weight_decay, bool nesterov, bool maximize) {
        std::vector<Tensor> out;
        {
          ReleaseGil nogil;
          out = optim::functional::sgd(params, grads, std::move(bufs), lr, momentum, dampening, weight_decay, nesterov,
                                       maximize);
        }
        py::list result;
        for (const Tensor& t : out) result.append(t.defined() ? py::cast(t) : py::none());
        return result;
      },
      py::arg("params"), py::arg("grads"), py::arg("momentum_buffers"), py::kw_only(), py::arg("lr"),
      py::arg("momentum"), py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"), py::arg("maximize"),
      "SGD over one group; returns the momentum buffers (new ones where None was given, None without momentum).");
  o.def("adam", without_gil(&optim::functional::adam), py::arg("params"), py::arg("grads"), py::arg("exp_avgs"),
        py::arg("exp_avg_sqs"), py::arg("max_exp_avg_sqs"), py::arg("state_steps"), py::kw_only(), py::arg("amsgrad"),
        py::arg("beta1"), py::arg("beta2"), py::arg("lr"), py::arg("weight_decay"), py::arg("eps"), py::arg("maximize"),
        py::arg("decoupled"), "Adam (decoupled=False) or AdamW (decoupled=True) over one group.");
  o.def("rmsprop", without_gil(&optim::functional::rmsprop), py::arg("params"), py::arg("grads"),
        py::arg("square_avgs"), py::arg("grad_avgs"), py::arg("momentum_buffers"), py::arg("state_steps"),
        py::kw_only(), py::arg("lr"), py::arg("alpha"), py::arg("eps"), py::arg("weight_decay"), py::arg("momentum"),
        py::arg("centered"), py::arg("maximize"), "RMSprop over one group.");
  o.def("adagrad", without_gil(&optim::functional::adagrad), py::arg("params"), py::arg("grads"), py::arg("state_sums"),
        py::arg("state_steps"), py::kw_only(), py::arg("lr"), py::arg("weight_decay"), py::arg("lr_decay"),
        py::arg("eps"), py::arg("maximize"), "Adagrad over one group.");
  o.def(
      "zeros_state", [](const Tensor& p) { return optim::functional::zeros_state(p); }, py::arg("param"),
      "Zeros shaped like param (contiguous, its dtype), tagged optimizer_state.");
  o.def(
      "full_state", [](const Tensor& p, double v) { return optim::functional::full_state(p, v); }, py::arg("param"),
      py::arg("value"), "`value` shaped like param (contiguous, its dtype), tagged optimizer_state.");
  o.def(
      "new_step",
      [](py::object device) { return optim::functional::new_step(device.is_none() ? kCPU : to_device(device)); },
      py::arg("device") = py::none(), "PyTorch's step state: a 0-d float32 zero (on meta for meta parameters).");
  o.def(
      "tag_state", [](const Tensor& t) { set_memory_category(t, MemoryCategory::OptimizerState); }, py::arg("tensor"),
      "Reports the memory behind `tensor` as optimizer_state (for state loaded from a state dict).");
  o.def(
      "memory_category", [](const Tensor& t) { return std::string(memory_category_name(memory_category(t))); },
      py::arg("tensor"), "The allocator category of the memory behind `tensor` (\"optimizer_state\", ...).");
}

}  // namespace graft::python
