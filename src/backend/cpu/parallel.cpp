// set_num_threads / get_num_threads: forwarded to OpenBLAS, the one threaded CPU component.
#include "graft/parallel.h"

#include <cblas.h>

#include "graft/core/error.h"

namespace graft {

void set_num_threads(int n) {
  GRAFT_CHECK(n > 0, RuntimeError, "set_num_threads expects a positive integer");
  openblas_set_num_threads(n);
}

int get_num_threads() { return openblas_get_num_threads(); }

}  // namespace graft
