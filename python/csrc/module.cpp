// graft._C: the extension module behind the `graft` Python package. Each part of the API is
// bound in its own file; this one only puts them together, in dependency order.
#include "python_common.h"

PYBIND11_MODULE(_C, m) {
  using namespace graft::python;
  m.doc() = "graft's C++ core (tensors, autograd, allocator) for the graft Python package";
  init_errors(m);
  init_dtype_device(m);
  init_generator(m);
  init_tensor(m);
  init_tensor_identity(m);
  init_functions(m);
  init_autograd(m);
  init_memory(m);
  init_optim(m);
  init_serialize(m);
  init_data(m);
  init_nn_functional(m);
  init_python_function(m);
  init_saved_hooks(m);
  init_gradcheck(m);
  init_doctor(m);
}
