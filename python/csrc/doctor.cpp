// The leak doctor from Python (graft.doctor): the C++ session, the Python creation sites
// (the first frame outside the graft package, with the nn.Module being called), the bridge
// that lets Python name the holders of a graph (holder paths, cycles), and the lookups the
// holder search needs (a TensorImpl's Python object, a tensor's C++-held children).
// See docs/notes/doctor.md.
#include <unordered_map>

#include "graft/doctor/doctor.h"
#include "python_common.h"  // Python.h first: it declares the frame API used below

namespace graft::python {
namespace {

namespace dr = graft::doctor;

// ---------------------------------------------------------------- creation sites

std::string g_package_dir;  // ".../graft/": frames under it are graft's own
std::vector<std::string> g_scope_names{""};
thread_local std::vector<uint32_t> tl_scopes;  // indexes into g_scope_names (nn.Module paths)
// a thread without a user frame (a DataLoader worker) names this line: its dataset or collate
thread_local lifetime::SiteId tl_thread_site = 0;

struct CodeInfo {
  bool internal = false;
  bool module_call = false;  // graft's nn.Module._call_impl: the caller of a model's forward
  std::string file, function;
  std::vector<int> lines;  // line of each instruction offset / 2 seen so far (0: not yet), Python >= 3.11
};

/// A direct-mapped cache in front of a map (the GIL serializes every use): one slot per hash of
/// the key, a hit is one comparison, a miss goes to the map and takes the slot. The site of every
/// object made at tier Sites looks up a few code objects and one site key.
template <class Key, class Value, size_t Bits, class Hash>
class RecentCache {
 public:
  const Value* find(const Key& k) const {
    const Slot& s = slots_[index(k)];
    return s.used && s.key == k ? &s.value : nullptr;
  }
  void put(const Key& k, const Value& v) { slots_[index(k)] = Slot{k, v, true}; }

 private:
  static constexpr size_t N = size_t{1} << Bits;
  static size_t index(const Key& k) {  // the top bits of a multiply: every bit of the hash counts
    return static_cast<size_t>((static_cast<uint64_t>(Hash()(k)) * 0x9E3779B97F4A7C15ull) >> (64 - Bits));
  }
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };
  Slot slots_[N];
};
struct PointerHash {
  size_t operator()(const void* p) const { return reinterpret_cast<uintptr_t>(p) >> 4; }
};
std::unordered_map<PyCodeObject*, CodeInfo>& code_infos() {
  static auto* m = new std::unordered_map<PyCodeObject*, CodeInfo>;  // holds a reference to each code
  return *m;
}
struct SiteKey {
  PyCodeObject* code;
  int line;
  PyCodeObject* outer_code;
  int outer_line;
  uint32_t scope;
  bool operator==(const SiteKey& o) const {
    return code == o.code && line == o.line && outer_code == o.outer_code && outer_line == o.outer_line &&
           scope == o.scope;
  }
};
struct SiteKeyHash {
  size_t operator()(const SiteKey& k) const {
    size_t h = std::hash<void*>()(k.code) ^ (static_cast<size_t>(k.line) * 0x9E3779B97F4A7C15ULL);
    h ^= std::hash<void*>()(k.outer_code) * 31 + static_cast<size_t>(k.outer_line);
    return h ^ (size_t(k.scope) << 20);
  }
};
std::unordered_map<SiteKey, lifetime::SiteId, SiteKeyHash>& site_cache() {
  static auto* m = new std::unordered_map<SiteKey, lifetime::SiteId, SiteKeyHash>;
  return *m;
}

RecentCache<PyCodeObject*, CodeInfo*, 9, PointerHash>& recent_codes() {
  static auto* c = new RecentCache<PyCodeObject*, CodeInfo*, 9, PointerHash>;
  return *c;
}

CodeInfo& code_info(PyCodeObject* code) {
  if (CodeInfo* const* hit = recent_codes().find(code)) return **hit;
  auto& infos = code_infos();
  auto it = infos.find(code);
  if (it != infos.end()) {
    recent_codes().put(code, &it->second);  // unordered_map entries stay where they are
    return it->second;
  }
  CodeInfo ci;
  PyObject* file = code->co_filename;  // borrowed
#if PY_VERSION_HEX >= 0x030B0000
  PyObject* name = code->co_qualname ? code->co_qualname : code->co_name;
#else
  PyObject* name = code->co_name;  // (no qualified names before Python 3.11)
#endif
  if (file && PyUnicode_Check(file)) ci.file = PyUnicode_AsUTF8(file);
  if (name && PyUnicode_Check(name)) ci.function = PyUnicode_AsUTF8(name);
  if (PyErr_Occurred()) PyErr_Clear();
  ci.internal = !g_package_dir.empty() && ci.file.rfind(g_package_dir, 0) == 0;
  // a thread's bootstrap is no user's line: a thread without one (a DataLoader worker) names its
  // own site (tl_thread_site)
  const std::string boot = "/threading.py";
  ci.internal |= ci.file.size() >= boot.size() && ci.file.compare(ci.file.size() - boot.size(), boot.size(), boot) == 0;
  ci.module_call = ci.internal && (ci.function == "Module._call_impl" || ci.function == "_call_impl");
  Py_INCREF(code);  // the cache keys on the object: keep it alive (and its address unique)
  CodeInfo& made = infos.emplace(code, std::move(ci)).first->second;
  recent_codes().put(code, &made);
  return made;
}

/// The line `f` executes. Mapping an instruction to its line walks the code's line table
/// (PyCode_Addr2Line, the most of a site's cost): on Python >= 3.11 each offset is mapped once.
int frame_line(PyFrameObject* f, CodeInfo& ci) {
#if PY_VERSION_HEX >= 0x030B0000
  const int lasti = PyFrame_GetLasti(f);
  if (lasti >= 0) {
    const size_t at = static_cast<size_t>(lasti) / 2;
    if (at < ci.lines.size() && ci.lines[at] != 0) return ci.lines[at];
    const int line = PyFrame_GetLineNumber(f);
    if (at < (size_t{1} << 20)) {  // (a bound on a code object's size, for the table)
      if (at >= ci.lines.size()) ci.lines.resize(at + 1, 0);
      ci.lines[at] = line;
    }
    return line;
  }
#else
  (void)ci;
#endif
  return PyFrame_GetLineNumber(f);
}

// ---- one site per call from Python: the objects an op makes share its line (SiteCallScope) ----

thread_local uint64_t tl_call = 0;        // the SiteCallScope this thread is in (0: none)
thread_local uint64_t tl_calls_made = 0;  // scopes entered on this thread (their ids)

/// Where the last site was found: the call, the top frame and what it executed, the scope.
/// Within one call the top frame is alive (it called us, or a callback of ours runs on top of
/// it), so the same frame at the same instruction of the same code has the same site.
struct CallSite {
  uint64_t call = 0;
  PyFrameObject* frame = nullptr;
  PyCodeObject* code = nullptr;
  int lasti = -1;
  uint32_t scope = 0;
  lifetime::SiteId site = 0;
  static CallSite of(PyFrameObject* f, uint32_t scope) {
    CallSite c;
#if PY_VERSION_HEX >= 0x030B0000  // (no PyFrame_GetLasti before 3.11: no reuse there)
    c.call = tl_call;
    c.frame = f;
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference; code_infos keeps the code alive
    c.code = code;
    Py_DECREF(code);
    c.lasti = PyFrame_GetLasti(f);
    c.scope = scope;
#else
    (void)f;
    (void)scope;
#endif
    return c;
  }
  bool same_place(const CallSite& o) const {
    return call != 0 && call == o.call && frame == o.frame && code == o.code && lasti == o.lasti && scope == o.scope;
  }
};
thread_local CallSite tl_last_site;

lifetime::SiteId walk_python_site(PyFrameObject* f, uint32_t scope);

/// The site of the innermost Python frame outside graft on this thread (0 without the GIL or
/// without a Python frame). When that frame is a forward called through nn.Module (the user's
/// model), the site is the line that called the model, and the forward's line is kept as the
/// site's inner frame. Called for every node, storage and tensor made at tier Sites.
lifetime::SiteId python_site() {
  if (!Py_IsInitialized() || !PyGILState_Check()) return 0;
  PyThreadState* ts = PyThreadState_Get();
  PyFrameObject* f = PyThreadState_GetFrame(ts);  // new reference, or null
  const uint32_t scope = tl_scopes.empty() ? 0 : tl_scopes.back();
  CallSite here;
  if (f && tl_call != 0) {  // within one call from Python (SiteCallScope): the last site, if the top is the same
    here = CallSite::of(f, scope);
    if (here.same_place(tl_last_site)) {
      Py_DECREF(f);
      return tl_last_site.site;
    }
  }
  const lifetime::SiteId site = walk_python_site(f, scope);
  if (here.call) {
    here.site = site;
    tl_last_site = here;
  }
  return site;
}

lifetime::SiteId walk_python_site(PyFrameObject* f, uint32_t scope) {
  PyCodeObject* inner_code = nullptr;  // borrowed from code_infos (kept alive there)
  int inner_line = 0;
  PyCodeObject* outer_code = nullptr;
  int outer_line = 0;
  bool through_module = false;  // an nn.Module call lies between the last user frame and here
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference
    CodeInfo& ci = code_info(code);
    Py_DECREF(code);  // code_infos holds one
    if (ci.module_call && outer_code) through_module = true;
    if (!ci.internal) {
      if (outer_code && !through_module) break;  // the user frame above is not a model's forward
      const int line = frame_line(f, ci);
      if (!inner_code) {
        inner_code = code;
        inner_line = line;
      }
      outer_code = code;
      outer_line = line;
      through_module = false;
    }
    PyFrameObject* back = PyFrame_GetBack(f);  // new reference, or null
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  if (!outer_code) return tl_thread_site;
  const SiteKey key{inner_code, inner_line, outer_code, outer_line, scope};
  static auto* recent_sites = new RecentCache<SiteKey, lifetime::SiteId, 10, SiteKeyHash>;
  if (const lifetime::SiteId* hit = recent_sites->find(key)) return *hit;
  if (auto it = site_cache().find(key); it != site_cache().end()) {
    recent_sites->put(key, it->second);
    return it->second;
  }
  const CodeInfo& outer = code_info(outer_code);
  lifetime::Site s;
  s.file = outer.file;
  s.line = outer_line;
  s.function = outer.function;
  s.scope = g_scope_names[scope];
  if (inner_code != outer_code || inner_line != outer_line) {
    const CodeInfo& in = code_info(inner_code);
    const auto slash = in.file.rfind('/');
    s.inner = in.function + " at " + (slash == std::string::npos ? in.file : in.file.substr(slash + 1)) + ":" +
              std::to_string(inner_line);
  }
  s.python = true;
  const lifetime::SiteId id = lifetime::intern_site(s);
  site_cache().emplace(key, id);
  recent_sites->put(key, id);
  return id;
}

// ---------------------------------------------------------------- the session from Python

/// A holder from its Python dict (path, created_at, created_step, through_hook).
dr::Holder holder_of(py::handle item) {
  dr::Holder h;
  h.path = item["path"].cast<std::string>();
  h.created_at = item["created_at"].cast<std::string>();
  if (item.contains("stored_at")) h.stored_at = item["stored_at"].cast<std::string>();
  if (item.contains("hook_registered_at")) h.hook_registered_at = item["hook_registered_at"].cast<std::string>();
  h.created_step = item["created_step"].cast<int64_t>();
  h.through_hook = item["through_hook"].cast<bool>();
  return h;
}

/// Asks Python for the holders of a graph, and gives it the step boundary (cycle collection).
class PyAnnotator final : public dr::Annotator {
 public:
  PyAnnotator(py::object holders, py::object boundary) : holders_(std::move(holders)), boundary_(std::move(boundary)) {}
  std::vector<dr::Holder> holders(const std::vector<dr::HandleInfo>& handles, int max) override {
    py::gil_scoped_acquire gil;
    std::vector<dr::Holder> out;
    try {
      py::list hs;
      for (const dr::HandleInfo& h : handles) {
        py::dict d;
        d["tensor"] = h.tensor;
        d["node"] = h.node;
        d["grad_of_leaf"] = h.grad_of_leaf;
        d["site"] = h.site ? lifetime::site(h.site).detail() : std::string();
        d["step"] = h.step;
        d["shape"] = h.shape;
        hs.append(std::move(d));
      }
      py::object r = holders_.get()(hs, max);
      for (py::handle item : r) {
        dr::Holder h = holder_of(item);
        if (item.contains("tensor")) h.tensor = item["tensor"].cast<uintptr_t>();
        out.push_back(std::move(h));
      }
    } catch (py::error_already_set& e) {  // a failing holder search never fails the step
      e.discard_as_unraisable("graft.doctor holder search");
    }
    return out;
  }
  void at_boundary(int64_t step) override {
    py::gil_scoped_acquire gil;
    try {
      boundary_.get()(step);
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("graft.doctor step boundary");
    }
  }

 private:
  SafePyObject holders_, boundary_;
};

// ---------------------------------------------------------------- another framework (PyTorch)

template <class T>
T get_or(py::handle d, const char* key, T fallback) {
  py::dict dict = py::reinterpret_borrow<py::dict>(d);
  return dict.contains(key) ? dict[key].cast<T>() : fallback;
}

dr::SavedInfo saved_of(py::handle d) {
  dr::SavedInfo s;
  s.what = get_or<std::string>(d, "what", "");
  s.shape = get_or<std::vector<int64_t>>(d, "shape", {});
  s.dtype = get_or<std::string>(d, "dtype", "");
  s.bytes = get_or<int64_t>(d, "bytes", 0);
  s.storage = get_or<uintptr_t>(d, "storage", 0);
  s.released = get_or<bool>(d, "released", false);
  s.packed = get_or<bool>(d, "packed", false);
  s.parameter = get_or<bool>(d, "parameter", false);
  return s;
}

dr::NodeInfo node_of(py::handle d) {
  dr::NodeInfo n;
  n.id = d["id"].cast<uintptr_t>();
  n.sequence_nr = get_or<uint64_t>(d, "sequence_nr", 0);
  n.name = d["name"].cast<std::string>();
  n.step = d["step"].cast<int64_t>();
  n.generation = static_cast<uint32_t>(n.step);
  n.site = get_or<lifetime::SiteId>(d, "site", 0);
  n.executed = get_or<bool>(d, "executed", false);
  n.host_bytes = get_or<int64_t>(d, "host_bytes", 0);
  n.next = get_or<std::vector<uintptr_t>>(d, "next", {});
  for (py::handle sv : d["saved"]) n.saved.push_back(saved_of(sv));
  n.output_shape = get_or<std::vector<int64_t>>(d, "output_shape", {});
  n.variable = get_or<uintptr_t>(d, "variable", 0);
  return n;
}

dr::HandleInfo handle_of(py::handle d) {
  dr::HandleInfo h;
  h.tensor = d["tensor"].cast<uintptr_t>();
  h.node = get_or<uintptr_t>(d, "node", 0);
  h.grad_of_leaf = get_or<bool>(d, "grad_of_leaf", false);
  h.leaf = get_or<uintptr_t>(d, "leaf", 0);
  h.step = d["step"].cast<int64_t>();
  h.shape = get_or<std::vector<int64_t>>(d, "shape", {});
  h.site = get_or<lifetime::SiteId>(d, "site", 0);
  return h;
}

/// A framework the Python layer answers for (python/graft/doctor/_torch.py): its methods return
/// plain dicts and lists, made into the doctor's structs here. A failing answer never fails the
/// step: it counts as nothing seen, reported as unraisable.
class PyFramework final : public dr::Framework {
 public:
  explicit PyFramework(py::object impl) : impl_(std::move(impl)) {}
  std::string name() const override {
    py::gil_scoped_acquire gil;
    return impl_.get().attr("name")().cast<std::string>();
  }
  void count(int64_t step, dr::StepRecord& rec) override {
    py::gil_scoped_acquire gil;
    guarded("count", [&] {
      py::object d = impl_.get().attr("count")(step);
      rec.graph_nodes = d["graph_nodes"].cast<int64_t>();
      rec.stale_nodes = d["stale_nodes"].cast<int64_t>();
      rec.saved_slots = d["saved_slots"].cast<int64_t>();
      rec.stale_saved_slots = d["stale_saved_slots"].cast<int64_t>();
      rec.saved_bytes = d["saved_bytes"].cast<int64_t>();
      rec.graph_host_bytes = get_or<int64_t>(d, "graph_host_bytes", 0);
      rec.stale_generations = d["stale_generations"].cast<int64_t>();
      rec.bytes_by_category = d["bytes_by_category"].cast<std::map<std::string, int64_t>>();
      rec.reserved = d["reserved"].cast<int64_t>();
    });
  }
  dr::Census census(int64_t step, std::shared_ptr<void>&) override {
    py::gil_scoped_acquire gil;
    std::vector<dr::NodeInfo> nodes;
    std::vector<dr::HandleInfo> handles;
    guarded("census", [&] {
      py::tuple r = impl_.get().attr("census")(step);
      for (py::handle n : r[0]) nodes.push_back(node_of(n));
      for (py::handle h : r[1]) handles.push_back(handle_of(h));
    });
    return dr::assemble_census(std::move(nodes), std::move(handles), step);
  }
  std::vector<dr::KeptTensor> kept_tensors(int64_t step, const std::unordered_set<uintptr_t>& graph_storages) override {
    py::gil_scoped_acquire gil;
    std::vector<dr::KeptTensor> out;
    guarded("kept tensors", [&] {
      py::set storages;
      for (uintptr_t s : graph_storages) storages.add(py::int_(s));
      for (py::handle d : impl_.get().attr("kept_tensors")(step, storages)) {
        dr::KeptTensor k;
        k.handle = handle_of(d);
        k.storage = d["storage"].cast<uintptr_t>();
        k.bytes = d["bytes"].cast<int64_t>();
        k.order = get_or<uint64_t>(d, "order", 0);
        out.push_back(std::move(k));
      }
    });
    return out;
  }
  std::vector<std::string> memory_sentences() override {
    py::gil_scoped_acquire gil;
    std::vector<std::string> out;
    guarded("memory", [&] { out = impl_.get().attr("memory_sentences")().cast<std::vector<std::string>>(); });
    return out;
  }

 private:
  template <class F>
  void guarded(const char* what, F&& f) const {
    try {
      f();
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyboardInterrupt)) {  // Ctrl-C during the walk: raised again where Python checks
        e.restore();
        PyErr_Clear();
        PyErr_SetInterrupt();
        return;
      }
      e.discard_as_unraisable(py::str(std::string("graft.doctor framework ") + what));
    } catch (py::cast_error& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
      PyErr_WriteUnraisable(nullptr);
    }
  }
  SafePyObject impl_;
};

/// What the Python class holds: the session, its annotator and its framework (which must outlive it).
struct PySession {
  std::unique_ptr<PyAnnotator> annotator;
  std::unique_ptr<PyFramework> framework;
  std::unique_ptr<dr::Session> session;
  ~PySession() {
    if (session) {
      session->set_annotator(nullptr);
      session->set_framework(nullptr);
    }
  }
};

lifetime::Tier tier_of(const std::string& t) {
  if (t == "counters" || t == "0") return lifetime::Tier::Counters;
  if (t == "sites" || t == "1") return lifetime::Tier::Sites;
  throw ValueError("graft.doctor: tier must be 'counters' (0) or 'sites' (1), got '" + t + "'");
}

py::list holders_list(const std::vector<dr::Holder>& hs) {
  py::list out;
  for (const dr::Holder& h : hs)
    out.append(py::dict(py::arg("path") = h.path, py::arg("created_at") = h.created_at,
                        py::arg("stored_at") = h.stored_at, py::arg("hook_registered_at") = h.hook_registered_at,
                        py::arg("created_step") = h.created_step, py::arg("through_hook") = h.through_hook));
  return out;
}

py::dict finding_dict(const dr::Finding& f) {
  const dr::RuleInfo& r = dr::rule_info(f.rule);
  py::dict d;
  d["id"] = f.id;
  d["name"] = r.name;
  d["severity"] = dr::severity_name(f.severity);
  d["step"] = f.step;
  d["first_step"] = f.first_step;
  d["message"] = f.message;
  d["summary"] = r.summary;
  d["fix"] = f.fix;
  d["line"] = f.line;
  d["made_at"] = f.made_at;
  d["holders"] = holders_list(f.holders);
  d["nodes"] = f.nodes;
  d["saved_bytes"] = f.saved_bytes;
  d["host_bytes"] = f.host_bytes;
  d["nodes_per_step"] = f.nodes_per_step;
  d["tensor_bytes"] = f.tensor_bytes;
  d["bytes_per_step"] = f.bytes_per_step;
  d["graph_dot"] = f.graph_dot;
  d["graph_svg"] = f.graph_svg;
  return d;
}

py::dict component_dict(const dr::GraphComponent& c) {
  py::dict d;
  d["id"] = c.id;
  d["nodes"] = static_cast<int64_t>(c.nodes.size());
  d["nodes_by_type"] = c.nodes_by_type;
  d["saved_bytes"] = c.saved_bytes;
  d["parameter_bytes"] = c.parameter_bytes;
  d["host_bytes"] = c.host_bytes;
  d["oldest_step"] = c.oldest_step;
  d["newest_step"] = c.newest_step;
  d["stale_steps"] = c.stale_steps;
  d["executed"] = c.executed;
  d["cross_step_edges"] = c.cross_step_edges;
  py::list sites;
  for (auto s : c.sites) sites.append(lifetime::site(s).where());
  d["lines"] = sites;
  py::list handles;
  for (const dr::HandleInfo& h : c.handles)
    handles.append(py::dict(py::arg("tensor") = h.tensor, py::arg("node") = h.node,
                            py::arg("grad_of_leaf") = h.grad_of_leaf, py::arg("leaf") = h.leaf,
                            py::arg("site") = h.site ? lifetime::site(h.site).detail() : std::string(),
                            py::arg("step") = h.step, py::arg("shape") = h.shape));
  d["handles"] = handles;
  py::list nodes;
  for (const dr::NodeInfo& n : c.nodes) {
    py::list saved;
    for (const dr::SavedInfo& s : n.saved)
      saved.append(py::dict(py::arg("what") = s.what, py::arg("shape") = s.shape, py::arg("dtype") = s.dtype,
                            py::arg("bytes") = s.bytes, py::arg("storage") = s.storage,
                            py::arg("released") = s.released, py::arg("packed") = s.packed,
                            py::arg("parameter") = s.parameter));
    nodes.append(py::dict(py::arg("id") = n.id, py::arg("name") = n.name, py::arg("step") = n.step,
                          py::arg("line") = n.site ? lifetime::site(n.site).where() : std::string(),
                          py::arg("executed") = n.executed, py::arg("host_bytes") = n.host_bytes,
                          py::arg("next") = n.next, py::arg("saved") = saved));
  }
  d["node_list"] = nodes;
  return d;
}

dr::Rule rule_of(const std::string& id) {
  for (const dr::RuleInfo& r : dr::rules())
    if (id == r.id) return r.rule;
  throw ValueError("graft.doctor: unknown rule id '" + id + "'");
}

/// A Python line as a site (a DataLoader worker's dataset line, a line PyTorch's backend records).
lifetime::SiteId intern_python_site(const std::string& file, int line, const std::string& function,
                                    const std::string& scope = "") {
  lifetime::Site s;
  s.file = file;
  s.line = line;
  s.function = function;
  s.scope = scope;
  s.python = true;
  return lifetime::intern_site(s);
}

/// The Python object of a live TensorImpl, if it has one (never makes one).
py::object tensor_object(uintptr_t id) {
  auto& internals = py::detail::get_internals();
  auto range = internals.registered_instances.equal_range(reinterpret_cast<void*>(id));
  for (auto it = range.first; it != range.second; ++it) {
    PyObject* o = reinterpret_cast<PyObject*>(it->second);
    if (PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(tensor_type().ptr())))
      return py::reinterpret_borrow<py::object>(o);
  }
  return py::none();
}

/// The doctor's configuration, module scopes, optimizer steps and object lookups.
void bind_doctor_lookups(py::module_& m) {
  m.def("_doctor_configure", [](const std::string& package_dir) { g_package_dir = package_dir; });
  m.def("_doctor_push_scope", [](const std::string& name) {
    auto it = std::find(g_scope_names.begin(), g_scope_names.end(), name);
    if (it == g_scope_names.end()) it = g_scope_names.insert(g_scope_names.end(), name);
    tl_scopes.push_back(static_cast<uint32_t>(it - g_scope_names.begin()));
  });
  m.def("_doctor_pop_scope", []() {
    if (!tl_scopes.empty()) tl_scopes.pop_back();
  });
  m.def("_doctor_rules", []() {
    py::list out;
    for (const dr::RuleInfo& r : dr::rules())
      out.append(py::dict(py::arg("id") = r.id, py::arg("name") = r.name,
                          py::arg("severity") = dr::severity_name(r.severity), py::arg("summary") = r.summary,
                          py::arg("fix") = r.fix));
    return out;
  });
  m.def("_doctor_tensor_object", &tensor_object, py::arg("id"));
  m.def("_doctor_tensor_id", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()); });
  m.def("_doctor_grad_id", [](const Tensor& t) {
    const TensorImpl* g = autograd::grad_impl(*t.impl());
    return reinterpret_cast<uintptr_t>(g);
  });
  m.def("_doctor_site_of", [](const Tensor& t) {
    const dr::Origin o = dr::origin(*t.impl());
    return py::make_tuple(o.site ? lifetime::site(o.site).where() : std::string(), o.generation);
  });
  m.def(
      "_doctor_set_thread_site",
      [](const std::string& file, int line, const std::string& function) {
        if (file.empty()) {
          tl_thread_site = 0;
          return;
        }
        tl_thread_site = intern_python_site(file, line, function);
      },
      py::arg("file"), py::arg("line"), py::arg("function"));
  m.def(
      "_doctor_intern_site",
      [](const std::string& file, int line, const std::string& function, const std::string& scope) {
        return intern_python_site(file, line, function, scope);
      },
      py::arg("file"), py::arg("line"), py::arg("function"), py::arg("scope") = "");
  m.def("_doctor_generation", []() { return dr::current_generation(); });
  m.def("_doctor_capture_site", []() {
    const lifetime::SiteId s = lifetime::capture_site();
    return s ? lifetime::site(s).where() : std::string();
  });
}

/// The memory ledger, fragmentation, the external memory query and the pages.
void bind_doctor_memory(py::module_& m) {
  m.def(
      "_doctor_ledger",
      [](py::handle device) {
        const dr::Ledger l = dr::ledger(to_device(device));
        py::dict d;
        d["reserved"] = l.reserved;
        d["live_by_category"] = l.live_by_category;
        d["rounding"] = l.rounding;
        d["cached_releasable"] = l.cached_releasable;
        d["free_trapped"] = l.free_trapped;
        d["graph_host_bytes"] = l.graph_host_bytes;
        d["outside"] = l.outside ? py::object(py::int_(*l.outside)) : py::object(py::none());
        d["sentences"] = l.sentences();
        return d;
      },
      py::arg("device"));
  m.def(
      "_doctor_fragmentation",
      [](py::handle device) {
        const dr::Fragmentation f = dr::fragmentation(to_device(device));
        py::list pools;
        for (const dr::PoolFragmentation& p : f.pools)
          pools.append(py::dict(py::arg("pool") = p.pool, py::arg("segments") = p.segments,
                                py::arg("free_blocks") = p.free_blocks, py::arg("free_bytes") = p.free_bytes,
                                py::arg("largest_free") = p.largest_free, py::arg("fragmentation") = p.fragmentation));
        return py::dict(py::arg("pools") = pools, py::arg("largest_allocation") = f.largest_allocation,
                        py::arg("sentences") = f.sentences());
      },
      py::arg("device"));
  m.def(
      "_doctor_set_external_memory_query",
      [](py::object fn) {
        if (fn.is_none()) {
          dr::set_external_memory_query(nullptr);
          return;
        }
        SafePyObject f(std::move(fn));
        dr::set_external_memory_query([f](Device d) -> std::optional<int64_t> {
          py::gil_scoped_acquire gil;
          py::object r = f.get()(d.str());
          if (r.is_none()) return std::nullopt;
          return r.cast<int64_t>();
        });
      },
      py::arg("fn"));
  m.def("_doctor_render_html", &dr::render_html, py::arg("timeline_json"), py::arg("graph_svg"),
        py::arg("report_text"));
}

/// _DoctorSession: starting, stepping and stopping a session, and its findings.
void bind_doctor_session(py::module_& m) {
  py::class_<PySession>(m, "_DoctorSession")
      .def(py::init([](const std::string& tier, int warmup, int confirm, bool step_on_optimizer, int max_holders,
                       const std::string& oom_report_path, size_t max_events, bool deterministic, py::object holders,
                       py::object boundary, py::object framework) {
             dr::Options o;
             o.tier = tier_of(tier);
             o.warmup = warmup;
             o.confirm = confirm;
             o.step_on_optimizer = step_on_optimizer;
             o.max_holders = max_holders;
             o.oom_report_path = oom_report_path;
             o.max_events = max_events;
             o.deterministic = deterministic;
             auto s = std::make_unique<PySession>();
             s->annotator = std::make_unique<PyAnnotator>(std::move(holders), std::move(boundary));
             s->session = std::make_unique<dr::Session>(o);
             s->session->set_annotator(s->annotator.get());
             if (!framework.is_none()) {
               s->framework = std::make_unique<PyFramework>(std::move(framework));
               s->session->set_framework(s->framework.get());
             }
             return s;
           }),
           py::arg("tier"), py::arg("warmup"), py::arg("confirm"), py::arg("step_on_optimizer"), py::arg("max_holders"),
           py::arg("oom_report_path"), py::arg("max_events"), py::arg("deterministic"), py::arg("holders"),
           py::arg("boundary"), py::arg("framework") = py::none())
      // never wait for the doctor's step lock while holding the GIL: the thread ending a step
      // may need the GIL for the holder search (docs/notes/doctor.md, "Threads and locks")
      .def(
          "step", [](PySession& s) { s.session->step(); }, py::call_guard<py::gil_scoped_release>())
      .def("stop", [](PySession& s) { s.session->stop(); })
      .def_property_readonly("steps", [](PySession& s) { return s.session->steps(); })
      .def_property_readonly("watching", [](PySession& s) { return s.session->watching(); })
      .def(
          "note_optimizer_step",
          [](PySession& s, py::handle optimizer, bool finished, py::object params) {
            // (one call per hook: the optimizer hooks run at every training step)
            if (!params.is_none())  // LD008's evidence: the leaves it is about to have stepped
              for (py::handle p : params) autograd::note_leaf_stepped(p.cast<Tensor>());
            const int64_t before = s.session->steps();
            {
              py::gil_scoped_release unlocked;  // it may end a step: the step lock is never awaited with the GIL
              lifetime::note_optimizer_step(optimizer.ptr(), finished);
            }
            return s.session->steps() != before;
          },
          py::arg("optimizer"), py::arg("finished"), py::arg("params") = py::none(),
          "Notes an optimizer's step beginning (finished False) or ending; True when that ended a doctor step.")
      .def("findings",
           [](PySession& s) {
             py::list out;
             for (const dr::Finding& f : s.session->findings()) out.append(finding_dict(f));
             return out;
           })
      .def("live_graphs",
           [](PySession& s) {
             const dr::Census c = s.session->live_graphs();
             py::list out;
             for (const dr::GraphComponent& g : c.components) out.append(component_dict(g));
             return py::make_tuple(c.step, out);
           })
      .def(
          "diff",
          [](PySession& s, int64_t a, int64_t b) {
            const dr::Diff d = s.session->diff(a, b);
            py::list entries;
            for (const dr::DiffEntry& e : d.entries)
              entries.append(py::dict(py::arg("kind") = e.kind, py::arg("line") = e.line, py::arg("type") = e.type,
                                      py::arg("count") = e.count, py::arg("bytes") = e.bytes));
            return py::dict(py::arg("from") = d.from, py::arg("to") = d.to, py::arg("entries") = entries,
                            py::arg("sentences") = d.sentences());
          },
          py::arg("a"), py::arg("b"));
}

/// _DoctorSession's reports: peak, text, timeline, HTML and pictures.
void bind_doctor_session_views(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<PySession>>(m.attr("_DoctorSession"));
  cls.def("peak",
          [](PySession& s) {
            const dr::PeakReport p = s.session->peak();
            return py::dict(py::arg("step") = p.step, py::arg("peak_bytes") = p.peak_bytes,
                            py::arg("start_bytes") = p.start_bytes, py::arg("by_category") = p.by_category,
                            py::arg("by_line") = p.by_line, py::arg("by_scope") = p.by_scope,
                            py::arg("sentences") = p.sentences());
          })
      .def("report", [](PySession& s) { return s.session->report(); })
      .def("timeline_json", [](PySession& s) { return s.session->timeline_json(); })
      .def("html", [](PySession& s) { return s.session->html(); })
      .def(
          "graph_dot",
          [](PySession& s, int64_t component, const std::map<uintptr_t, std::string>& labels) {
            return s.session->graph_dot(component, labels);
          },
          py::arg("component") = -1, py::arg("labels") = std::map<uintptr_t, std::string>{})
      .def(
          "graph_svg",
          [](PySession& s, int64_t component, const std::map<uintptr_t, std::string>& labels) {
            return s.session->graph_svg(component, labels);
          },
          py::arg("component") = -1, py::arg("labels") = std::map<uintptr_t, std::string>{})
      .def(
          "allow_window", [](PySession& s, int n) { s.session->allow_window(n); }, py::arg("steps"))
      .def(
          "declare_accumulation", [](PySession& s, int n) { s.session->declare_accumulation(n); },
          py::arg("micro_steps"))
      .def(
          "allow", [](PySession& s, const std::string& p) { s.session->allow(p); }, py::arg("path_or_line"))
      .def("assert_no_leak", [](PySession& s) { s.session->assert_no_leak(); })
      .def("last_oom_report", [](PySession& s) { return s.session->last_oom_report(); })
      .def(
          "note_stopped", [](PySession& s, const std::string& error, bool oom) { s.session->note_stopped(error, oom); },
          py::arg("error"), py::arg("out_of_memory") = false)
      .def("verdict", [](PySession& s) { return s.session->verdict(); })
      .def_property_readonly("framework_name", [](PySession& s) { return s.session->framework_name(); })
      .def("last_step",
           [](PySession& s) {
             const dr::StepRecord r = s.session->last_step();
             int64_t allocated = 0;
             for (const auto& [category, bytes] : r.bytes_by_category) allocated += bytes;
             return py::dict(py::arg("step") = r.step, py::arg("graph_nodes") = r.graph_nodes,
                             py::arg("saved_bytes") = r.saved_bytes, py::arg("stale_nodes") = r.stale_nodes,
                             py::arg("allocated") = allocated, py::arg("findings") = r.findings);
           })
      .def(
          "add_evidence",
          [](PySession& s, const std::string& rule, const std::string& line, const std::string& message,
             py::list holders, int64_t bytes) {
            std::vector<dr::Holder> hs;
            for (py::handle item : holders) hs.push_back(holder_of(item));
            s.session->add_evidence(rule_of(rule), line, message, std::move(hs), bytes);
          },
          py::arg("rule"), py::arg("line"), py::arg("message"), py::arg("holders"), py::arg("bytes"));
}

}  // namespace

void SiteCallScope::enter() noexcept {
  active_ = true;
  outer_ = tl_call;
  tl_call = ++tl_calls_made;
}
void SiteCallScope::leave() noexcept { tl_call = outer_; }

void init_doctor(py::module_& m) {
  lifetime::set_python_site_provider(&python_site);

  bind_doctor_lookups(m);
  bind_doctor_memory(m);
  bind_doctor_session(m);
  bind_doctor_session_views(m);
}

}  // namespace graft::python
