"""graft.doctor's outputs (design F7, F8): the timeline JSON's schema ("graft.doctor.timeline",
version 1: its keys, its step records and events, no times when deterministic), load_timeline's
round trip and its refusals, the DOT picture of a small leaking run against a golden file, the
SVG picture's totals against live_graphs(), and a golden of report()'s Findings section.

Golden files live in tests/python/golden/; GRAFT_UPDATE_GOLDEN=1 rewrites them (review the diff).
The DOT golden names lines of ``carried_state`` below: keep it at the top of this file."""
import json
import os
import pathlib
import re
import xml.etree.ElementTree as ET

import pytest

import graft as torch
import graft.doctor as doctor

import doctor_fixtures as fx


def carried_state(steps):  # LD002: state['h'] carried into the next step with its graph
    torch.manual_seed(0)
    w = torch.randn(4, 4, requires_grad=True)
    x = torch.randn(1, 4)
    opt = torch.optim.SGD([w], lr=0.01)
    state = {"h": torch.zeros(1, 4)}
    for _ in range(steps):
        opt.zero_grad()
        state["h"] = torch.tanh(state["h"] * 0.5 + x @ w)
        state["h"].sum().backward(retain_graph=True)
        opt.step()
    return state


GOLDEN = pathlib.Path(__file__).parent / "golden"


def check_golden(name, text):
    path = GOLDEN / name
    if os.environ.get("GRAFT_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from the golden file (GRAFT_UPDATE_GOLDEN=1)"


TOP_KEYS = {"schema", "version", "session", "deterministic", "categories", "steps", "findings", "events",
            "events_dropped", "verdict"}  # and "stopped" when the program stopped with an error
STEP_KEYS = {"step", "bytes", "reserved", "graph_nodes", "stale_nodes", "saved_slots", "stale_saved_slots",
             "saved_bytes", "graph_host_bytes", "stale_generations", "peak_bytes", "findings"}
FINDING_KEYS = {"id", "name", "severity", "step", "first_step", "message", "summary", "fix", "line", "made_at",
                "holders", "nodes", "saved_bytes", "host_bytes", "nodes_per_step", "tensor_bytes", "bytes_per_step",
                "graph_svg"}
EVENT_KEYS = {"alloc": {"bytes", "category", "line"}, "free": {"bytes", "category", "line"}, "backward": {"line"},
              "node_free": {"name", "line"}, "step": set(), "finding": {"name", "line"}}
CATEGORIES = ["other", "parameter", "gradient", "saved_for_backward", "optimizer_state", "data_batch"]


def timeline_of(steps=6, **opts):
    with doctor.watch(**opts) as dr:
        fx.running_total(steps)
    return dr, json.loads(dr.render(format="json"))


def test_the_timeline_json_has_its_documented_schema():
    dr, t = timeline_of(deterministic=True)
    assert t["schema"] == "graft.doctor.timeline" and t["version"] == 1
    assert set(t) == TOP_KEYS
    assert t["session"] == {"tier": "sites", "warmup": 2, "confirm": 3, "steps": 6}
    assert t["categories"] == CATEGORIES and t["deterministic"] is True and t["events_dropped"] == 0
    assert [s["step"] for s in t["steps"]] == [1, 2, 3, 4, 5, 6]
    for s in t["steps"]:
        assert set(s) == STEP_KEYS, s.keys()
        assert set(s["bytes"]) == set(CATEGORIES)
    assert [s["findings"] for s in t["steps"]] == [[], [], [], [], ["LD001"], []]
    [f] = t["findings"]
    assert set(f) == FINDING_KEYS and (f["id"], f["step"], f["line"]) == ("LD001", 5, fx.line_of("LD001"))
    assert f["holders"] == [{"path": "state['total']", "created_at": fx.line_of("LD001"), "created_step": 1,
                             "through_hook": False, "stored_at": fx.line_of("LD001"), "hook_registered_at": ""}]
    seqs = [e["seq"] for e in t["events"]]
    assert seqs == list(range(1, len(seqs) + 1))
    for e in t["events"]:
        assert set(e) - {"seq", "kind", "step"} <= EVENT_KEYS[e["kind"]], e
    assert [e["step"] for e in t["events"] if e["kind"] == "step"] == [1, 2, 3, 4, 5, 6]
    assert [(e["name"], e["step"], e["line"]) for e in t["events"] if e["kind"] == "finding"] == \
        [("LD001", 5, fx.line_of("LD001"))]
    # the step records count what the doctor saw: 9 nodes a step kept by the running total (as
    # PyTorch's graph of the same step: mse_loss is one node), and the 4 shared AccumulateGrad
    assert [s["graph_nodes"] for s in t["steps"]] == [13, 22, 31, 40, 49, 58]
    assert [s["stale_generations"] for s in t["steps"]] == [0, 1, 2, 3, 4, 5]
    assert dr.timeline() == t


def test_deterministic_timelines_have_no_times_and_others_have_them():
    _, t = timeline_of(deterministic=True)
    assert not any("t" in s for s in t["steps"]) and not any("t" in e for e in t["events"])
    _, t = timeline_of()
    assert t["deterministic"] is False
    assert all(isinstance(s["t"], float) for s in t["steps"]) and all("t" in e for e in t["events"])


def test_the_event_ring_keeps_the_newest_events_and_counts_the_dropped_ones():
    _, full = timeline_of(deterministic=True)
    total = len(full["events"])
    assert full["events_dropped"] == 0 and total > 100
    _, ring = timeline_of(deterministic=True, max_events=5)
    assert ring["events"] == full["events"][-5:] and ring["events_dropped"] == total - 5
    _, none = timeline_of(deterministic=True, max_events=0)
    assert none["events"] == [] and none["events_dropped"] == total
    def counts(t):  # (node host bytes follow the C library's heap)
        return [{k: v for k, v in r.items() if k != "graph_host_bytes"} for r in t["steps"]]

    assert counts(none) == counts(full)  # the step records do not need the events
    assert [(f["id"], f["step"], f["line"]) for f in none["findings"]] == [(f["id"], f["step"], f["line"])
                                                                          for f in full["findings"]]


def test_load_timeline_round_trips_and_refuses_other_files(tmp_path):
    dr, t = timeline_of(deterministic=True)
    path = tmp_path / "timeline.json"
    assert dr.render(path, format="json") == path.read_text(encoding="utf-8")
    assert doctor.load_timeline(path) == t
    assert doctor.load_timeline(str(path)) == t

    def refused(data, match):
        bad = tmp_path / "bad.json"
        bad.write_text(data if isinstance(data, str) else json.dumps(data))
        with pytest.raises(ValueError, match=match):
            doctor.load_timeline(bad)

    refused(dict(t, schema="graft.memory.snapshot"), "not a graft.doctor timeline")
    refused({k: v for k, v in t.items() if k != "schema"}, "not a graft.doctor timeline")
    refused(dict(t, version=2), "timeline version 2 is not supported")
    refused({k: v for k, v in t.items() if k != "version"}, "timeline version None is not supported")
    refused({k: v for k, v in t.items() if k != "steps"}, "the timeline has no 'steps'")
    refused([t], "not a graft.doctor timeline")
    refused("{not json", "")  # json's own ValueError
    with pytest.raises(ValueError, match="not a graft.doctor timeline"):
        doctor.render_timeline(dict(t, schema="something else"))


def test_the_dot_picture_of_a_small_leak_matches_its_golden_file():
    with doctor.watch(deterministic=True) as dr:
        state = carried_state(6)
        dot = dr.render(format="dot")
        graphs = dr.live_graphs()
    del state
    assert [f.id for f in dr.findings] == ["LD002"]
    check_golden("carried_state.dot", dot)
    # the totals in the picture are the census's
    assert f"// nodes={sum(g['nodes'] for g in graphs)} saved_bytes={sum(g['saved_bytes'] for g in graphs)} " in dot


def test_the_svg_picture_parses_and_its_totals_are_the_census():
    with doctor.watch(deterministic=True) as dr:
        state = carried_state(6)
        svg = dr.render(format="svg")
        graphs = dr.live_graphs()
        extra = torch.randn(3, requires_grad=True).exp()  # a second, separate graph: the picture draws both
        both = ET.fromstring(dr.render(format="svg"))
        graphs2 = dr.live_graphs()
        del extra
    del state
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert int(root.get("data-nodes")) == sum(g["nodes"] for g in graphs) == 24
    assert int(root.get("data-saved-bytes")) == sum(g["saved_bytes"] for g in graphs)
    # drawn nodes plus the folded ones ("x2 steps (3..4), 4 nodes each") are every node
    groups = root.findall("{http://www.w3.org/2000/svg}g")
    drawn = sum(1 for g in groups if g.get("class") == "node")
    folded = 0
    for g in groups:
        if g.get("class") == "collapsed":
            label = g.find("{http://www.w3.org/2000/svg}text").text
            times, each = re.match(r"x(\d+) steps \(\d+\.\.\d+\), (\d+) nodes each", label).groups()
            folded += int(times) * int(each)
    assert drawn + folded == 24
    assert [g.find("{http://www.w3.org/2000/svg}text").text for g in groups if g.get("class") == "handle"] == \
        ["state['h']"]
    assert len(graphs2) == 2 and int(both.get("data-nodes")) == sum(g["nodes"] for g in graphs2) == 24 + 2  # ExpBackward0, AccumulateGrad
    # the picture each finding keeps is of its graph when it was reported
    [f] = dr.findings
    kept = ET.fromstring(f.graph_svg)
    assert int(kept.get("data-nodes")) == f.nodes and f.graph_dot.startswith("digraph graft_doctor {")


def findings_section(report):
    start = report.index("\nFindings (")
    return report[start + 1:report.index("\n\n", start) + 1]


def test_the_findings_section_of_the_report_matches_its_golden_file():
    with doctor.watch(deterministic=True) as dr:
        fx.running_total(8)
    section = findings_section(dr.report())
    # the node objects' heap bytes depend on the C library's allocator state: masked
    section = re.sub(r"[\d.]+ (B|KiB|MiB) of nodes on the host", "<host bytes> of nodes on the host", section)
    check_golden("running_total_findings.txt", section)
