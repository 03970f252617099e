// The census: every live graph node (with its saved slots) and the tensors that hold them,
// read from the object ledger's tables, grouped into connected components.
// See docs/notes/doctor.md ("Census").
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/alloc/caching_allocator.h"
#include "graft/autograd/autograd.h"
#include "graft/autograd/node.h"
#include "internal.h"
#include "object_ledger.h"

namespace graft::doctor {

int64_t Census::nodes() const {
  int64_t n = 0;
  for (const auto& c : components) n += static_cast<int64_t>(c.nodes.size());
  return n;
}
int64_t Census::saved_bytes() const {
  int64_t n = 0;
  for (const auto& c : components) n += c.saved_bytes;
  return n;
}

namespace detail {

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes < 0 ? -bytes : bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%s%lld B", bytes < 0 ? "-" : "", static_cast<long long>(v));
  else
    std::snprintf(buf, sizeof buf, "%s%.1f %s", bytes < 0 ? "-" : "", v, units[u]);
  return buf;
}

std::string where(lifetime::SiteId id) { return id ? lifetime::site(id).where() : std::string(); }

namespace {

/// Collects what one node holds; counts references the graph itself makes to tensors.
class HeldCollector final : public HeldVisitor {
 public:
  HeldCollector(std::vector<SavedInfo>& out, std::unordered_map<const TensorImpl*, int>& internal_refs,
                std::vector<const Node*>& owned_nodes)
      : out_(out), internal_refs_(internal_refs), owned_nodes_(owned_nodes) {}
  const TensorImpl* leaf = nullptr;  ///< an AccumulateGrad's variable
  void saved(const SavedVariable& sv, std::string_view what) override {
    if (!sv.defined()) return;
    SavedInfo si;
    si.what = std::string(what);
    si.released = sv.released();
    si.packed = sv.packed();
    si.generation = objects().saved.value(&sv).generation;
    const Tensor& t = sv.held();
    if (t.defined()) {
      const TensorImpl* impl = t.impl();
      si.shape.assign(impl->sizes().begin(), impl->sizes().end());
      si.dtype = dtype_name(impl->dtype());
      const StorageImpl* st = impl->storage().get();
      si.storage = reinterpret_cast<uintptr_t>(st);
      si.bytes = static_cast<int64_t>(st->nbytes());
      si.parameter = alloc::CachingAllocator::category(st->data_ptr()) == MemoryCategory::Parameter;
      ++internal_refs_[impl];
    }
    out_.push_back(std::move(si));
  }
  void tensor(const Tensor& t, std::string_view what) override {
    if (!t.defined()) return;
    ++internal_refs_[t.impl()];
    if (what == "variable") leaf = t.impl();
  }
  void node(const Node& n, std::string_view) override { owned_nodes_.push_back(&n); }

 private:
  std::vector<SavedInfo>& out_;
  std::unordered_map<const TensorImpl*, int>& internal_refs_;
  std::vector<const Node*>& owned_nodes_;
};

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(size_t a, size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

int64_t host_bytes_of(const Node& n) {
  // the node's heap block (the most derived object starts it)
  return static_cast<int64_t>(malloc_usable_size(const_cast<void*>(dynamic_cast<const void*>(&n))));
}

}  // namespace

namespace {

/// What a census collects before it groups the nodes into components.
struct CensusBuild {
  uint32_t start_generation = 0;
  int64_t current_step = 0;
  PinnedCensus out;
  std::vector<NodeInfo> infos;
  std::unordered_map<const Node*, size_t> index;
  std::unordered_map<const TensorImpl*, int> internal_refs;
  /// Leaves of live AccumulateGrad nodes whose .grad has a grad_fn (LD004), found during the
  /// node walk: a parameter made before the session has no entry in the ledger.
  struct LeafGrad {
    const TensorImpl* leaf;
    const Node* grad_fn;
  };
  std::vector<LeafGrad> leaf_grads;
  std::vector<HandleInfo> handles;
};

using NodeMap = SideTable<Node, NodeEntry>::Map;

/// The objects of a locked table that are not being destroyed (a count of 0: the object waits
/// for the walk to erase its entry), newest first by creation order, with their entries: walks
/// in this order make reports and pictures the same on every run.
template <class Objects>
auto newest_first(const Objects& objects) {
  using Record = decltype(*objects.begin());  // (object pointer, entry)
  using Object = std::remove_const_t<std::remove_pointer_t<std::decay_t<decltype(std::declval<Record>().first)>>>;
  using Entry = std::decay_t<decltype(std::declval<Record>().second)>;
  std::vector<std::pair<Object*, Entry>> out;
  for (const auto& [o, entry] : objects)
    if (o->use_count() > 0) out.push_back({const_cast<Object*>(o), entry});
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.second.seq > y.second.seq; });
  return out;
}

/// One node's NodeInfo (its ledger entry, what it holds); notes an AccumulateGrad's leaf whose
/// .grad has a graph.
NodeInfo describe_node(CensusBuild& b, const Node& n, const NodeMap& nodes, std::vector<const Node*>& owned) {
  NodeInfo info;
  NodeEntry entry;
  if (const NodeEntry* e = nodes.find(&n)) entry = *e;
  info.id = reinterpret_cast<uintptr_t>(&n);
  info.sequence_nr = n.sequence_nr();
  info.name = n.class_name();
  info.generation = entry.generation;
  info.step = step_of(entry.generation, b.start_generation);
  info.site = entry.site;
  info.executed = entry.executed;
  info.host_bytes = host_bytes_of(n);
  if (n.num_inputs() > 0) {
    const auto& shape = n.input_metadata(0).shape;
    info.output_shape.assign(shape.begin(), shape.end());
  }
  HeldCollector collect(info.saved, b.internal_refs, owned);
  n.visit_held(collect);
  info.variable = reinterpret_cast<uintptr_t>(collect.leaf);
  if (collect.leaf) {
    const TensorImpl* g = autograd::grad_impl(*collect.leaf);
    if (g && g->grad_fn && intrusive_try_incref(collect.leaf)) {
      b.out.pins.push_back(intrusive_ptr<TensorImpl>::adopt(const_cast<TensorImpl*>(collect.leaf)));
      b.leaf_grads.push_back({collect.leaf, g->grad_fn.get()});
    }
  }
  return info;
}

/// Records every node in the ledger and, depth first, the nodes they reach that have no entry
/// (made before the session). The ledger's node table is locked meanwhile: every node reachable
/// from a recorded live node stays alive. Newest first, by creation order: pictures and node
/// lists come out the same on every run.
void walk_nodes(CensusBuild& b) {
  objects().nodes.locked([&](const NodeMap& nodes) {
    for (const auto& root : newest_first(nodes)) {
      std::vector<const Node*> stack{root.first};
      while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        if (b.index.count(n)) continue;
        b.index.emplace(n, b.infos.size());
        std::vector<const Node*> owned;
        NodeInfo info = describe_node(b, *n, nodes, owned);
        for (const Edge& e : n->next_edges()) {
          if (!e.function) continue;
          info.next.push_back(reinterpret_cast<uintptr_t>(e.function.get()));
          if (!nodes.count(e.function.get())) stack.push_back(e.function.get());
        }
        for (const Node* o : owned) {
          info.next.push_back(reinterpret_cast<uintptr_t>(o));
          if (!nodes.count(o)) stack.push_back(o);
        }
        b.infos.push_back(std::move(info));
      }
    }
  });
}

/// Handles: live tensors whose grad_fn (or whose .grad's grad_fn) is one of the census's
/// nodes, and which something besides the graph itself holds.
void find_handles(CensusBuild& b) {
  std::set<std::pair<uintptr_t, uintptr_t>> seen;
  for (const CensusBuild::LeafGrad& lg : b.leaf_grads) {
    if (!b.index.count(lg.grad_fn)) continue;
    const ObjectEntry entry = objects().tensors.value(lg.leaf);
    HandleInfo h;
    h.tensor = reinterpret_cast<uintptr_t>(lg.leaf);
    h.node = reinterpret_cast<uintptr_t>(lg.grad_fn);
    h.grad_of_leaf = true;
    h.leaf = h.tensor;
    h.site = entry.site;
    h.step = step_of(entry.generation, b.start_generation);
    h.shape.assign(lg.leaf->sizes().begin(), lg.leaf->sizes().end());
    seen.insert({h.tensor, h.node});
    b.handles.push_back(std::move(h));
  }
  objects().tensors.locked([&](const RecordedTensors::View& tensors) {
    for (const auto& [t, entry] : newest_first(tensors)) {
      auto add = [&](const Node* n, bool grad_of_leaf) {
        if (!n || !b.index.count(n)) return;
        if (!seen.insert({reinterpret_cast<uintptr_t>(t), reinterpret_cast<uintptr_t>(n)}).second) return;
        auto it = b.internal_refs.find(t);
        // a Python object the tensor owns (kept for its identity once Python let go of it, see
        // docs/notes/python.md) holds a reference that is nobody's handle
        const int users = static_cast<int>(t->use_count()) - (t->owned_pyobject ? 1 : 0);
        if (!grad_of_leaf && it != b.internal_refs.end() && users <= it->second) return;
        HandleInfo h;
        h.tensor = reinterpret_cast<uintptr_t>(t);
        h.node = reinterpret_cast<uintptr_t>(n);
        h.grad_of_leaf = grad_of_leaf;
        h.leaf = grad_of_leaf ? reinterpret_cast<uintptr_t>(t) : 0;
        h.site = entry.site;
        h.step = step_of(entry.generation, b.start_generation);
        h.shape.assign(t->sizes().begin(), t->sizes().end());
        if (intrusive_try_incref(t)) b.out.pins.push_back(intrusive_ptr<TensorImpl>::adopt(t));
        b.handles.push_back(std::move(h));
      };
      add(t->grad_fn.get(), false);
      if (const TensorImpl* g = autograd::grad_impl(*t)) add(g->grad_fn.get(), true);
    }
  });
}

/// What assemble_census works on: the nodes, their index by id, each node's component.
struct Assembly {
  std::vector<NodeInfo> infos;
  std::unordered_map<uintptr_t, size_t> index;
  std::vector<size_t> comp_of;
  int64_t current_step = 0;
  Census census;
};

/// Components: nodes joined by edges. A leaf's AccumulateGrad is shared by every graph that
/// uses the leaf: it joins only its newest user's component, so that two steps' graphs stay
/// two graphs. Fills a.comp_of and makes the (empty) components.
void group_components(Assembly& a) {
  const std::vector<NodeInfo>& infos = a.infos;
  UnionFind uf(infos.size());
  std::vector<int64_t> acc_owner(infos.size(), -1);
  for (size_t i = 0; i < infos.size(); ++i)
    for (uintptr_t next : infos[i].next) {
      auto it = a.index.find(next);
      if (it == a.index.end()) continue;
      const size_t j = it->second;
      if (infos[j].name == "AccumulateGrad") {
        if (acc_owner[j] < 0 || infos[i].step > infos[static_cast<size_t>(acc_owner[j])].step)
          acc_owner[j] = static_cast<int64_t>(i);
        continue;
      }
      uf.unite(i, j);
    }
  for (size_t j = 0; j < infos.size(); ++j)
    if (acc_owner[j] >= 0) uf.unite(j, static_cast<size_t>(acc_owner[j]));
  std::unordered_map<size_t, size_t> comp_of_root;
  auto& comps = a.census.components;
  a.comp_of.resize(infos.size());
  for (size_t i = 0; i < infos.size(); ++i) {
    auto [it, fresh] = comp_of_root.emplace(uf.find(i), comps.size());
    if (fresh) comps.emplace_back();
    a.comp_of[i] = it->second;
  }
}

/// Adds node `n` to its component `g`: steps, types, bytes (each storage once), cross-step edges.
void add_node(Assembly& a, GraphComponent& g, const NodeInfo& n, std::set<uintptr_t>& storages,
              std::set<uintptr_t>& param_storages) {
  if (g.nodes.empty()) g.oldest_step = g.newest_step = n.step;
  g.oldest_step = std::min(g.oldest_step, n.step);
  g.newest_step = std::max(g.newest_step, n.step);
  g.nodes_by_type[n.name] += 1;
  g.host_bytes += n.host_bytes;
  g.executed |= n.executed;
  for (const SavedInfo& s : n.saved) {
    if (!s.storage || s.released || s.packed) continue;
    if (s.parameter) {
      if (param_storages.insert(s.storage).second) g.parameter_bytes += s.bytes;
    } else if (storages.insert(s.storage).second) {
      g.saved_bytes += s.bytes;
    }
  }
  for (uintptr_t next : n.next) {
    auto it = a.index.find(next);
    if (it != a.index.end() && a.infos[it->second].step < n.step && a.infos[it->second].name != "AccumulateGrad")
      g.cross_step_edges = true;
  }
  g.nodes.push_back(n);
}

/// Fills each component from its nodes, with its sites by count and its stale steps.
void fill_components(Assembly& a) {
  auto& comps = a.census.components;
  std::vector<std::set<uintptr_t>> storages(comps.size()), param_storages(comps.size());
  std::vector<std::set<int64_t>> stale(comps.size());
  std::vector<std::map<lifetime::SiteId, int64_t>> site_counts(comps.size());
  for (size_t i = 0; i < a.infos.size(); ++i) {
    const size_t c = a.comp_of[i];
    const NodeInfo& n = a.infos[i];
    if (n.step < a.current_step) stale[c].insert(n.step);
    if (n.site) site_counts[c][n.site] += 1;
    add_node(a, comps[c], n, storages[c], param_storages[c]);
  }
  for (size_t c = 0; c < comps.size(); ++c) {
    GraphComponent& g = comps[c];
    g.stale_steps = static_cast<int64_t>(stale[c].size());
    // newest step first; within a step the walk's order (newest first)
    std::stable_sort(g.nodes.begin(), g.nodes.end(),
                     [](const NodeInfo& x, const NodeInfo& y) { return x.generation > y.generation; });
    std::vector<std::pair<int64_t, lifetime::SiteId>> by_count;
    for (auto [site, count] : site_counts[c]) by_count.push_back({-count, site});
    std::sort(by_count.begin(), by_count.end());
    for (auto [neg, site] : by_count) g.sites.push_back(site);
  }
}

}  // namespace

}  // namespace detail

Census assemble_census(std::vector<NodeInfo> nodes, std::vector<HandleInfo> handles, int64_t step) {
  detail::Assembly a;
  a.current_step = step;
  a.census.step = step;
  a.infos = std::move(nodes);
  for (size_t i = 0; i < a.infos.size(); ++i) a.index.emplace(a.infos[i].id, i);
  detail::group_components(a);
  detail::fill_components(a);
  auto& comps = a.census.components;
  for (HandleInfo& h : handles) {
    auto it = a.index.find(h.node);
    if (it != a.index.end()) comps[a.comp_of[it->second]].handles.push_back(std::move(h));
  }
  // the biggest graphs first
  std::stable_sort(comps.begin(), comps.end(),
                   [](const GraphComponent& x, const GraphComponent& y) { return x.nodes.size() > y.nodes.size(); });
  for (size_t c = 0; c < comps.size(); ++c) comps[c].id = static_cast<int64_t>(c);
  return std::move(a.census);
}

namespace detail {

PinnedCensus take_census(uint32_t start_generation, int64_t current_step) {
  CensusBuild b;
  b.start_generation = start_generation;
  b.current_step = current_step;
  walk_nodes(b);
  find_handles(b);
  b.out.census = assemble_census(std::move(b.infos), std::move(b.handles), current_step);
  return std::move(b.out);
}

}  // namespace detail
}  // namespace graft::doctor
