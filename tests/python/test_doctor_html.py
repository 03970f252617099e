"""graft.doctor's HTML page (Doctor.render(format="html"), graft.doctor.render_timeline): one
self-contained file (no "http" anywhere: nothing is fetched), whose script, run by headless
Chromium, draws a series per memory category present and a marker at the step of each finding,
and lists the findings with their holders as text (a holder like ``kept[<Key>]`` is shown, not
parsed as a tag). The page made from a saved timeline JSON shows the same findings and chart.
Skips only when /usr/bin/chromium is missing (CI installs Debian's chromium)."""
import html.parser
import os
import subprocess

import pytest

import graft as torch
import graft.doctor as doctor
import graft.nn as nn
import graft.nn.functional as F

CHROMIUM = "/usr/bin/chromium"


class Key:
    """A dict key with no readable label: the holder path shows it as ``kept[<Key>]``."""


def leaking_run(steps=8):
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    kept = {}
    with doctor.watch(deterministic=True) as dr:
        for _ in range(steps):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            kept[Key()] = loss  # losses kept with their graphs
            opt.step()
    return dr


class Dom(html.parser.HTMLParser):
    """The elements (tag, attributes) of a page, and the text of each finding's block."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elements, self.findings, self._depth = [], [], None
        self._stack = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag in ("br", "i", "line", "path", "rect", "marker", "meta"):
            return
        self._stack.append(tag)
        if "finding" in a.get("class", "").split() and tag == "div":
            self.findings.append("")
            self._depth = len(self._stack)

    def handle_endtag(self, tag):
        if self._stack and self._stack[-1] == tag:
            if self._depth == len(self._stack):
                self._depth = None
            self._stack.pop()

    def handle_data(self, data):
        if self._depth is not None and "details" not in self._stack:
            self.findings[-1] += data

    def all(self, tag, cls=None):
        return [a for t, a in self.elements if t == tag and (cls is None or cls in a.get("class", "").split())]


def chromium_doms(tmp_path, pages):
    """The DOM of each page after its script ran, from headless Chromium (all at once)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium to run the page's script (CI has it)")
    procs = []
    for i, page in enumerate(pages):
        procs.append(subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / f'profile{i}'}",
             "--dump-dom", page.as_uri()], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
    out = []
    for p in procs:
        dom, _ = p.communicate(timeout=120)
        assert p.returncode == 0 and "</html>" in dom, dom[-500:]
        out.append(Dom(dom))
    return out


def drawn_categories(timeline):
    """The categories the chart must draw: those with bytes in some step, in the chart's order."""
    cats = set()
    for s in timeline["steps"]:
        cats |= {c for c, v in s["bytes"].items() if v}
        if s["graph_host_bytes"]:
            cats.add("graph_host_bytes")
    return cats


def test_the_page_is_one_file_that_fetches_nothing(tmp_path):
    dr = leaking_run()
    page = dr.render(tmp_path / "report.html", format="html")
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == page
    assert "http" not in page.lower()
    dom = Dom(page)
    assert not [a for t, a in dom.elements if "src" in a or (t == "link" and "href" in a)]
    assert [a.get("type") for a in dom.all("script")] == ["application/json", None]  # data, then code: inline
    # before the script runs nothing is drawn
    assert dom.all("path", "series") == [] and dom.all("line", "finding-marker") == []


def test_chromium_draws_the_series_and_marks_the_finding_and_a_saved_timeline_shows_the_same(tmp_path):
    dr = leaking_run()
    [f] = dr.findings
    assert (f.id, f.step) == ("LD001", 5) and f.holders[0].path == "kept[<Key>]"
    dr.render(tmp_path / "live.html", format="html")
    dr.render(tmp_path / "timeline.json", format="json")
    timeline = doctor.load_timeline(tmp_path / "timeline.json")
    saved = doctor.render_timeline(timeline, tmp_path / "saved.html")
    assert (tmp_path / "saved.html").read_text(encoding="utf-8") == saved and "http" not in saved.lower()
    live, again = chromium_doms(tmp_path, [tmp_path / "live.html", tmp_path / "saved.html"])

    records = dr.timeline()["steps"]
    assert [r["findings"] for r in records] == [[]] * 4 + [["LD001"]] + [[]] * 3  # one marker, at step 5
    cats = drawn_categories(dr.timeline())
    assert {"parameter", "gradient", "graph_host_bytes"} <= cats
    for dom in (live, again):
        series = dom.all("path", "series")
        chart = [a["data-category"] for a in series if a["data-category"] != "stale_generations"]
        assert sorted(chart) == sorted(cats)
        [ready] = [a for _, a in dom.elements if a.get("id") == "chart-ready"]
        assert int(ready["data-series"]) == len(chart) > 0
        assert [a["data-finding"] for a in dom.all("line", "finding-marker")] == ["LD001"]
        [text] = dom.findings
        assert text.startswith("LD001 accumulated-loss (leak) at test_doctor_html.py:")
        # the line that stored each reference, then the one that made the loss
        assert text.count("held by kept[<Key>] (stored at test_doctor_html.py:36; made at test_doctor_html.py:34, "
                          "step ") == 4, text
    assert again.findings == live.findings
