// The doctor's tiers and its footprint (F10): how often an op asks for its creation site
// (a counting fake stands in for the Python provider): at tier Sites at most once per node,
// once per new storage, never for a tensor made with its own fresh storage; at tier Counters
// and with no session never. And the doctor keeps no strong reference: a clean loop ends with
// the same live allocations and the same parameter use counts with and without a session, and
// a leak the doctor reported frees everything once the user drops it.
#include <nlohmann/json.hpp>

#include "support/test_util.h"

using namespace graft;

namespace {

int g_calls = 0;
lifetime::SiteId g_site = 0;
lifetime::SiteId counting_provider() {
  ++g_calls;
  return g_site;  // a Python line: no C++ backtrace is taken
}

/// Installs the counting provider for the test's lifetime (C++ tests have none otherwise).
class CountSites {
 public:
  CountSites() {
    g_site = lifetime::intern_site({"fake.py", 1, "fake", "", true, ""});
    g_calls = 0;
    lifetime::set_python_site_provider(&counting_provider);
  }
  ~CountSites() { lifetime::set_python_site_provider(nullptr); }
  /// Calls made by `f`.
  template <class F>
  int during(F&& f) {
    const int before = g_calls;
    f();
    return g_calls - before;
  }
};

/// Events of one kind in the session's timeline so far ("alloc": storages made).
int64_t events(const doctor::Session& dr, const std::string& kind) {
  const nlohmann::json j = nlohmann::json::parse(dr.timeline_json());
  int64_t n = 0;
  for (const auto& e : j["events"]) n += e["kind"] == kind ? 1 : 0;
  return n;
}

struct Model {
  nn::Sequential net{nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 1)};
  optim::SGD opt{net->parameters(), optim::SGDOptions(0.01)};
  Tensor x = randn({4, 8});
  Tensor y = randn({4, 1});
  void step() {
    opt.zero_grad();
    Tensor loss = mse_loss(net->forward(x), y);
    loss.backward();
    opt.step();
  }
};

/// What a run leaves alive: allocator counts and the parameters' reference counts.
struct Footprint {
  int64_t allocations = 0, allocated = 0;
  std::vector<uint32_t> param_uses;
  bool operator==(const Footprint&) const = default;
};
Footprint footprint(Model& m) {
  Footprint f;
  f.allocations = memory_stats().at("allocation.all.current");
  f.allocated = memory_allocated();
  for (const Tensor& p : m.net->parameters()) f.param_uses.push_back(p.use_count());
  return f;
}
std::ostream& operator<<(std::ostream& o, const Footprint& f) {
  o << "{allocations " << f.allocations << ", allocated " << f.allocated << ", uses";
  for (uint32_t u : f.param_uses) o << " " << u;
  return o << "}";
}

}  // namespace

TEST(DoctorTiers, SitesAreAskedAtMostOncePerNodeAndNewStorage) {
  CountSites sites;
  Tensor a = randn({4, 4}), b = randn({4, 4});
  Tensor w = randn({4, 4}, requires_grad());
  doctor::Session dr;  // tier Sites
  ASSERT_EQ(lifetime::tier(), lifetime::Tier::Sites);
  Tensor keep;
  // a new storage, and its tensor takes the storage's site: exactly one question
  EXPECT_EQ(sites.during([&] { keep = a + b; }), 1);
  EXPECT_EQ(lifetime::site(doctor::origin(*keep.impl()).site).where(), "fake.py:1");
  EXPECT_EQ(doctor::origin(*keep.impl()).site, doctor::origin(*keep.impl()->storage()).site);
  // the bounds: one per node, one per new storage, one per tensor on an older storage (a view)
  EXPECT_LE(sites.during([&] { keep = a * w; }), 1 /* storage */ + 2 /* MulBackward0, w's AccumulateGrad */);
  EXPECT_EQ(lifetime::site(doctor::origin(*keep.grad_fn()).site).where(), "fake.py:1");
  EXPECT_LE(sites.during([&] { keep = a.t(); }), 1 /* a view of a */);
  EXPECT_LE(sites.during([&] { keep = w.t(); }), 1 /* view */ + 2 /* TBackward0, a new AccumulateGrad */);
  EXPECT_LE(sites.during([&] { keep = a.sum(); }), 1 /* storage */ + 1 /* the kernel's view of a */);
  // in place: no new object, no question
  EXPECT_EQ(sites.during([&] { a.add_(b); }), 0);
}

TEST(DoctorTiers, LinearForwardAndBackwardStayWithinTheBound) {
  CountSites sites;
  nn::Linear lin(8, 16);
  Tensor x = randn({4, 8});
  doctor::Options o;
  o.deterministic = true;
  doctor::Session dr(o);
  Tensor y;
  const int forward = sites.during([&] { y = lin->forward(x); });
  EXPECT_EQ(dr.live_graphs().nodes(), 5);  // T, Mm, Add and the two accumulators
  EXPECT_EQ(events(dr, "alloc"), 2);       // new storages: mm's result, add's result
  EXPECT_LE(forward, 5 + 2 + 1 /* W.t(), a tensor on W's storage */);
  // backward: one question for the pass (its line), then one per object it makes: no graph
  // node but the engine's root, new storages (gradients, temporaries), views
  Tensor loss = y.sum();
  const int64_t allocs = events(dr, "alloc");
  const int backward = sites.during([&] { loss.backward(); });
  EXPECT_EQ(dr.live_graphs().nodes(), 6);  // SumBackward0 joined; backward kept no node
  EXPECT_EQ(events(dr, "node_free"), 1);   // the engine's root node, made and freed
  const int64_t storages = events(dr, "alloc") - allocs;
  EXPECT_EQ(storages, 7);
  EXPECT_LE(backward, 1 + 1 + storages + 5 /* views: of the gradients, and the kernels' */);
}

TEST(DoctorTiers, CountersAndNoSessionNeverAskForSites) {
  CountSites sites;
  nn::Linear lin(8, 16);
  Tensor x = randn({4, 8});
  {
    doctor::Options o;
    o.tier = lifetime::Tier::Counters;
    doctor::Session dr(o);
    ASSERT_EQ(lifetime::tier(), lifetime::Tier::Counters);
    Tensor y;
    EXPECT_EQ(sites.during([&] {
      y = lin->forward(x);
      y.sum().backward();
    }),
              0);
    // the census still counts: at tier Counters every node enters the ledger
    const doctor::Census c = dr.live_graphs();
    EXPECT_EQ(c.nodes(), 5);
    for (const auto& g : c.components)
      for (const auto& n : g.nodes) EXPECT_EQ(n.site, 0u) << n.name;
  }
  ASSERT_EQ(lifetime::tier(), lifetime::Tier::Off);
  EXPECT_EQ(sites.during([&] {
    Tensor y = lin->forward(x);
    y.sum().backward();
  }),
            0);
  doctor::Session dr;
  EXPECT_EQ(dr.live_graphs().nodes(), 0);  // nothing made while no session counted
}

TEST(DoctorTiers, CleanLoopLeavesTheSameFootprintWithAndWithoutASession) {
  Model m;
  for (int i = 0; i < 3; ++i) m.step();  // gradients exist from here on
  const Footprint before = footprint(m);
  for (int i = 0; i < 10; ++i) m.step();
  const Footprint without = footprint(m);
  EXPECT_EQ(without, before);
  Footprint with, after_session;
  {
    doctor::Session dr;
    for (int i = 0; i < 10; ++i) m.step();
    with = footprint(m);
    EXPECT_EQ(dr.steps(), 10);
    EXPECT_TRUE(dr.findings().empty()) << doctor::format_findings(dr.findings());
    // reading the census, the report and the pictures takes no reference that stays
    (void)dr.live_graphs();
    (void)dr.report();
    (void)dr.graph_svg();
    (void)dr.html();
    EXPECT_EQ(footprint(m), with);
  }
  after_session = footprint(m);
  EXPECT_EQ(with, without);
  EXPECT_EQ(after_session, without);
}

TEST(DoctorTiers, AReportedLeakIsFreedWhenTheUserDropsIt) {
  Model m;
  m.step();
  const Footprint before = footprint(m);
  doctor::Session dr;
  Tensor total = zeros({});
  for (int i = 0; i < 7; ++i) {
    m.opt.zero_grad();
    Tensor loss = mse_loss(m.net->forward(m.x), m.y);
    loss.backward();
    total = total + loss;  // the leak
    m.opt.step();
  }
  ASSERT_EQ(dr.findings().size(), 1u);
  EXPECT_FALSE(dr.findings()[0].graph_dot.empty());  // the picture of the leaking graph is kept
  EXPECT_GT(dr.live_graphs().nodes(), 7 * 9);        // 9 nodes a step (mse_loss is one: MseLossBackward0)
  total = Tensor();  // the user lets go: the doctor's findings and pictures hold nothing
  EXPECT_EQ(dr.live_graphs().nodes(), 0);
  m.opt.zero_grad();
  m.step();
  EXPECT_EQ(footprint(m), before);
  EXPECT_EQ(dr.findings().size(), 1u);  // and its findings stay readable
}
