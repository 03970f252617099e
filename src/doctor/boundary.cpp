// The step boundary: counts by generation, the census of stale graphs, their classification
// into rules, the growth verdict (warm-up W, confirmation K: a one-object-per-step leak is
// reported at step W + K, never earlier), and the evidence rules. See docs/notes/doctor.md.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "graft/autograd/autograd.h"
#include "graft/core/storage.h"
#include "graph_render.h"
#include "internal.h"
#include "object_ledger.h"
#include "state.h"

namespace graft::doctor {

namespace {

using detail::format_bytes;
using detail::where;

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool is_scalar_add(const NodeInfo& n) {
  static const std::set<std::string> adds = {"AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1",
                                             "RsubBackward1"};
  return adds.count(n.name) && numel_of(n.output_shape) == 1;
}

/// What a stale component looks like, structurally: the rule it suggests, the node that
/// anchors it to a line of the user's code, and its handles in order of relevance.
struct Classified {
  Rule rule = Rule::GraphGrowth;
  bool carried = false;
  const NodeInfo* anchor = nullptr;
  std::vector<HandleInfo> handles;
};

/// The handles through which nodes of steps before `current` are reachable (the ones that
/// keep the stale part alive); all handles when none does.
std::vector<HandleInfo> stale_holders(const GraphComponent& g, int64_t current,
                                      const std::unordered_map<uintptr_t, const NodeInfo*>& by_id) {
  std::unordered_map<uintptr_t, bool> reaches;  // memo: node -> reaches a stale node
  auto reach = [&](uintptr_t start) {
    std::vector<uintptr_t> stack{start};
    std::unordered_set<uintptr_t> seen{start};
    while (!stack.empty()) {
      const uintptr_t id = stack.back();
      stack.pop_back();
      auto m = reaches.find(id);
      if (m != reaches.end()) {
        if (m->second) return true;
        continue;
      }
      auto it = by_id.find(id);
      if (it == by_id.end()) continue;
      if (it->second->step < current && it->second->name != "AccumulateGrad") return true;
      for (uintptr_t next : it->second->next)
        if (seen.insert(next).second) stack.push_back(next);
    }
    return false;
  };
  std::vector<HandleInfo> out;
  for (const HandleInfo& h : g.handles) {
    auto m = reaches.find(h.node);
    const bool r = m != reaches.end() ? m->second : (reaches[h.node] = reach(h.node));
    if (r || h.grad_of_leaf) out.push_back(h);
  }
  return out.empty() ? g.handles : out;
}

Classified classify(const GraphComponent& g, int64_t current) {
  Classified c;
  std::unordered_map<uintptr_t, const NodeInfo*> by_id;
  for (const NodeInfo& n : g.nodes) by_id[n.id] = &n;
  const std::vector<HandleInfo> holding = stale_holders(g, current, by_id);
  auto handles_first = [&](auto pred) {
    std::vector<HandleInfo> first, rest;
    for (const HandleInfo& h : holding) (pred(h) ? first : rest).push_back(h);
    first.insert(first.end(), rest.begin(), rest.end());
    return first;
  };
  // LD004: a leaf's .grad holds a node of the graph
  for (const HandleInfo& h : g.handles) {
    if (!h.grad_of_leaf) continue;
    c.rule = Rule::CreateGraphGradCycle;
    auto it = by_id.find(h.node);
    c.anchor = it == by_id.end() ? nullptr : it->second;
    c.handles = handles_first([](const HandleInfo& x) { return x.grad_of_leaf; });
    return c;
  }
  // edges from a later step's node into an earlier step's node
  const NodeInfo* newest_source = nullptr;
  const NodeInfo* newest_target = nullptr;
  bool all_adds = true;
  for (const NodeInfo& n : g.nodes) {
    for (uintptr_t next : n.next) {
      auto it = by_id.find(next);
      if (it == by_id.end() || it->second->step >= n.step || it->second->step == 0) continue;
      if (it->second->name == "AccumulateGrad") continue;  // shared by every graph of its leaf
      all_adds &= is_scalar_add(n);
      if (!newest_source || n.step > newest_source->step) {
        newest_source = &n;
        newest_target = it->second;
      } else if (n.step == newest_source->step && it->second->step > newest_target->step) {
        newest_target = it->second;
      }
    }
  }
  if (newest_source) {
    if (all_adds) {
      c.rule = Rule::AccumulatedLoss;
      c.anchor = newest_source;
      c.handles = handles_first([&](const HandleInfo& h) {
        auto it = by_id.find(h.node);
        return it != by_id.end() && is_scalar_add(*it->second) && it->second->site == newest_source->site;
      });
      return c;
    }
    // the carried tensor: made by the target of the newest cross-step edge; its successor in
    // this step (same line, same op) is what the user's handle holds now
    c.rule = Rule::CarriedAcrossSteps;
    c.carried = true;
    c.anchor = newest_target;
    c.handles = handles_first([&](const HandleInfo& h) {
      auto it = by_id.find(h.node);
      return it != by_id.end() && it->second->site == newest_target->site && it->second->name == newest_target->name;
    });
    return c;
  }
  // within one step: its roots (no live node points at them)
  std::unordered_set<uintptr_t> pointed;
  for (const NodeInfo& n : g.nodes)
    for (uintptr_t next : n.next) pointed.insert(next);
  const NodeInfo* root = nullptr;
  for (const NodeInfo& n : g.nodes)
    if (!pointed.count(n.id) && (!root || n.step > root->step)) root = &n;
  if (!root && !g.nodes.empty()) root = &g.nodes.front();
  c.anchor = root;
  const bool scalar = root && numel_of(root->output_shape) == 1;
  c.rule = scalar && g.executed ? Rule::AccumulatedLoss : Rule::OutputsKeptUnderGrad;
  c.handles = handles_first([&](const HandleInfo& h) { return root && h.node == root->id; });
  return c;
}

std::string key_of(const Classified& c) {
  std::string k = rule_info(c.rule).id;
  if (c.anchor) {
    k += "@" + where(c.anchor->site) + "#" + c.anchor->name;
  }
  return k;
}

/// A finding waiting for its holders (resolved without the recorder's lock).
struct Pending {
  Finding f;
  std::vector<HandleInfo> handles;
  std::vector<size_t> components;  ///< the census components it is about (growth rules)
  bool growth = false;             ///< a graph that grows (else evidence, or kept tensors)
  bool kept = false;               ///< tensors without a graph that grow (LD011)
  lifetime::SiteId kept_site = 0;
};

/// `path` is `prefix` or lies under it: "replay" covers "replay", "replay[3]" and "replay.items",
/// not "replay_old" ("h" must not silence "history[3]").
bool path_under(const std::string& path, const std::string& prefix) {
  if (prefix.empty() || path.rfind(prefix, 0) != 0) return false;
  if (path.size() == prefix.size() || prefix.back() == '.' || prefix.back() == '[') return true;
  return path[prefix.size()] == '.' || path[prefix.size()] == '[';
}

bool is_allowed(const std::vector<std::string>& allow, const Finding& f) {
  for (const std::string& a : allow) {
    if (f.line == a || f.made_at == a) return true;
    for (const Holder& h : f.holders)
      if (path_under(h.path, a)) return true;
  }
  return false;
}

/// What one growth key looks like at this boundary.
struct KeyNow {
  std::vector<size_t> components;  // indexes into the census' components
  std::set<int64_t> stale_steps;
  int64_t nodes = 0, saved = 0, host = 0, oldest = 0, newest = 0;
  std::vector<HandleInfo> handles;
  Classified cls;
};
using KeysNow = std::map<std::string, KeyNow>;
using State = Session::State;

/// LD010's evidence: the step before `s` ran no backward, and nodes it made died without running.
void note_wasted_forward(State& st, int64_t s) {
  auto& wasted = st.wasted;
  if (s >= 2 && !st.backward_steps.count(s - 1)) {
    auto it = wasted.find(s - 1);
    if (it != wasted.end() && it->second.bytes > 0) {
      lifetime::SiteId top = 0;
      int64_t top_bytes = -1;
      for (auto [site, b] : it->second.site_bytes)
        if (b > top_bytes) top = site, top_bytes = b;
      const std::string line = where(top);
      State::Evidence& e = st.evidence_for(Rule::GradModeEval, line);
      e.steps.insert(s - 1);
      e.bytes = std::max(e.bytes, it->second.bytes);
      e.message = "a forward under grad mode" + (line.empty() ? std::string() : " at " + line) + " saved " +
                  format_bytes(it->second.bytes) + " in step " + std::to_string(s - 1) +
                  " for a backward that never ran";
    }
  }
  wasted.erase(wasted.begin(), wasted.lower_bound(s - 1));
}

/// Ends step `s` (under the recorder's lock; the framework's counts are in `rec`): the step's
/// record, its peak, the next generation.
void close_step(State& st, int64_t s, StepRecord& rec) {
  rec.step = s;
  if (!st.options.deterministic)
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.started).count();
  st.close_peak(s);
  rec.peak_bytes = st.last_peak.peak_bytes;
  st.steps = s;
  st.stepped_this_step.clear();
  detail::objects().advance_generation();  // what is made from now on belongs to step s + 1
  st.log(TimelineEvent{0, s, 0, nullptr, nullptr, 0, EventKind::Step});
  note_wasted_forward(st, s);
}

/// Classifies the census' stale components into growth keys and records, per key, how many
/// distinct past steps it keeps alive at boundary `s`.
KeysNow observe_keys(State& st, int64_t s, const Census& census) {
  auto& keys = st.keys;
  KeysNow now;
  for (size_t ci = 0; ci < census.components.size(); ++ci) {
    const GraphComponent& comp = census.components[ci];
    if (comp.stale_steps == 0) continue;
    Classified cls = classify(comp, s);
    KeyNow& k = now[key_of(cls)];
    k.components.push_back(ci);
    if (k.handles.empty()) {
      k.cls = cls;
      k.oldest = comp.oldest_step;
      k.newest = comp.newest_step;
    }
    for (const NodeInfo& n : comp.nodes)
      if (n.step < s) k.stale_steps.insert(n.step);
    k.nodes += static_cast<int64_t>(comp.nodes.size());
    k.saved += comp.saved_bytes;
    k.host += comp.host_bytes;
    k.oldest = std::min(k.oldest, comp.oldest_step);
    k.newest = std::max(k.newest, comp.newest_step);
    k.handles.insert(k.handles.end(), cls.handles.begin(), cls.handles.end());
  }
  for (auto& [key, k] : now) {
    State::KeyState& ks = keys[key];
    ks.rule = k.cls.rule;
    ks.carried = k.cls.carried;
    if (k.cls.anchor) {
      ks.anchor = k.cls.anchor->site;
      ks.anchor_name = k.cls.anchor->name;
    }
    const int64_t count = static_cast<int64_t>(k.stale_steps.size());
    ks.count[s] = count;
    ks.nodes[s] = k.nodes;
    ks.max_count = std::max(ks.max_count, count);
  }
  return now;
}

/// How many times `count_at(b)` rose over the observed boundaries after the warm-up `W`, counted
/// back from the latest one until it fell.
template <class CountAt>
int64_t rises_since_warmup(const std::vector<int64_t>& observed_boundaries, int W, CountAt count_at) {
  int64_t n = 0;
  for (size_t i = observed_boundaries.size(); i-- > 1;) {
    const int64_t b = observed_boundaries[i], prev = observed_boundaries[i - 1];
    if (b <= W) break;
    const int64_t cb = count_at(b), cp = count_at(prev);
    if (cb < cp) break;
    if (cb > cp) ++n;
  }
  return n;
}

int64_t value_at(const std::map<int64_t, int64_t>& series, int64_t b) {
  auto it = series.find(b);
  return it == series.end() ? 0 : it->second;
}

/// The growth verdict at boundary `s`: since the warm-up (or the key's last drop), the number of
/// past steps a key keeps alive never fell and rose at K observed boundaries, the latest one
/// now. Adds a pending finding for each key that grew (or, LD007, is detached too late).
void growth_findings(State& st, int64_t s, bool observed, const KeysNow& now, std::vector<Pending>& pending) {
  const int W = st.options.warmup, K = st.options.confirm, window = st.window;
  const auto& observed_boundaries = st.observed_boundaries;
  auto count_at = [&](const State::KeyState& ks, int64_t b) {
    int64_t c = value_at(ks.count, b);
    if (ks.carried) c = std::max<int64_t>(0, c - (window - 1));  // allowed window
    return c;
  };
  // A leak that keeps one step per step rises at W+1, ..., W+K: reported at step W + K, never
  // earlier; one that keeps a step every n steps is reported at its K-th rise.
  auto rises = [&](const State::KeyState& ks) {
    return rises_since_warmup(observed_boundaries, W, [&](int64_t b) { return count_at(ks, b); });
  };
  const int64_t prev_observed =
      observed_boundaries.size() >= 2 ? observed_boundaries[observed_boundaries.size() - 2] : 0;
  for (auto& [key, ks] : st.keys) {
    if (ks.reported || !observed) continue;
    auto it = now.find(key);
    const bool grew = s >= W + K && it != now.end() && count_at(ks, s) > count_at(ks, prev_observed) && rises(ks) >= K;
    bool too_late = false;  // LD007: carried, bounded, seen at K boundaries after the warm-up
    if (!grew && ks.carried && s >= W + K && ks.max_count + 1 > window) {
      int64_t seen = 0;
      for (auto [b, c] : ks.count)
        if (b > W && c > 0) ++seen;
      too_late = seen >= K && it != now.end();
    }
    if (!grew && !too_late) continue;
    const KeyNow& k = it->second;
    Pending p;
    p.growth = true;
    Finding& f = p.f;
    f.rule = too_late ? Rule::DetachedTooLate : ks.rule;
    f.step = s;
    f.first_step = k.oldest;
    f.line = where(ks.anchor);
    f.nodes = k.nodes;
    f.saved_bytes = k.saved;
    f.host_bytes = k.host;
    // from the first boundary that saw the key
    auto n0 = ks.nodes.begin();
    f.nodes_per_step = n0 != ks.nodes.end() && n0->first < s
                           ? static_cast<double>(k.nodes - n0->second) / static_cast<double>(s - n0->first)
                           : static_cast<double>(k.nodes);
    std::ostringstream m;
    if (too_late) {
      m << "a graph carried across steps spans up to " << ks.max_count + 1 << " steps before it is detached ("
        << k.nodes << " nodes, " << format_bytes(k.saved) << " saved now)";
    } else {
      m << k.nodes << " graph nodes from steps " << k.oldest << ".." << k.newest << " are alive ("
        << format_bytes(k.saved) << " saved";
      if (k.host > 0) m << ", " << format_bytes(k.host) << " of nodes on the host";  // (PyTorch's are unknown)
      m << "), ";
      char rate[32];
      std::snprintf(rate, sizeof rate, "%+.3g", f.nodes_per_step);
      m << rate << " nodes per step";
      if (ks.rule == Rule::CarriedAcrossSteps && !f.line.empty())
        m << "; the tensor made at " << f.line << " (" << ks.anchor_name << ") is carried into the next step";
    }
    f.message = m.str();
    f.key = key;
    p.components = k.components;
    p.handles = k.handles;
    if (p.handles.size() > 64) p.handles.resize(64);
    pending.push_back(std::move(p));
  }
}

/// Growth that does not come every step (a tensor kept each epoch) is LD011 only from this many
/// bytes per step on: a metric kept per validation is not worth a finding.
constexpr double kSlowGrowthBytes = 1024;

/// Whether `count_at` rose at each of the last `k` observed boundaries.
template <class CountAt>
bool rose_at_each(const std::vector<int64_t>& observed, int k, CountAt count_at) {
  if (observed.size() < static_cast<size_t>(k) + 1) return false;
  for (size_t i = observed.size() - static_cast<size_t>(k); i < observed.size(); ++i)
    if (count_at(observed[i]) <= count_at(observed[i - 1])) return false;
  return true;
}

/// Records, per line, how many distinct past steps its kept tensors come from at boundary `s`.
void observe_kept(State& st, int64_t s, const detail::KeptTensors& kept) {
  for (const auto& [site, g] : kept.groups) {
    State::KeptState& ks = st.kept[site];
    ks.count[s] = static_cast<int64_t>(g.steps.size());
    ks.bytes[s] = g.bytes;
  }
}

/// LD011's verdict at boundary `s`, as the graphs' (reported at step W + K at the earliest): the
/// tensors made at a line come from more past steps at K observed boundaries after the warm-up,
/// the latest one now, and their bytes grew since the first of those boundaries.
void kept_findings(State& st, int64_t s, const detail::KeptTensors& kept, std::vector<Pending>& pending) {
  const int W = st.options.warmup, K = st.options.confirm;
  const auto& observed = st.observed_boundaries;
  if (s < W + K || observed.size() < 2 || observed.back() != s) return;
  const int64_t prev = observed[observed.size() - 2];
  const auto first_after = std::upper_bound(observed.begin(), observed.end(), int64_t{W});
  for (auto& [site, ks] : st.kept) {
    auto it = kept.groups.find(site);
    if (ks.reported || it == kept.groups.end()) continue;
    const auto at = [&](int64_t b) { return value_at(ks.count, b); };
    if (at(s) <= at(prev) || rises_since_warmup(observed, W, at) < K) continue;
    const int64_t b0 = *first_after, bytes0 = value_at(ks.bytes, b0), bytes = value_at(ks.bytes, s);
    if (bytes <= bytes0) continue;  // more tensors, no more memory: not growth
    const double per_step = static_cast<double>(bytes - bytes0) / static_cast<double>(std::max<int64_t>(1, s - b0));
    if (!rose_at_each(observed, K, at) && per_step < kSlowGrowthBytes) continue;  // a validation history
    const detail::KeptGroup& g = it->second;
    Pending p;
    p.kept = true;
    p.kept_site = site;
    Finding& f = p.f;
    f.rule = Rule::TensorGrowth;
    f.step = s;
    f.first_step = *g.steps.begin();
    f.line = where(site);
    f.tensor_bytes = bytes;
    f.bytes_per_step = per_step;
    f.message = std::to_string(g.tensors) + " tensors without a graph" + (f.line.empty() ? "" : " made at " + f.line) +
                " in steps " + std::to_string(*g.steps.begin()) + ".." + std::to_string(*g.steps.rbegin()) +
                " are alive (" + format_bytes(bytes) + ", about " +
                format_bytes(static_cast<int64_t>(f.bytes_per_step)) + " more each step)";
    f.key = std::string("LD011@") + (f.line.empty() ? "?" : f.line);
    for (const auto& [seq, h] : g.handles) p.handles.push_back(h);
    pending.push_back(std::move(p));
  }
}

/// The evidence rules: a pending finding for each rule with evidence in K steps after the warm-up.
void evidence_findings(State& st, int64_t s, std::vector<Pending>& pending) {
  const int W = st.options.warmup, K = st.options.confirm;
  for (auto& [key, e] : st.evidence) {
    if (e.reported || s < W + K) continue;
    int64_t after = 0;
    for (int64_t t : e.steps)
      if (t > W) ++after;
    if (after < K) continue;
    Pending p;
    Finding& f = p.f;
    f.rule = e.rule;
    f.step = s;
    f.first_step = *e.steps.begin();
    f.line = e.line;
    f.message = e.message;
    f.saved_bytes = e.bytes;
    f.holders = e.holders;
    f.key = key;
    for (size_t i = 0; i < e.leaves.size(); ++i) {
      HandleInfo h;
      h.tensor = e.leaves[i];
      h.site = e.leaf_sites[i];
      p.handles.push_back(h);
    }
    pending.push_back(std::move(p));
  }
}

/// Pins the leaves named by evidence (they may have died since; the dead ones are dropped).
void pin_evidence_leaves(std::vector<Pending>& pending, std::vector<intrusive_ptr<TensorImpl>>& leaf_pins) {
  for (Pending& p : pending) {
    if (p.growth || p.handles.empty()) continue;
    std::unordered_set<uintptr_t> wanted;
    for (const HandleInfo& h : p.handles) wanted.insert(h.tensor);
    std::unordered_set<uintptr_t> alive;
    detail::objects().tensors.locked([&](const auto& tensors) {
      for (const auto& [t, entry] : tensors) {
        auto* impl = const_cast<TensorImpl*>(t);
        if (wanted.count(reinterpret_cast<uintptr_t>(t)) && intrusive_try_incref(impl)) {
          leaf_pins.push_back(intrusive_ptr<TensorImpl>::adopt(impl));
          alive.insert(reinterpret_cast<uintptr_t>(t));
        }
      }
    });
    std::erase_if(p.handles, [&](const HandleInfo& h) { return !alive.count(h.tensor); });
  }
}

/// Names each finding's holders (the Python layer's paths, or in C++ the handles' creation
/// lines), settles LD005, and draws the growing graph with its holders. No lock is held.
void name_holders(State& st, std::vector<Pending>& pending, Annotator* ann, const Census& census) {
  const int max_holders = st.options.max_holders;
  for (Pending& p : pending) {
    try {
      if (p.f.holders.empty() && !p.handles.empty()) {
        if (ann) p.f.holders = ann->holders(p.handles, max_holders);
        if (p.f.holders.empty()) {
          for (const HandleInfo& h : p.handles) {
            if (static_cast<int>(p.f.holders.size()) >= max_holders) break;
            Holder hd;
            hd.path = h.grad_of_leaf ? "the .grad of a tensor held outside the graph (native code)"
                                     : "a tensor held outside the graph (native code)";
            hd.created_at = h.site ? lifetime::site(h.site).detail() : std::string();
            hd.created_step = h.step;
            hd.tensor = h.tensor;
            p.f.holders.push_back(hd);
          }
        }
      }
      // the finding's line is where the primary holder stored the reference, the made-at line after it
      if ((p.growth || p.kept) && !p.f.holders.empty() && !p.f.holders.front().stored_at.empty() &&
          p.f.holders.front().stored_at != p.f.line) {
        p.f.made_at = p.f.line;
        p.f.line = p.f.holders.front().stored_at;
      }
      // the primary holder decides: a path through a hook is LD005
      if (p.growth && p.f.rule != Rule::DetachedTooLate && !p.f.holders.empty() && p.f.holders.front().through_hook) {
        p.f.rule = Rule::HookCapture;
        if (!p.f.holders.front().hook_registered_at.empty())
          p.f.message += "; the hook was registered at " + p.f.holders.front().hook_registered_at;
      }
      // the graph as it is now, with the holders named
      if (p.growth && !p.components.empty()) {
        Census part;
        part.step = census.step;
        for (size_t ci : p.components) part.components.push_back(census.components[ci]);
        detail::HandleLabels labels;
        for (const Holder& h : p.f.holders)
          if (h.tensor) labels.emplace(h.tensor, h.path);
        const detail::RenderGraph rg = detail::build_render_graph(part, -1, labels);
        p.f.graph_dot = detail::to_dot(rg);
        p.f.graph_svg = detail::to_svg(rg);
      }
    } catch (...) {  // a finding without its holders or picture is still a finding
    }
  }
}

/// Commits the findings of boundary `s` (under the recorder's lock) and the step's record.
void commit_findings(State& st, int64_t s, std::vector<Pending>& pending, StepRecord& rec) {
  for (Pending& p : pending) {
    Finding& f = p.f;
    // reported once committed: a boundary that failed half-way tries again at the next one
    if (p.growth)
      st.keys[f.key].reported = true;
    else if (p.kept)
      st.kept[p.kept_site].reported = true, st.kept_key_site[f.key] = p.kept_site;
    else
      st.evidence[f.key].reported = true;
    const RuleInfo& info = rule_info(f.rule);
    f.id = info.id;
    f.severity = info.severity;
    f.fix = info.fix;
    if (!f.holders.empty() && f.rule == Rule::MissingZeroGrad) {
      f.message += " (" + f.holders.front().path + (f.holders.size() > 1 ? ", ..." : "") + ")";
    }
    if (is_allowed(st.allowed, f)) continue;
    if (p.growth && !st.first_growth_report) st.first_growth_report = s;
    rec.findings.push_back(f.id);
    st.log(TimelineEvent{f.saved_bytes, s, 0, st.intern(f.id), st.intern(f.line), 0, EventKind::Finding});
    st.findings.push_back(std::move(f));
  }
  st.records.push_back(std::move(rec));
}

/// The storages that live graphs' saved slots hold.
std::unordered_set<uintptr_t> saved_storages(const Census& census) {
  std::unordered_set<uintptr_t> out;
  for (const GraphComponent& c : census.components)
    for (const NodeInfo& n : c.nodes)
      for (const SavedInfo& sv : n.saved)
        if (sv.storage && !sv.released) out.insert(sv.storage);
  return out;
}

/// Whether boundary `s` takes a census. Its cost grows with what a leak keeps: once a leak was
/// reported (at `first_growth_report`), it is taken 1, 2, 4 and 8 steps after that and then every
/// 8 steps (kCensusEvery), so a long leaking run costs an eighth of the censuses, and a second
/// leak that starts later is still confirmed at K observed boundaries, within K * 8 steps. A
/// boundary without stale graph objects is observed for free.
bool census_due(int64_t first_growth_report, int64_t s) {
  constexpr int64_t kCensusEvery = 8;
  const int64_t since = first_growth_report ? s - first_growth_report : 0;
  return !first_growth_report || (since < kCensusEvery && (since & (since - 1)) == 0) || since % kCensusEvery == 0;
}

}  // namespace

void Session::State::withdraw_bounded_growth() {
  const size_t window = 2 * static_cast<size_t>(options.confirm);
  const auto& observed = observed_boundaries;
  if (observed.size() < window + 1) return;
  const int64_t last = observed.back(), then = observed[observed.size() - 1 - window];
  std::erase_if(findings, [&](const Finding& f) {
    auto site = kept_key_site.find(f.key);
    if (f.rule != Rule::TensorGrowth || site == kept_key_site.end()) return false;
    const KeptState& ks = kept[site->second];
    const int64_t bytes = value_at(ks.bytes, last);
    if (bytes > value_at(ks.bytes, then)) return false;  // still growing
    int64_t stopped = last;                              // the first observed boundary at the final size or above
    for (int64_t b : observed)
      if (b >= f.step && value_at(ks.bytes, b) >= bytes) {
        stopped = b;
        break;
      }
    withdrawn.push_back(f.id + " at " + (f.line.empty() ? std::string("?") : f.line) + " (reported at step " +
                        std::to_string(f.step) + ") is withdrawn: those tensors stopped growing at step " +
                        std::to_string(stopped) + " and stayed at " + format_bytes(bytes) + " for the last " +
                        std::to_string(window) + " steps watched (a bounded buffer; fine if meant).");
    return true;
  });
}

void Session::State::step_boundary() {
  // what keeps the census' handles alive (graft's pins) and the evidence's leaves are dropped
  // after every lock is released (dropping a tensor that owns its Python object may take the
  // GIL): declared first, they are destroyed last
  std::shared_ptr<void> keep;
  std::vector<intrusive_ptr<TensorImpl>> leaf_pins;
  std::lock_guard<std::mutex> serial(step_mu);
  Annotator* ann = nullptr;
  Framework* framework = nullptr;
  int64_t s = 0;
  {
    std::lock_guard<detail::LightMutex> g(detail::recorder_mutex());
    if (!watching) return;
    s = steps + 1;
    ann = annotator;
    framework = &fw();
  }
  // Python's work at the boundary (a forced cyclic collection: LD006) runs first, unlocked
  if (ann) ann->at_boundary(s);

  // the framework is asked without the recorder's lock (graft's takes the ledger's; PyTorch's the GIL)
  StepRecord rec;
  framework->count(s, rec);
  detail::objects().trim_tables();  // a spike of objects in the step before does not keep its slots
  const bool any_stale = rec.stale_nodes + rec.stale_saved_slots > 0;
  {
    std::lock_guard<detail::LightMutex> g(detail::recorder_mutex());
    close_step(*this, s, rec);
  }

  // the census of stale graphs, and the tensors without a graph at the boundaries whose graphs are
  // known (what they save is theirs)
  const bool due = census_due(first_growth_report, s);
  const bool observed = !any_stale || due;
  Census census;
  census.step = s;
  if (any_stale && due) census = framework->census(s, keep);
  detail::KeptTensors kept;
  if (observed) kept = detail::group_kept(framework->kept_tensors(s, saved_storages(census)));

  std::vector<Pending> pending;
  {
    std::lock_guard<detail::LightMutex> g(detail::recorder_mutex());
    if (observed) observed_boundaries.push_back(s);
    const KeysNow now = observe_keys(*this, s, census);
    growth_findings(*this, s, observed, now, pending);
    if (observed) {
      observe_kept(*this, s, kept);
      kept_findings(*this, s, kept, pending);
    }
    evidence_findings(*this, s, pending);
  }
  // graft's tensors named by identity stay alive while their holders are searched (another
  // framework's identities are its own: the Python layer keeps those objects)
  if (framework == graft_framework.get()) pin_evidence_leaves(pending, leaf_pins);
  name_holders(*this, pending, ann, census);
  {
    std::lock_guard<detail::LightMutex> g(detail::recorder_mutex());
    commit_findings(*this, s, pending, rec);
  }
}

}  // namespace graft::doctor
