// The doctor's pictures and files (F7, F8): a golden DOT for a small graph (stable names n0,
// n1, ... in creation order, storages s0, ...), the totals the DOT and SVG carry equal the
// census, a leaking chain collapses to a drawing whose size does not depend on its length,
// the create_graph cycle is drawn once per parameter; the timeline JSON (schema, version,
// one exact record per step, no times when deterministic, a bounded event ring) and the HTML
// page (nothing fetched, bounded size).
#include <cctype>
#include <nlohmann/json.hpp>

#include "support/test_util.h"

using namespace graft;
using json = nlohmann::json;

namespace {

lifetime::SiteId line(int n) { return lifetime::intern_site({"train.py", n, "train", "", true, ""}); }

/// Node statements of a DOT text (lines "  id [...]").
int64_t dot_nodes(const std::string& dot) {
  int64_t n = 0;
  std::istringstream in(dot);
  for (std::string l; std::getline(in, l);) {
    if (l.size() < 3 || l[0] != ' ' || l[1] != ' ' || !std::isalnum(static_cast<unsigned char>(l[2]))) continue;
    const size_t sp = l.find(' ', 2);
    if (sp == std::string::npos || l.compare(sp, 2, " [") != 0) continue;
    const std::string id = l.substr(2, sp - 2);
    n += id != "graph" && id != "node" ? 1 : 0;  // the default attribute statements
  }
  return n;
}

/// `text` with every run of digits replaced by '#'.
std::string without_numbers(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      out += c;
    else if (out.empty() || out.back() != '#')
      out += '#';
  }
  return out;
}

int64_t count_of(const std::string& text, const std::string& what) {
  int64_t n = 0;
  for (size_t p = 0; (p = text.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

/// The totals a rendering carries: the DOT comment and the SVG's data attributes.
std::string dot_totals(const doctor::Census& c) {
  return "  // nodes=" + std::to_string(c.nodes()) + " saved_bytes=" + std::to_string(c.saved_bytes()) +
         " step=" + std::to_string(c.step) + "\n";
}
std::string svg_totals(const doctor::Census& c) {
  return "data-nodes=\"" + std::to_string(c.nodes()) + "\" data-saved-bytes=\"" + std::to_string(c.saved_bytes()) +
         "\"";
}

/// A running total over `steps` doctor steps: each step's (w * x).sum() hangs off it.
struct Chain {
  Tensor w = randn({4}, requires_grad());
  Tensor x = randn({4});
  Tensor total;
  void run(doctor::Session& dr, int steps) {
    lifetime::SiteScope at(line(30));
    total = zeros({});
    for (int i = 0; i < steps; ++i) {
      total = total + (w * x).sum();
      dr.step();
    }
  }
};

/// The timeline of a fresh chain run over `steps` steps, without "reserved" (it counts the
/// cache that earlier tests left in the allocator).
json chain_timeline(const doctor::Options& o, int steps) {
  Chain chain;
  doctor::Session dr(o);
  chain.run(dr, steps);
  json j = json::parse(dr.timeline_json());
  for (auto& s : j["steps"]) s.erase("reserved");
  return j;
}

/// Installs a fixed "outside our allocator" amount (the default reads /proc, which moves).
struct FixedOutside {
  FixedOutside() {
    doctor::set_external_memory_query([](Device) { return std::optional<int64_t>(0); });
  }
  ~FixedOutside() { doctor::set_external_memory_query({}); }
};

}  // namespace

// ---------------------------------------------------------------- DOT and SVG (F8)

TEST(DoctorRender, SmallGraphDotIsGolden) {
  doctor::Session dr;
  lifetime::SiteScope at(line(7));
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0});
  Tensor w1 = tensor({0.5, 0.5, 0.5, 0.5}, requires_grad());
  Tensor w2 = tensor({1.0, 1.0, 1.0, 1.0}, requires_grad());
  Tensor y = (w1 * a + w2).sum();
  const std::string dot = dr.graph_dot();
  EXPECT_EQ(dot,
            "digraph graft_doctor {\n"
            "  // nodes=5 saved_bytes=16 step=1\n"
            "  graph [rankdir=TB, fontname=\"Helvetica\"];\n"
            "  node [fontname=\"Helvetica\", fontsize=10, style=filled];\n"
            "  n0 [shape=box, fillcolor=\"#cfe2f3\", label=\"MulBackward0\\ntrain.py:7\\nstep 1\"];\n"
            "  s0 [shape=note, fillcolor=\"#f4cccc\", label=\"[4] float32\\n16 B\"];\n"
            "  n1 [shape=box, fillcolor=\"#cfe2f3\", label=\"AccumulateGrad\\ntrain.py:7\\nstep 1\"];\n"
            "  n2 [shape=box, fillcolor=\"#cfe2f3\", label=\"AddBackward0\\ntrain.py:7\\nstep 1\"];\n"
            "  n3 [shape=box, fillcolor=\"#cfe2f3\", label=\"AccumulateGrad\\ntrain.py:7\\nstep 1\"];\n"
            "  n4 [shape=box, fillcolor=\"#cfe2f3\", label=\"SumBackward0\\ntrain.py:7\\nstep 1\"];\n"
            "  h0_0 [shape=ellipse, fillcolor=\"#d9ead3\", label=\"tensor\\ntrain.py:7\"];\n"
            "  n0 -> n1;\n"
            "  n0 -> s0 [style=dashed, label=\"other\"];\n"
            "  n2 -> n0;\n"
            "  n2 -> n3;\n"
            "  n4 -> n2;\n"
            "  h0_0 -> n4 [label=\"grad_fn\"];\n"
            "}\n");
  // the same graph again, later: the same names (they do not depend on addresses or counters)
  Tensor y2 = (w1 * a + w2).sum();
  y = Tensor();
  std::string again = dr.graph_dot();
  EXPECT_EQ(again, dot);
  // holders named by the caller (the Python layer passes paths)
  const std::string named = dr.graph_dot(-1, {{reinterpret_cast<uintptr_t>(y2.impl()), "state['y']"}});
  EXPECT_NE(named.find("  h0_0 [shape=ellipse, fillcolor=\"#d9ead3\", label=\"state['y']\\ntrain.py:7\"];\n"),
            std::string::npos)
      << named;
}

TEST(DoctorRender, TotalsInTheDotAndTheSvgEqualTheCensus) {
  nn::Sequential net{nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 4)};
  doctor::Session dr;
  Tensor x = randn({32, 8});
  Tensor y1 = net->forward(x);
  dr.step();
  Tensor y2 = net->forward(x).sum();
  const doctor::Census c = dr.live_graphs();
  ASSERT_EQ(c.components.size(), 2u);
  // step 1: 7 nodes; step 2: 7, SumBackward0 and the 4 shared accumulators
  EXPECT_EQ(c.nodes(), 19);
  EXPECT_EQ(c.saved_bytes(), 2 * (32 * 8 + 32 * 16) * 4);  // x and the ReLU output, per graph
  const std::string dot = dr.graph_dot(), svg = dr.graph_svg();
  EXPECT_NE(dot.find(dot_totals(c)), std::string::npos) << dot;
  EXPECT_NE(svg.find(svg_totals(c)), std::string::npos) << svg;
  // the nodes, the two handles, and x, two ReLU outputs and W2 (saved as W2.t()), each drawn once
  EXPECT_EQ(dot_nodes(dot), c.nodes() + 2 + 4);
  EXPECT_EQ(count_of(svg, "<g class=\"node\""), c.nodes());
  // one component at a time: its own totals
  for (const doctor::GraphComponent& g : c.components) {
    doctor::Census one;
    one.step = c.step;
    one.components = {g};
    EXPECT_NE(dr.graph_dot(g.id).find(dot_totals(one)), std::string::npos);
    EXPECT_NE(dr.graph_svg(g.id).find(svg_totals(one)), std::string::npos);
    EXPECT_EQ(count_of(dr.graph_svg(g.id), "<g class=\"node\""), static_cast<int64_t>(g.nodes.size()));
  }
  // the stale graph (step 1) is drawn warm, this step's cool
  EXPECT_NE(dot.find("fillcolor=\"#fff2cc\", label=\"MmBackward0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("fillcolor=\"#cfe2f3\", label=\"SumBackward0"), std::string::npos) << dot;
}

TEST(DoctorRender, LeakingChainCollapsesToAFixedSize) {
  std::map<int, std::string> dots;
  for (int steps : {100, 1000}) {
    Chain chain;
    doctor::Options o;
    o.tier = lifetime::Tier::Sites;
    doctor::Session dr(o);
    chain.run(dr, steps);
    const doctor::Census c = dr.live_graphs();
    ASSERT_EQ(c.components.size(), 1u);
    EXPECT_EQ(c.nodes(), 3 * steps + 1);  // Add, Sum, Mul per step, and w's accumulator
    const std::string dot = dr.graph_dot(), svg = dr.graph_svg();
    EXPECT_NE(dot.find(dot_totals(c)), std::string::npos);
    EXPECT_NE(svg.find(svg_totals(c)), std::string::npos);
    // steps 1 and N-1 drawn, 2..N-2 folded, N (which owns the accumulator) drawn; x once;
    // the total as the entry point
    EXPECT_EQ(dot_nodes(dot), 3 + 1 + 3 + 4 + 1 + 1) << dot;
    std::ostringstream folded_label;
    folded_label << "x" << steps - 3 << " steps (2.." << steps - 2 << "), 3 nodes each";
    const std::string folded = folded_label.str();
    EXPECT_EQ(count_of(dot, folded), 1) << dot;
    EXPECT_EQ(count_of(svg, "<g class=\"collapsed\""), 1);
    EXPECT_EQ(count_of(svg, "<g class=\"node\""), 3 + 3 + 4);
    dots[steps] = without_numbers(dot);
  }
  EXPECT_EQ(dots[100], dots[1000]);  // the same drawing, numbers aside
}

TEST(DoctorRender, CreateGraphCycleIsDrawnOncePerParameter) {
  nn::Sequential net{nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 1)};
  graft::testing::WarningCapture quiet;  // backward(create_graph=True) warns, as PyTorch
  doctor::Session dr;
  mse_loss(net->forward(randn({4, 8})), randn({4, 1})).backward(Tensor(), std::nullopt, /*create_graph=*/true);
  const std::string dot = dr.graph_dot();
  const auto params = net->parameters();
  // each parameter's .grad holds a graph that leads back to its own accumulator
  EXPECT_EQ(count_of(dot, "label=\".grad\""), static_cast<int64_t>(params.size())) << dot;  // made before
  EXPECT_EQ(count_of(dot, "label=\"variable.grad (cycle)\""), static_cast<int64_t>(params.size())) << dot;
  EXPECT_EQ(count_of(dot, "label=\"grad_fn (cycle)\""), static_cast<int64_t>(params.size())) << dot;
  for (auto& p : net->parameters()) p.mutable_grad() = Tensor();  // break the cycle
}

// ---------------------------------------------------------------- the timeline (F7)

TEST(DoctorTimeline, DeterministicRecordsHaveExactCountsAndNoTimes) {
  doctor::Options o;
  o.deterministic = true;
  const json j = chain_timeline(o, 6);
  EXPECT_EQ(j["schema"], "graft.doctor.timeline");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["deterministic"], true);
  EXPECT_EQ(j["session"], json({{"tier", "sites"}, {"warmup", 2}, {"confirm", 3}, {"steps", 6}}));
  EXPECT_EQ(j["categories"],
            json({"other", "parameter", "gradient", "saved_for_backward", "optimizer_state", "data_batch"}));
  ASSERT_EQ(j["steps"].size(), 6u);
  for (int k = 1; k <= 6; ++k) {
    const json& s = j["steps"][k - 1];
    SCOPED_TRACE("step " + std::to_string(k));
    EXPECT_FALSE(s.contains("t"));
    EXPECT_EQ(s["step"], k);
    // k steps of (Mul, Sum, Add), the accumulator in the current generation; Mul saves x
    EXPECT_EQ(s["graph_nodes"], 3 * k + 1);
    EXPECT_EQ(s["stale_nodes"], 3 * (k - 1));
    EXPECT_EQ(s["saved_slots"], k);
    EXPECT_EQ(s["stale_saved_slots"], k - 1);
    EXPECT_EQ(s["saved_bytes"], 16 * k);
    EXPECT_EQ(s["stale_generations"], k - 1);
    EXPECT_GT(s["graph_host_bytes"].get<int64_t>(), 0);
    EXPECT_EQ(s["findings"], k == 5 ? json({"LD001"}) : json::array());
  }
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["id"], "LD001");
  EXPECT_EQ(j["findings"][0]["line"], "train.py:30");
  // events: consecutive sequence numbers, no times, each step marked once
  const json& ev = j["events"];
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(j["events_dropped"], 0);
  int steps = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(ev[i]["seq"], i + 1);
    EXPECT_FALSE(ev[i].contains("t"));
    if (ev[i]["kind"] == "step") {
      EXPECT_EQ(ev[i]["step"], ++steps);
    }
  }
  EXPECT_EQ(steps, 6);
  // the same run gives the same records and events (host block sizes and the cache aside)
  json again = chain_timeline(o, 6);
  json first = j;
  for (json* doc : {&first, &again})
    for (auto& s : (*doc)["steps"]) s.erase("graph_host_bytes");
  EXPECT_EQ(first["steps"].dump(), again["steps"].dump());
  EXPECT_EQ(first["events"].dump(), again["events"].dump());
}

TEST(DoctorTimeline, TimesArePresentUnlessDeterministic) {
  Chain chain;
  doctor::Session dr;
  chain.run(dr, 2);
  const json j = json::parse(dr.timeline_json());
  EXPECT_EQ(j["deterministic"], false);
  for (const json& s : j["steps"]) EXPECT_TRUE(s.contains("t"));
  for (const json& e : j["events"]) EXPECT_TRUE(e.contains("t"));
}

TEST(DoctorTimeline, EventRingKeepsTheNewestMaxEvents) {
  doctor::Options o;
  o.deterministic = true;
  json full;
  {
    Chain chain;
    doctor::Session dr(o);
    chain.run(dr, 8);
    full = json::parse(dr.timeline_json());
  }
  const size_t total = full["events"].size();
  ASSERT_GT(total, 20u);
  ASSERT_EQ(full["events_dropped"], 0);
  o.max_events = 10;
  Chain chain;
  doctor::Session dr(o);
  chain.run(dr, 8);
  const json j = json::parse(dr.timeline_json());
  ASSERT_EQ(j["events"].size(), 10u);
  EXPECT_EQ(j["events_dropped"], total - 10);
  // oldest first, the last ten of the unbounded run
  for (size_t i = 0; i < 10; ++i) {
    const json& e = j["events"][i];
    EXPECT_EQ(e["seq"], total - 10 + i + 1);
    EXPECT_EQ(e.dump(), full["events"][total - 10 + i].dump());
  }
  EXPECT_EQ(j["steps"].size(), 8u);  // step records are not part of the ring
  dr.stop();
  // no room at all: every event is dropped, and counted
  o.max_events = 0;
  Chain none;
  doctor::Session empty(o);
  none.run(empty, 8);
  const json k = json::parse(empty.timeline_json());
  EXPECT_TRUE(k["events"].empty());
  EXPECT_EQ(k["events_dropped"], total);
}

TEST(DoctorTimeline, LoaderRoundTripsAndRejectsOtherDocuments) {
  FixedOutside outside;
  Chain chain;
  doctor::Options o;
  o.deterministic = true;
  doctor::Session dr(o);
  chain.run(dr, 6);
  const std::string page = doctor::render_html(dr.timeline_json(), dr.graph_svg(), dr.report());
  EXPECT_EQ(page, dr.html());
  EXPECT_THROW_HAS(doctor::render_html("{\"schema\": \"something.else\"}", "", ""), ValueError,
                   "render_html: not a graft.doctor timeline (schema something.else)");
}

// ---------------------------------------------------------------- the HTML page (F7)

TEST(DoctorHtml, PageFetchesNothingAndStaysSmallFor100kEvents) {
  doctor::Session dr;  // not deterministic: times in the timeline too
  Tensor w = randn({4}, requires_grad());
  Tensor total = zeros({});
  {
    lifetime::SiteScope at(line(50));
    for (int step = 1; step <= 2000; ++step) {
      for (int i = 0; i < 25; ++i) Tensor t = empty({4});  // an alloc and a free event each
      if (step <= 6) total = total + (w * 2).sum();        // a leak, for a finding with a picture
      dr.step();
    }
  }
  const json j = json::parse(dr.timeline_json());
  EXPECT_EQ(j["events"].size(), 100000u);
  EXPECT_GE(j["events_dropped"].get<int64_t>(), 2000);
  ASSERT_FALSE(dr.findings().empty());
  const std::string page = dr.html();
  EXPECT_EQ(page.find("http"), std::string::npos);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_NE(page.find("<svg class=\"graft-graph\""), std::string::npos);  // the live graph, inline
  EXPECT_NE(page.find("graft.doctor.timeline"), std::string::npos);
  EXPECT_LT(page.size(), 512u * 1024) << "the chart keeps at most 1000 points; events are not embedded";
  const std::string data_start = "<script id=\"timeline\" type=\"application/json\">";
  const size_t a = page.find(data_start) + data_start.size(), b = page.find("</script>", a);
  const json embedded = json::parse(page.substr(a, b - a));
  EXPECT_LE(embedded["steps"].size(), 1000u);
  EXPECT_FALSE(embedded.contains("events"));
}
