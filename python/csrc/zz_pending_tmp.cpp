#include "python_common.h"
namespace graft {
#define P throw NotImplementedError("pending")
Tensor floor(const Tensor&) { P; }
Tensor floor_divide(const Tensor&, const Tensor&) { P; }
Tensor floor_divide(const Tensor&, const Scalar&) { P; }
Tensor remainder(const Tensor&, const Tensor&) { P; }
Tensor remainder(const Tensor&, const Scalar&) { P; }
Tensor remainder(const Scalar&, const Tensor&) { P; }
Tensor index(const Tensor&, const std::vector<std::optional<Tensor>>&) { P; }
Tensor& index_put_(Tensor&, const std::vector<std::optional<Tensor>>&, const Tensor&, bool) { P; }
Tensor masked_select(const Tensor&, const Tensor&) { P; }
Tensor nonzero(const Tensor&) { P; }
Tensor repeat(const Tensor&, IntArrayRef) { P; }
Tensor& masked_fill_(Tensor&, const Tensor&, const Scalar&) { P; }
}
