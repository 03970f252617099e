#pragma once
// The doctor's graph picture, before it is written as DOT or SVG (graph_render.cpp).
#include <map>
#include <string>
#include <vector>

#include "graft/doctor/doctor.h"

namespace graft::doctor::detail {

struct RenderNode {
  enum Kind { Backward, Saved, Handle, Collapsed };
  std::string id, label, line, colour;
  Kind kind = Backward;
  int64_t step = 0;
  int64_t nodes = 0;        ///< backward nodes it stands for (1, or a folded run's count)
  int64_t saved_bytes = 0;  ///< saved bytes it stands for (saved boxes and folded runs)
};
struct RenderEdge {
  enum Kind { Gradient, SavedRef, Holds, Cycle };
  std::string from, to;
  Kind kind = Gradient;
  std::string label;
};
struct RenderGraph {
  std::vector<RenderNode> nodes;
  std::vector<RenderEdge> edges;
  int64_t total_nodes = 0;        ///< the census' nodes it draws (folded ones included)
  int64_t total_saved_bytes = 0;  ///< the census' saved bytes
  int64_t current_step = 0;
};
/// Labels for handles (tensor identity -> holder path), from the Python layer.
using HandleLabels = std::map<uintptr_t, std::string>;

RenderGraph build_render_graph(const Census& census, int64_t component, const HandleLabels& labels);
std::string to_dot(const RenderGraph& g);
std::string to_svg(const RenderGraph& g);

}  // namespace graft::doctor::detail
