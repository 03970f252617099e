// The doctor's outputs: the text report, the timeline JSON (schema "graft.doctor.timeline",
// version 1), the self-contained HTML page, and the graph pictures. See docs/doctor.md.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>

#include "graft/core/enum_names.h"
#include "graft/core/error.h"
#include "graph_render.h"
#include "internal.h"
#include "state.h"

namespace graft::doctor {

using detail::format_bytes;
using json = nlohmann::json;

namespace {

const char* tier_name(lifetime::Tier t) {
  static constexpr const char* kNames[] = {"off", "counters", "sites"};
  return graft::detail::enum_name(kNames, t, "unknown");
}

json finding_json(const Finding& f) {
  json holders = json::array();
  for (const Holder& h : f.holders)
    holders.push_back({{"path", h.path},
                       {"created_at", h.created_at},
                       {"stored_at", h.stored_at},
                       {"hook_registered_at", h.hook_registered_at},
                       {"created_step", h.created_step},
                       {"through_hook", h.through_hook}});
  return {{"id", f.id},
          {"name", rule_info(f.rule).name},
          {"severity", severity_name(f.severity)},
          {"step", f.step},
          {"first_step", f.first_step},
          {"message", f.message},
          {"summary", rule_info(f.rule).summary},
          {"fix", f.fix},
          {"line", f.line},
          {"made_at", f.made_at},
          {"nodes", f.nodes},
          {"saved_bytes", f.saved_bytes},
          {"host_bytes", f.host_bytes},
          {"nodes_per_step", f.nodes_per_step},
          {"tensor_bytes", f.tensor_bytes},
          {"bytes_per_step", f.bytes_per_step},
          {"graph_svg", f.graph_svg},
          {"holders", holders}};
}

std::string component_summary(const GraphComponent& c) {
  std::ostringstream o;
  o << c.nodes.size() << " nodes (";
  std::vector<std::pair<int64_t, std::string>> types;
  for (auto& [t, n] : c.nodes_by_type) types.push_back({-n, t});
  std::sort(types.begin(), types.end());
  for (size_t i = 0; i < types.size() && i < 4; ++i) o << (i ? ", " : "") << types[i].second << " x" << -types[i].first;
  if (types.size() > 4) o << ", ...";
  o << "), steps " << c.oldest_step << ".." << c.newest_step << ", " << format_bytes(c.saved_bytes) << " saved";
  if (c.parameter_bytes) o << " (+" << format_bytes(c.parameter_bytes) << " of parameters referenced)";
  o << ", " << format_bytes(c.host_bytes) << " of nodes";
  if (!c.executed) o << ", never backpropagated";
  return o.str();
}

}  // namespace

std::string Session::report() const {
  const std::vector<std::string> verdict_lines = verdict();
  std::vector<Finding> fs;
  Options opt;
  int64_t steps = 0;
  PeakReport peak;
  std::string oom;
  Framework* framework = nullptr;
  {
    std::lock_guard<detail::LightMutex> g(detail::recorder_mutex());
    fs = s_->findings;
    opt = s_->options;
    steps = s_->steps;
    peak = s_->peak_report();
    if (s_->stopped_oom) oom = s_->last_oom_report;
    framework = &s_->fw();
  }
  std::ostringstream o;
  const std::string on = framework->name() == "graft" ? std::string() : " on " + framework->name();
  o << "graft.doctor: " << steps << " step" << (steps == 1 ? "" : "s") << " watched" << on << " (tier "
    << tier_name(opt.tier) << ", warm-up " << opt.warmup << ", confirmation " << opt.confirm << ")\n\n";
  for (const std::string& l : verdict_lines) o << l << "\n";
  if (!fs.empty()) {
    if (!verdict_lines.empty()) o << "\n";
    o << "Findings (" << fs.size() << "):\n";
    for (const Finding& f : fs) {
      o << "  ";
      detail::write_finding_title(o, f);
      o << ", reported at step " << f.step << "\n";
      o << "    " << f.message << "\n";
      detail::write_holders(o, f.holders);
      o << "    why: " << rule_info(f.rule).summary << "\n";
      o << "    fix: " << f.fix << "\n";
    }
  }
  if (!oom.empty()) o << "\nOut of memory:\n" << oom << (oom.back() == '\n' ? "" : "\n");
  const Census census = live_graphs();
  o << "\nLive graphs now: " << census.components.size() << " (" << census.nodes() << " nodes, "
    << format_bytes(census.saved_bytes()) << " saved)\n";
  for (size_t i = 0; i < census.components.size() && i < 6; ++i)
    o << "  #" << census.components[i].id << ": " << component_summary(census.components[i]) << "\n";
  if (census.components.size() > 6) o << "  ... and " << census.components.size() - 6 << " more\n";
  // a framework that records no storage events has no peak within a step
  const auto peak_lines = peak.by_category.empty() ? std::vector<std::string>{} : peak.sentences();
  if (!peak_lines.empty()) {
    o << "\n";
    for (const auto& l : peak_lines) o << l << "\n";
  }
  o << "\n";
  for (const auto& l : framework->memory_sentences()) o << l << "\n";
  return o.str();
}

std::string Session::timeline_json() const {
  const std::vector<std::string> verdict_lines = verdict();
  std::lock_guard<detail::LightMutex> g(detail::recorder_mutex());
  const State& s = *s_;
  json j;
  j["schema"] = "graft.doctor.timeline";
  j["version"] = 1;
  j["verdict"] = verdict_lines;
  if (!s.stopped.empty())
    j["stopped"] = {{"error", s.stopped},
                    {"out_of_memory", s.stopped_oom},
                    {"oom_report", s.stopped_oom ? s.last_oom_report : std::string()}};
  j["deterministic"] = s.options.deterministic;
  j["session"] = {{"tier", tier_name(s.options.tier)},
                  {"warmup", s.options.warmup},
                  {"confirm", s.options.confirm},
                  {"steps", s.steps}};
  json cats = json::array();
  for (int c = 0; c < kNumMemoryCategories; ++c) cats.push_back(memory_category_name(static_cast<MemoryCategory>(c)));
  j["categories"] = cats;
  json steps = json::array();
  for (const StepRecord& r : s.records) {
    json st = {{"step", r.step},
               {"bytes", r.bytes_by_category},
               {"reserved", r.reserved},
               {"graph_nodes", r.graph_nodes},
               {"stale_nodes", r.stale_nodes},
               {"saved_slots", r.saved_slots},
               {"stale_saved_slots", r.stale_saved_slots},
               {"saved_bytes", r.saved_bytes},
               {"graph_host_bytes", r.graph_host_bytes},
               {"stale_generations", r.stale_generations},
               {"peak_bytes", r.peak_bytes},
               {"findings", r.findings}};
    if (!s.options.deterministic) st["t"] = r.seconds;
    steps.push_back(std::move(st));
  }
  j["steps"] = std::move(steps);
  json fs = json::array();
  for (const Finding& f : s.findings) fs.push_back(finding_json(f));
  j["findings"] = std::move(fs);
  json ev = json::array();
  const size_t n = s.events.size();
  const uint64_t first_seq = s.events.dropped() + 1;  // every event logged is kept or dropped, in order
  for (size_t i = 0; i < n; ++i) {
    const TimelineEvent& e = s.events[i];
    json x = {{"seq", first_seq + i}, {"kind", event_kind_name(e.kind)}, {"step", e.step}};
    if (!s.options.deterministic) x["t"] = e.t;
    if (e.bytes) x["bytes"] = e.bytes;
    if (e.kind == EventKind::Alloc || e.kind == EventKind::Free)
      x["category"] = memory_category_name(static_cast<MemoryCategory>(e.category));
    if (e.name) x["name"] = *e.name;
    const std::string line = e.line ? *e.line : detail::where(e.site);
    if (!line.empty()) x["line"] = line;
    ev.push_back(std::move(x));
  }
  j["events"] = std::move(ev);
  j["events_dropped"] = s.events.dropped();
  return j.dump(1);
}

std::string Session::graph_dot(int64_t component, const std::map<uintptr_t, std::string>& labels) const {
  return detail::to_dot(detail::build_render_graph(live_graphs(), component, labels));
}

std::string Session::graph_svg(int64_t component, const std::map<uintptr_t, std::string>& labels) const {
  return detail::to_svg(detail::build_render_graph(live_graphs(), component, labels));
}

std::string Session::html() const { return render_html(timeline_json(), graph_svg(), report()); }

void Session::write_html(const std::string& path) const {
  const std::string page = html();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << page;
  GRAFT_CHECK(f.good(), RuntimeError, "graft.doctor: could not write ", path);
}

namespace {

constexpr size_t kMaxChartPoints = 1000;

/// The steps for the chart: at most kMaxChartPoints, each bucket keeping its largest values.
json chart_steps(const json& steps) {
  if (steps.size() <= kMaxChartPoints) return steps;
  json out = json::array();
  const size_t per = (steps.size() + kMaxChartPoints - 1) / kMaxChartPoints;
  for (size_t i = 0; i < steps.size(); i += per) {
    json b = steps[i];
    json findings = json::array();
    for (size_t k = i; k < std::min(steps.size(), i + per); ++k) {
      const json& s = steps[k];
      for (auto& [cat, v] : s["bytes"].items())
        b["bytes"][cat] = std::max(b["bytes"][cat].get<int64_t>(), v.get<int64_t>());
      for (const char* key : {"graph_host_bytes", "stale_nodes", "stale_generations", "reserved", "peak_bytes"})
        if (s.contains(key)) b[key] = std::max(b[key].get<int64_t>(), s[key].get<int64_t>());
      for (auto& f : s["findings"]) findings.push_back(f);
      b["step"] = s["step"];
    }
    b["findings"] = findings;
    out.push_back(b);
  }
  return out;
}

/// JSON inside a <script> element: "</" must not appear.
std::string script_safe(std::string s) {
  for (size_t p = 0; (p = s.find("</", p)) != std::string::npos; p += 3) s.replace(p, 2, "<\\/");
  return s;
}

const char* kStyle = R"(
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
.sub { color: #666; font-size: 13px; }
.finding { border-left: 4px solid #cc0000; padding: 6px 10px; margin: 8px 0; background: #fff5f5; }
.finding.warning { border-color: #e69138; background: #fff9f0; } .finding.info { border-color: #3d85c6; background: #f3f8fd; } .finding.growth { border-color: #8e7cc3; background: #f7f5fc; }
.finding .id { font-weight: bold; } .finding .fix { color: #1b5e20; } .finding .holder { font-family: monospace; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; }
#tip { position: absolute; background: #fff; border: 1px solid #999; padding: 4px 8px; font-size: 12px; pointer-events: none; display: none; }
.stopped { border-left: 4px solid #cc0000; padding: 8px 10px; margin: 12px 0; background: #ffecec; }
pre { background: #f6f6f6; padding: 10px; font-size: 12px; overflow-x: auto; }
.graph { overflow: auto; border: 1px solid #ddd; max-height: 640px; }
)";

const char* kScript = R"(
(function () {
  var data = JSON.parse(document.getElementById('timeline').textContent);
  var steps = data.steps, NS = document.getElementById('chart').namespaceURI;
  var series = [
    ['parameter', '#6fa8dc'], ['optimizer_state', '#8e7cc3'], ['gradient', '#93c47d'],
    ['data_batch', '#ffd966'], ['other', '#b7b7b7'], ['saved_for_backward', '#e06666'],
    ['graph_host_bytes', '#f6b26b']];
  var names = {graph_host_bytes: 'graph nodes (host)'};
  function val(s, k) { return k === 'graph_host_bytes' ? (s.graph_host_bytes || 0) : ((s.bytes || {})[k] || 0); }
  function esc(s) { return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'); }
  function fmt(b) { var u = ['B', 'KiB', 'MiB', 'GiB'], i = 0; while (b >= 1024 && i < 3) { b /= 1024; i++; } return (i ? b.toFixed(1) : b) + ' ' + u[i]; }
  function el(tag, attrs, parent) { var e = document.createElementNS(NS, tag); for (var k in attrs) e.setAttribute(k, attrs[k]); if (parent) parent.appendChild(e); return e; }
  var svg = document.getElementById('chart'), W = 900, H = 300, L = 70, B = 30, T = 10;
  var n = steps.length, max = 1;
  steps.forEach(function (s) { var t = 0; series.forEach(function (c) { t += val(s, c[0]); }); max = Math.max(max, t); });
  function X(i) { return L + (n <= 1 ? 0 : i * (W - L - 10) / (n - 1)); }
  function Y(v) { return T + (H - T - B) * (1 - v / max); }
  el('line', {x1: L, y1: H - B, x2: W - 10, y2: H - B, stroke: '#999'}, svg);
  el('line', {x1: L, y1: T, x2: L, y2: H - B, stroke: '#999'}, svg);
  for (var g = 0; g <= 4; g++) {
    var v = max * g / 4, t = el('text', {x: L - 6, y: Y(v) + 4, 'text-anchor': 'end', 'font-size': 10}, svg);
    t.textContent = fmt(Math.round(v));
  }
  var base = steps.map(function () { return 0; }), legend = document.getElementById('legend');
  series.forEach(function (c) {
    var top = steps.map(function (s, i) { return base[i] + val(s, c[0]); });
    if (top.every(function (v, i) { return v === base[i]; })) return;
    var d = '';
    top.forEach(function (v, i) { d += (i ? ' L ' : 'M ') + X(i) + ' ' + Y(v); });
    for (var i = n - 1; i >= 0; i--) d += ' L ' + X(i) + ' ' + Y(base[i]);
    el('path', {d: d + ' Z', fill: c[1], 'fill-opacity': 0.85, stroke: c[1], 'class': 'series', 'data-category': c[0]}, svg);
    base = top;
    var sp = document.createElement('span'); sp.innerHTML = '<i style="background:' + c[1] + '"></i>' + (names[c[0]] || c[0]);
    legend.appendChild(sp);
  });
  steps.forEach(function (s, i) {
    (s.findings || []).forEach(function (id, k) {
      el('line', {x1: X(i), y1: T, x2: X(i), y2: H - B, stroke: '#cc0000', 'stroke-dasharray': '3 2', 'class': 'finding-marker', 'data-finding': id}, svg);
      var t = el('text', {x: X(i) + 3, y: T + 10 + 11 * k, 'font-size': 10, fill: '#cc0000'}, svg); t.textContent = id;
    });
  });
  for (var i = 0; i < n; i += Math.max(1, Math.ceil(n / 10))) {
    var t = el('text', {x: X(i), y: H - 12, 'text-anchor': 'middle', 'font-size': 10}, svg); t.textContent = steps[i].step;
  }
  var stale = document.getElementById('stale'), sm = 1;
  steps.forEach(function (s) { sm = Math.max(sm, s.stale_generations || 0); });
  var d2 = '';
  steps.forEach(function (s, i) { d2 += (i ? ' L ' : 'M ') + X(i) + ' ' + (10 + 70 * (1 - (s.stale_generations || 0) / sm)); });
  if (n) el('path', {d: d2, fill: 'none', stroke: '#cc0000', 'stroke-width': 2, 'class': 'series', 'data-category': 'stale_generations'}, stale);
  var tl = el('text', {x: L, y: 94, 'font-size': 10}, stale); tl.textContent = 'steps with graph objects still alive (max ' + sm + ')';
  var tip = document.getElementById('tip');
  svg.addEventListener('mousemove', function (e) {
    var r = svg.getBoundingClientRect(), i = Math.round((e.clientX - r.left - L) / ((W - L - 10) / Math.max(1, n - 1)));
    if (i < 0 || i >= n) { tip.style.display = 'none'; return; }
    var s = steps[i], h = '<b>step ' + s.step + '</b>';
    series.forEach(function (c) { var v = val(s, c[0]); if (v) h += '<br>' + (names[c[0]] || c[0]) + ': ' + fmt(v); });
    h += '<br>stale graph nodes: ' + (s.stale_nodes || 0);
    tip.innerHTML = h; tip.style.display = 'block'; tip.style.left = (e.pageX + 12) + 'px'; tip.style.top = (e.pageY + 12) + 'px';
  });
  svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  var list = document.getElementById('findings');
  (data.verdict || []).forEach(function (v) { var p = document.createElement('p'); p.className = 'verdict'; p.textContent = v; list.appendChild(p); });
  data.findings.forEach(function (f) {
    var div = document.createElement('div'); div.className = 'finding ' + f.severity;
    var h = '<span class="id">' + esc(f.id + ' ' + f.name) + '</span> (' + esc(f.severity) + ')' + (f.line ? ' at <code>' + esc(f.line) + '</code>' : '') + (f.made_at ? ' (made at <code>' + esc(f.made_at) + '</code>)' : '') + ', step ' + f.step + '<br>' + esc(f.message);
    f.holders.forEach(function (x) { var st = x.stored_at && x.stored_at !== (x.created_at || '').split(' ')[0] ? 'stored at ' + esc(x.stored_at) : ''; var made = x.created_at ? 'made at ' + esc(x.created_at) + ', step ' + x.created_step : ''; h += '<br>held by <span class="holder">' + esc(x.path) + '</span>' + (st || made ? ' (' + [st, made].filter(Boolean).join('; ') + ')' : ''); });
    h += '<br><span class="fix">fix: ' + esc(f.fix) + '</span>';
    if (f.graph_svg) h += '<details><summary>the graph when it was reported</summary><div class="graph">' + f.graph_svg + '</div></details>';
    div.innerHTML = h; list.appendChild(div);
  });
  document.getElementById('chart-ready').setAttribute('data-series', document.querySelectorAll('#chart path.series').length);
})();
)";

std::string html_escape_text(const std::string& s) { return detail::xml_escape(s); }

}  // namespace

std::string render_html(const std::string& timeline_json, const std::string& graph_svg,
                        const std::string& report_text) {
  json j = json::parse(timeline_json);
  GRAFT_CHECK(j.value("schema", "") == "graft.doctor.timeline", ValueError,
              "render_html: not a graft.doctor timeline (schema ", j.value("schema", std::string("missing")), ")");
  json findings = j["findings"];
  const std::string xmlns = " xmlns=\"http://www.w3.org/2000/svg\"";
  for (auto& f : findings) {  // inline SVG needs no namespace declaration in HTML
    if (!f.contains("graph_svg")) continue;
    std::string svg = f["graph_svg"].get<std::string>();
    for (size_t p = 0; (p = svg.find(xmlns, p)) != std::string::npos;) svg.erase(p, xmlns.size());
    f["graph_svg"] = svg;
  }
  json embed = {{"schema", j["schema"]},   {"version", j["version"]},
                {"session", j["session"]}, {"steps", chart_steps(j["steps"])},
                {"findings", findings},    {"verdict", j.value("verdict", json::array())}};
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>graft.doctor report</title><style>"
    << kStyle << "</style></head><body>\n";
  const int64_t steps = j["session"].value("steps", int64_t{0});
  o << "<h1>graft.doctor</h1><div class=\"sub\">" << steps << " steps watched, " << j["findings"].size()
    << " finding(s)</div>\n";
  if (j.contains("stopped")) {  // an error that stopped the program leads the page
    const json& st = j["stopped"];
    o << "<div class=\"stopped\"><b>"
      << (st.value("out_of_memory", false) ? "The program ran out of memory" : "The program stopped with an error")
      << "</b>: " << html_escape_text(st.value("error", std::string())) << "</div>\n";
    const std::string oom = st.value("oom_report", std::string());
    if (!oom.empty()) o << "<h2>Out of memory</h2><pre class=\"oom\">" << html_escape_text(oom) << "</pre>\n";
  }
  o << "<h2>Findings</h2><div id=\"findings\"></div>\n";
  o << "<h2>Memory by step</h2><div id=\"legend\" class=\"legend\"></div>\n";
  o << "<svg id=\"chart\" width=\"900\" height=\"300\"></svg>\n";
  o << "<svg id=\"stale\" width=\"900\" height=\"100\"></svg>\n";
  o << "<div id=\"chart-ready\"></div><div id=\"tip\"></div>\n";
  // inline SVG needs no namespace declaration in HTML (and the page names no URL at all)
  std::string inline_svg = graph_svg;
  for (size_t p = 0; (p = inline_svg.find(xmlns, p)) != std::string::npos;) inline_svg.erase(p, xmlns.size());
  if (inline_svg.empty() || inline_svg.find("data-nodes=\"0\"") != std::string::npos)
    o << "<h2>Live graphs</h2><p>No live graphs now (each finding above shows its graph as it was when it was "
         "reported).</p>\n";
  else
    o << "<h2>Live graphs</h2><div class=\"graph\">" << inline_svg << "</div>\n";
  o << "<h2>Report</h2><pre>" << html_escape_text(report_text) << "</pre>\n";
  o << "<script id=\"timeline\" type=\"application/json\">" << script_safe(embed.dump()) << "</script>\n";
  o << "<script>" << kScript << "</script>\n</body></html>\n";
  return o.str();
}

}  // namespace graft::doctor
