// graft.Generator (torch.Generator): a CPU random number generator object taken by every
// random op's `generator=`, and graft.default_generator, the one they use without it.
#include <cctype>

#include "python_common.h"

namespace graft::python {
namespace {

// A seed as torch.Generator.manual_seed takes it: int() of the argument, in
// [-2**63, 2**64 - 1] (a negative one wraps to 2**64 + seed), else PyTorch's RuntimeError.
uint64_t seed_of(py::handle seed) {
  py::int_ value(py::reinterpret_borrow<py::object>(seed));
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow == 0) return static_cast<uint64_t>(v);
  const unsigned long long u = PyLong_AsUnsignedLongLong(value.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw RuntimeError("Overflow when unpacking long");
  }
  return u;
}

// The device a Generator is made for: the CPU only (PyTorch's text for any other type).
Device generator_device(py::handle device) {
  const Device d = device.is_none() ? Device(DeviceType::CPU) : to_device(device);
  if (d.type() != DeviceType::CPU) {
    std::string type = d.str().substr(0, d.str().find(':'));
    for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    throw RuntimeError(detail::str("Device type ", type, " is not supported for torch.Generator() api."));
  }
  return d;
}

}  // namespace

void init_generator(py::module_& m) {
  py::class_<Generator>(m, "Generator",
                        "A random number generator (torch.Generator) on the CPU: pass it as `generator=` to "
                        "rand, randn, randint, randperm, multinomial, bernoulli, normal, the in-place random "
                        "fills and nn.init; its draws do not touch the default generator.")
      .def(py::init([](py::handle device) {
             generator_device(device);
             return Generator();
           }),
           py::arg("device") = "cpu")
      .def_property_readonly("device", &Generator::device)
      .def(
          "manual_seed",
          [](py::object self, py::handle seed) {
            self.cast<Generator&>().set_current_seed(seed_of(seed));
            return self;
          },
          py::arg("seed"), "Seeds the generator and returns it.")
      .def("seed", &Generator::seed, "Seeds the generator with a non-deterministic 64-bit number and returns it.")
      .def("initial_seed", &Generator::current_seed, "The seed the generator was last seeded with.")
      .def("get_state", &Generator::get_state,
           "A copy of the generator's state: a 1-D int64 tensor (the seed, then the engine's words).")
      .def(
          "set_state",
          [](py::object self, py::handle state) {
            GRAFT_CHECK(is_tensor(state), TypeError, "expected a torch.LongTensor, but got ",
                        py::str(state.get_type().attr("__name__")).cast<std::string>());
            self.cast<Generator&>().set_state(as_tensor_unchecked(state));
            return self;
          },
          py::arg("new_state"), "Restores a get_state() result and returns the generator.")
      .def("__reduce__", [](py::handle self) -> py::object {
        throw TypeError(
            detail::str("cannot pickle '", py::str(self.get_type().attr("__name__")).cast<std::string>(), "' object"));
      });
  m.attr("default_generator") = py::cast(default_generator());
}

std::optional<Generator> generator_arg(py::handle o, const char* fn) {
  if (o.is_none()) return std::nullopt;
  GRAFT_CHECK(py::isinstance<Generator>(o), TypeError, fn, "(): argument 'generator' must be graft.Generator, not ",
              py::str(o.get_type().attr("__name__")).cast<std::string>());
  return o.cast<Generator>();
}

}  // namespace graft::python
