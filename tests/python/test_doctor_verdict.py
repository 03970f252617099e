"""The doctor's verdict says only what the steps watched show: "nothing grows" only when allocated
memory and the live graphs were flat after the warm-up; too few steps, an error or an OOM that
stopped the program, and growth no finding names are said as such, in the text report, the
timeline and the HTML page. doctor.step() without a doctor does nothing."""
import re

import pytest

import graft as torch
import graft.doctor as doctor
import graft.nn as nn
import graft.nn.functional as F

MiB = 1 << 20


def train(steps, keep=None, total=None):
    torch.manual_seed(0)
    model = nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 8), torch.randn(16, 2)
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        loss = F.mse_loss(out, y)
        loss.backward()
        opt.step()
        if keep is not None:
            keep.append(out.detach())
        if total is not None:
            total.append(loss)


def test_flat_memory_is_the_only_nothing_grows():
    with doctor.watch() as dr:
        train(8)
    [sentence] = dr.verdict
    assert sentence == "No findings: nothing grows from step to step (allocated memory and live graphs were flat " \
                       "from step 2 to step 8)."
    assert dr.report().splitlines()[2] == sentence


def test_growth_without_a_graph_is_ld011_and_not_called_flat():
    kept = []
    with doctor.watch() as dr:
        train(8, keep=kept)
    assert [f.id for f in dr.findings] == ["LD011"]
    [sentence] = dr.verdict
    # 16 x 2 floats kept per step: 128 bytes of tensor, one 512-byte block of the allocator
    assert sentence.startswith("Memory grew: allocated memory grew from "), sentence
    assert "at step 2 to " in sentence and "at step 8 (about 512 B per step)" in sentence, sentence
    assert "diff(2, 8)" in sentence and "nothing grows" not in dr.report()
    del kept


def test_growth_no_rule_names_is_said_with_its_figures():
    state = {"buffer": torch.zeros(0, 2)}

    def keep(out):  # one tensor, made again one batch longer each step: always the current step's
        state["buffer"] = torch.cat([state["buffer"], out])

    with doctor.watch() as dr:
        train(8, keep=type("Keep", (), {"append": staticmethod(keep)}))
    assert dr.findings == []
    [sentence] = dr.verdict
    assert sentence.startswith("No finding names a cause, but allocated memory grew from "), sentence
    assert "diff(2, 8)" in sentence and "nothing grows" not in dr.report()


def test_a_buffer_that_stops_growing_has_its_ld011_withdrawn_at_the_end():
    buffer = []
    with doctor.watch() as dr:
        torch.manual_seed(0)
        for i in range(40):
            dr.step()
            item = torch.randn(4)
            if len(buffer) < 12:
                buffer.append(item)  # grows to its capacity...
            else:
                buffer[i % 12] = item  # ...then cycles
        reported = [f.id for f in dr.findings]
    assert reported == ["LD011"]  # while it grew, nobody could tell it would stop
    assert dr.findings == []
    withdrawn = [s for s in dr.verdict if "withdrawn" in s]
    assert len(withdrawn) == 1 and "LD011 at test_doctor_verdict.py:" in withdrawn[0], dr.verdict
    assert "stopped growing at step 13" in withdrawn[0] and "a bounded buffer" in withdrawn[0], withdrawn[0]


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_too_few_steps_give_no_verdict(steps):
    with doctor.watch() as dr:
        train(steps)
        x = torch.randn(3, requires_grad=True)
        alive = (x * 2).sum()  # a graph alive at the end: 2 nodes and the leaf's
        [sentence] = dr.verdict
    if steps == 0:
        assert sentence.startswith("No step was watched, so there is no verdict: a step ends at each "
                                   "optimizer.step(), after each iteration that runs backward when no optimizer "
                                   "steps, at each forward of an evaluation under grad mode, or at "
                                   "graft.doctor.step().")
    else:
        assert sentence.startswith(f"Only {steps} step{'s' if steps > 1 else ''} watched: a verdict needs at least 5 "
                                   "(warm-up 2 + confirmation 3), so none is given.")
    assert re.search(r" \d+ graph nodes are alive now\.$", sentence), sentence
    assert "nothing grows" not in dr.report() and "No findings" not in dr.render(format="html")
    del alive


def test_an_exception_leads_the_report_and_the_page():
    with pytest.raises(ZeroDivisionError):
        with doctor.watch() as dr:
            train(6)
            1 / 0
    first = dr.verdict[0]
    assert first == "The program stopped with an error in step 7: ZeroDivisionError: division by zero."
    assert dr.report().splitlines()[2] == first
    timeline = dr.timeline()
    assert timeline["stopped"] == {"error": "ZeroDivisionError: division by zero", "out_of_memory": False,
                                   "oom_report": ""}
    html = dr.render(format="html")
    assert html.index('<div class="stopped">') < html.index("<h2>Findings</h2>")
    assert "ZeroDivisionError: division by zero" in html


def fill(keep):
    keep.append(torch.zeros(MiB))


def test_an_out_of_memory_error_leads_with_its_report():
    torch.cpu.empty_cache()
    total = torch.cpu.mem_get_info()[1]
    keep = []
    with pytest.raises(torch.cuda.OutOfMemoryError):  # the same class as torch.OutOfMemoryError
        with doctor.watch() as dr:
            train(2)
            try:
                torch.cpu.set_per_process_memory_fraction((torch.cpu.memory_reserved() + 64 * MiB) / total)
                for _ in range(100):
                    fill(keep)
            finally:
                torch._C._set_per_process_memory_limit(None, "cpu")
    del keep
    torch.cpu.empty_cache()
    verdict = dr.verdict
    assert verdict[0].startswith("The program ran out of memory in step 3: OutOfMemoryError: CPU out of memory.")
    assert verdict[0].endswith("(the OOM report follows the findings).")
    assert verdict[1].startswith("Only 2 steps watched")
    report = dr.report()
    assert "\nOut of memory:\n" + dr.last_oom_report in report and "Cause: the per-process cap." in report
    html = dr.render(format="html")
    assert '<pre class="oom">' in html and "Cause: the per-process cap." in html
    assert html.index('<div class="stopped">') < html.index("<h2>Findings</h2>")


def test_step_without_a_doctor_does_nothing():
    assert doctor.current() is None
    doctor.step()  # a marked-up loop runs under plain python
    with doctor.watch() as dr:
        doctor.step()
        doctor.step()
    assert dr.steps == 2
    doctor.step()
    assert dr.steps == 2
