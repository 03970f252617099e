// The views of several outputs of one node (split, split_with_sizes, unbind: their geometries
// come from the ops layer, src/ops/views.cpp): each a view of self whose in-place modification
// is refused with PyTorch's text naming the node and the output.
#include "node_util.h"

namespace graft {

namespace detail {
std::vector<Tensor> make_multi_output_views(const Tensor& self, const std::vector<ViewGeometry>& geometries,
                                            const char* node_name) {
  std::vector<Tensor> out;
  out.reserve(geometries.size());
  for (size_t i = 0; i < geometries.size(); ++i) {
    const ViewGeometry& g = geometries[i];
    Tensor v = autograd::make_view(self, g.sizes, g.strides, g.offset, CreationMeta::MultiOutputNode);
    if (v.impl()->meta) {
      v.impl()->meta->creator_name = node_name;
      v.impl()->meta->creator_output_nr = static_cast<uint32_t>(i);
    }
    out.push_back(std::move(v));
  }
  return out;
}
}  // namespace detail

}  // namespace graft
