// The autograd graph as Graphviz DOT and as SVG with graft's own layered layout (F8):
// backward nodes with op name and creation line, saved tensors with shape/dtype/bytes (a
// shared storage drawn once), colours by step (stale ones warm), the holders as entry points,
// the create_graph cycle marked, and repeated per-step subgraphs collapsed ("x35 steps").
// See docs/notes/doctor.md ("Pictures").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "graph_render.h"
#include "internal.h"

namespace graft::doctor::detail {

namespace {

/// A per-step subgraph's shape: its nodes' (name, line) multiset.
std::string signature(const std::vector<const NodeInfo*>& nodes) {
  std::vector<std::string> parts;
  for (const NodeInfo* n : nodes) parts.push_back(n->name + "@" + where(n->site));
  std::sort(parts.begin(), parts.end());
  std::string s;
  for (auto& p : parts) s += p + ";";
  return s;
}

std::string step_colour(int64_t step, int64_t current) {
  if (step == 0) return "#d9d9d9";        // before the session
  if (step >= current) return "#cfe2f3";  // this step
  const int64_t age = current - step;     // stale: warmer with age
  static const char* warm[] = {"#fff2cc", "#fce5cd", "#f9cb9c", "#f6b26b", "#e69138"};
  return warm[std::min<int64_t>(age - 1, 4)];
}

}  // namespace

RenderGraph build_render_graph(const Census& census, int64_t component, const HandleLabels& labels) {
  RenderGraph g;
  g.current_step = census.step;
  // stable names: nodes in creation order, storages in order of first appearance. A node
  // without a sequence number of its own (AccumulateGrad, as in PyTorch) comes right after the
  // first node that points at it, in edge order: addresses never decide a name or an order.
  std::vector<const NodeInfo*> numbered, order;
  std::unordered_map<uintptr_t, const NodeInfo*> unnumbered;
  for (const GraphComponent& c : census.components)
    if (component < 0 || c.id == component)
      for (const NodeInfo& n : c.nodes) {
        if (n.sequence_nr == UINT64_MAX)
          unnumbered.emplace(n.id, &n);
        else
          numbered.push_back(&n);
      }
  std::sort(numbered.begin(), numbered.end(), [](const NodeInfo* a, const NodeInfo* b) {
    return a->sequence_nr != b->sequence_nr ? a->sequence_nr < b->sequence_nr : a->id < b->id;
  });
  for (const NodeInfo* n : numbered) {
    order.push_back(n);
    for (uintptr_t next : n->next) {
      auto it = unnumbered.find(next);
      if (it == unnumbered.end()) continue;
      order.push_back(it->second);
      unnumbered.erase(it);
    }
  }
  std::vector<const NodeInfo*> rest;  // pointed at by no drawn node
  for (auto& [id, n] : unnumbered) rest.push_back(n);
  std::sort(rest.begin(), rest.end(), [](const NodeInfo* a, const NodeInfo* b) { return a->id < b->id; });
  order.insert(order.end(), rest.begin(), rest.end());
  std::unordered_map<uintptr_t, std::string> node_name;
  std::unordered_map<uintptr_t, size_t> rank;
  for (size_t i = 0; i < order.size(); ++i) {
    node_name.emplace(order[i]->id, "n" + std::to_string(i));
    rank.emplace(order[i]->id, i);
  }
  std::unordered_map<uintptr_t, std::string> storage_name;
  for (const GraphComponent& c : census.components) {
    if (component >= 0 && c.id != component) continue;
    g.total_nodes += static_cast<int64_t>(c.nodes.size());
    g.total_saved_bytes += c.saved_bytes;
    std::vector<const NodeInfo*> ranked;  // the component's nodes in name order
    for (const NodeInfo& n : c.nodes) ranked.push_back(&n);
    std::sort(ranked.begin(), ranked.end(),
              [&](const NodeInfo* a, const NodeInfo* b) { return rank.at(a->id) < rank.at(b->id); });
    // group the nodes by step; collapse runs of >= 3 consecutive steps with the same shape
    std::map<int64_t, std::vector<const NodeInfo*>> by_step;
    for (const NodeInfo* n : ranked) by_step[n->step].push_back(n);
    std::vector<int64_t> steps;
    for (auto& [s, v] : by_step) steps.push_back(s);
    std::set<int64_t> hidden_steps;
    std::unordered_map<uintptr_t, std::string> collapsed_into;  // node id -> placeholder id
    for (size_t i = 0; i < steps.size();) {
      size_t j = i + 1;
      const std::string sig = signature(by_step[steps[i]]);
      while (j < steps.size() && steps[j] == steps[j - 1] + 1 && signature(by_step[steps[j]]) == sig) ++j;
      if (j - i >= 4) {  // keep the first and the last, fold the middle (two steps or more)
        RenderNode p;
        p.id = "c" + std::to_string(c.id) + "_steps" + std::to_string(steps[i + 1]);
        const int64_t folded = static_cast<int64_t>(j - i - 2);
        p.label = "x" + std::to_string(folded) + " steps (" + std::to_string(steps[i + 1]) + ".." +
                  std::to_string(steps[j - 2]) + "), " + std::to_string(by_step[steps[i + 1]].size()) + " nodes each";
        p.kind = RenderNode::Collapsed;
        p.step = steps[i + 1];
        p.colour = step_colour(steps[i + 1], census.step);
        p.nodes = folded * static_cast<int64_t>(by_step[steps[i + 1]].size());
        for (size_t k = i + 1; k + 1 < j; ++k) {
          hidden_steps.insert(steps[k]);
          for (const NodeInfo* n : by_step[steps[k]]) {
            collapsed_into[n->id] = p.id;
            for (const SavedInfo& s : n->saved)
              if (!s.released && !s.packed && !s.parameter) p.saved_bytes += s.bytes;
          }
        }
        g.nodes.push_back(std::move(p));
      }
      i = j;
    }
    auto node_ref = [&](uintptr_t id) -> std::string {
      auto it = collapsed_into.find(id);
      if (it != collapsed_into.end()) return it->second;
      auto named = node_name.find(id);
      if (named != node_name.end()) return named->second;
      char b[32];  // a node outside the drawn components
      std::snprintf(b, sizeof b, "x%lx", static_cast<unsigned long>(id));
      return b;
    };
    std::set<uintptr_t> drawn_storages;
    std::set<std::pair<std::string, std::string>> edges_seen;
    auto add_edge = [&](const std::string& from, const std::string& to, RenderEdge::Kind kind, std::string label) {
      if (from == to || !edges_seen.insert({from, to}).second) return;
      g.edges.push_back({from, to, kind, std::move(label)});
    };
    for (const NodeInfo* np : ranked) {
      const NodeInfo& n = *np;
      if (collapsed_into.count(n.id)) {
        for (uintptr_t next : n.next) add_edge(node_ref(n.id), node_ref(next), RenderEdge::Gradient, "");
        continue;
      }
      RenderNode r;
      r.id = node_ref(n.id);
      r.label = n.name;
      r.line = where(n.site);
      r.kind = RenderNode::Backward;
      r.step = n.step;
      r.colour = step_colour(n.step, census.step);
      r.nodes = 1;
      g.nodes.push_back(r);
      for (uintptr_t next : n.next) add_edge(r.id, node_ref(next), RenderEdge::Gradient, "");
      for (const SavedInfo& s : n.saved) {
        if (!s.storage || s.released || s.packed) continue;
        auto [sit, fresh] = storage_name.emplace(s.storage, "s" + std::to_string(storage_name.size()));
        const std::string sid = sit->second;
        if (fresh && drawn_storages.insert(s.storage).second) {
          RenderNode t;
          t.id = sid;
          std::ostringstream l;
          l << "[";
          for (size_t i = 0; i < s.shape.size(); ++i) l << (i ? ", " : "") << s.shape[i];
          l << "] " << s.dtype;
          t.label = l.str();
          t.line = s.parameter ? "parameter" : format_bytes(s.bytes);
          t.kind = RenderNode::Saved;
          t.step = n.step;
          t.colour = s.parameter ? "#eeeeee" : "#f4cccc";
          t.saved_bytes = s.parameter ? 0 : s.bytes;
          g.nodes.push_back(std::move(t));
        }
        add_edge(r.id, sid, RenderEdge::SavedRef, s.what);
      }
    }
    // holders as entry points
    std::map<uintptr_t, std::string> leaf_handle;  // leaf tensor -> handle id (LD004 cycle)
    int hi = 0;
    for (const HandleInfo& h : c.handles) {
      auto lab = labels.find(h.tensor);
      if (lab == labels.end() && hidden_steps.count(h.step)) continue;
      RenderNode r;
      r.id = "h" + std::to_string(c.id) + "_" + std::to_string(hi++);
      r.label = lab != labels.end() ? lab->second : (h.grad_of_leaf ? std::string(".grad") : std::string("tensor"));
      r.line = where(h.site);
      r.kind = RenderNode::Handle;
      r.step = h.step;
      r.colour = "#d9ead3";
      g.nodes.push_back(r);
      add_edge(r.id, node_ref(h.node), h.grad_of_leaf ? RenderEdge::Cycle : RenderEdge::Holds,
               h.grad_of_leaf ? "grad_fn (cycle)" : "grad_fn");
      if (h.grad_of_leaf) leaf_handle[h.leaf] = r.id;
    }
    // create_graph cycle: AccumulateGrad(leaf) -> leaf -> .grad -> graph -> AccumulateGrad
    for (const NodeInfo* n : ranked) {
      if (n->name != "AccumulateGrad" || collapsed_into.count(n->id)) continue;
      auto h = leaf_handle.find(n->variable);  // its own leaf's .grad only
      if (h != leaf_handle.end()) add_edge(node_ref(n->id), h->second, RenderEdge::Cycle, "variable.grad (cycle)");
    }
  }
  return g;
}

std::string to_dot(const RenderGraph& g) {
  std::ostringstream o;
  o << "digraph graft_doctor {\n";
  o << "  // nodes=" << g.total_nodes << " saved_bytes=" << g.total_saved_bytes << " step=" << g.current_step << "\n";
  o << "  graph [rankdir=TB, fontname=\"Helvetica\"];\n";
  o << "  node [fontname=\"Helvetica\", fontsize=10, style=filled];\n";
  auto q = [](const std::string& s) {
    std::string r;
    for (char c : s) {
      if (c == '"' || c == '\\') r += '\\';
      r += c;
    }
    return r;
  };
  for (const RenderNode& n : g.nodes) {
    const char* shape = n.kind == RenderNode::Saved       ? "note"
                        : n.kind == RenderNode::Handle    ? "ellipse"
                        : n.kind == RenderNode::Collapsed ? "box3d"
                                                          : "box";
    o << "  " << n.id << " [shape=" << shape << ", fillcolor=\"" << n.colour << "\", label=\"" << q(n.label)
      << (n.line.empty() ? "" : "\\n" + q(n.line))
      << (n.kind == RenderNode::Backward || n.kind == RenderNode::Collapsed ? "\\nstep " + std::to_string(n.step) : "")
      << "\"];\n";
  }
  for (const RenderEdge& e : g.edges) {
    o << "  " << e.from << " -> " << e.to;
    std::vector<std::string> attrs;
    if (e.kind == RenderEdge::SavedRef) attrs.push_back("style=dashed");
    if (e.kind == RenderEdge::Cycle) attrs.push_back("color=red");
    if (!e.label.empty()) attrs.push_back("label=\"" + q(e.label) + "\"");
    if (!attrs.empty()) {
      o << " [";
      for (size_t i = 0; i < attrs.size(); ++i) o << (i ? ", " : "") << attrs[i];
      o << "]";
    }
    o << ";\n";
  }
  o << "}\n";
  return o.str();
}

std::string to_svg(const RenderGraph& g) {
  // layers: longest path from the entry points (nodes nothing points at)
  std::unordered_map<std::string, size_t> idx;
  for (size_t i = 0; i < g.nodes.size(); ++i) idx[g.nodes[i].id] = i;
  std::vector<std::vector<size_t>> out(g.nodes.size()), in(g.nodes.size());
  for (const RenderEdge& e : g.edges) {
    auto a = idx.find(e.from), b = idx.find(e.to);
    if (a == idx.end() || b == idx.end()) continue;
    out[a->second].push_back(b->second);
    in[b->second].push_back(a->second);
  }
  std::vector<int> layer(g.nodes.size(), 0), indeg(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) indeg[i] = static_cast<int>(in[i].size());
  std::vector<size_t> order, queue;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (indeg[i] == 0) queue.push_back(i);
  while (!queue.empty()) {  // Kahn: cycle edges leave their targets for the fallback below
    size_t v = queue.back();
    queue.pop_back();
    order.push_back(v);
    for (size_t w : out[v]) {
      layer[w] = std::max(layer[w], layer[v] + 1);
      if (--indeg[w] == 0) queue.push_back(w);
    }
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)  // nodes on a cycle: below their placed parents
    if (indeg[i] > 0)
      for (size_t p : in[i]) layer[i] = std::max(layer[i], layer[p] + 1);
  int layers = 0;
  for (int l : layer) layers = std::max(layers, l + 1);
  std::vector<std::vector<size_t>> rows(layers);
  for (size_t i = 0; i < g.nodes.size(); ++i) rows[layer[i]].push_back(i);
  // order within rows by the barycentre of the parents (two sweeps)
  std::vector<double> pos(g.nodes.size(), 0);
  for (auto& r : rows)
    for (size_t k = 0; k < r.size(); ++k) pos[r[k]] = static_cast<double>(k);
  for (int sweep = 0; sweep < 2; ++sweep)
    for (int l = 1; l < layers; ++l) {
      auto& r = rows[l];
      std::vector<std::pair<double, size_t>> key;
      for (size_t v : r) {
        double s = 0;
        int n = 0;
        for (size_t p : in[v])
          if (layer[p] < l) s += pos[p], ++n;
        key.push_back({n ? s / n : pos[v], v});
      }
      std::stable_sort(key.begin(), key.end());
      for (size_t k = 0; k < key.size(); ++k) {
        r[k] = key[k].second;
        pos[r[k]] = static_cast<double>(k);
      }
    }
  auto width_of = [&](size_t v) {
    const RenderNode& n = g.nodes[v];
    return 16.0 + 6.2 * static_cast<double>(std::max(n.label.size(), n.line.size() + 0));
  };
  const double row_h = 70, node_h = 40, gap = 24;
  std::vector<double> x(g.nodes.size()), y(g.nodes.size()), w(g.nodes.size());
  double width = 200;
  for (int l = 0; l < layers; ++l) {
    double cx = gap;
    for (size_t v : rows[l]) {
      w[v] = width_of(v);
      x[v] = cx;
      y[v] = gap + l * row_h;
      cx += w[v] + gap;
    }
    width = std::max(width, cx);
  }
  const double height = gap * 2 + std::max(1, layers) * row_h;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"graft-graph\" width=\"" << std::lround(width)
    << "\" height=\"" << std::lround(height) << "\" viewBox=\"0 0 " << std::lround(width) << " " << std::lround(height)
    << "\" data-nodes=\"" << g.total_nodes << "\" data-saved-bytes=\"" << g.total_saved_bytes << "\">\n";
  o << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" "
       "orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#666\"/></marker></defs>\n";
  for (const RenderEdge& e : g.edges) {
    auto a = idx.find(e.from), b = idx.find(e.to);
    if (a == idx.end() || b == idx.end()) continue;
    const size_t u = a->second, v = b->second;
    const double x1 = x[u] + w[u] / 2, y1 = y[u] + node_h, x2 = x[v] + w[v] / 2, y2 = y[v];
    const char* colour = e.kind == RenderEdge::Cycle ? "#cc0000" : "#666";
    o << "<path class=\"edge\" d=\"M " << x1 << " " << y1 << " C " << x1 << " " << (y1 + y2) / 2 << ", " << x2 << " "
      << (y1 + y2) / 2 << ", " << x2 << " " << y2 << "\" fill=\"none\" stroke=\"" << colour << "\""
      << (e.kind == RenderEdge::SavedRef ? " stroke-dasharray=\"4 3\"" : "") << " marker-end=\"url(#arrow)\"/>\n";
  }
  for (size_t v = 0; v < g.nodes.size(); ++v) {
    const RenderNode& n = g.nodes[v];
    const char* cls = n.kind == RenderNode::Saved       ? "saved"
                      : n.kind == RenderNode::Handle    ? "handle"
                      : n.kind == RenderNode::Collapsed ? "collapsed"
                                                        : "node";
    const double rx = n.kind == RenderNode::Handle ? 18 : 4;
    o << "<g class=\"" << cls << "\" data-step=\"" << n.step << "\"><rect x=\"" << x[v] << "\" y=\"" << y[v]
      << "\" width=\"" << w[v] << "\" height=\"" << node_h << "\" rx=\"" << rx << "\" fill=\"" << n.colour
      << "\" stroke=\"#444\"/>";
    o << "<text x=\"" << x[v] + w[v] / 2 << "\" y=\"" << y[v] + 16
      << "\" text-anchor=\"middle\" font-size=\"11\" "
         "font-family=\"sans-serif\">"
      << xml_escape(n.label) << "</text>";
    std::string sub = n.line;
    if (n.kind == RenderNode::Backward)
      sub += (sub.empty() ? "" : "  ") + std::string("step ") + std::to_string(n.step);
    o << "<text x=\"" << x[v] + w[v] / 2 << "\" y=\"" << y[v] + 31
      << "\" text-anchor=\"middle\" font-size=\"9\" "
         "font-family=\"sans-serif\" fill=\"#555\">"
      << xml_escape(sub) << "</text></g>\n";
  }
  o << "</svg>\n";
  return o.str();
}

std::string xml_escape(const std::string& s) {
  std::string r;
  r.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        r += "&amp;";
        break;
      case '<':
        r += "&lt;";
        break;
      case '>':
        r += "&gt;";
        break;
      case '"':
        r += "&quot;";
        break;
      case '\'':
        r += "&#39;";
        break;
      default:
        r += c;
    }
  }
  return r;
}

}  // namespace graft::doctor::detail
