"""graft.doctor's API for programs and test suites (design F2, F5, F6, F9, F11, F12, F13):
assert_no_leak and expect_flat, allow() by path and by line, live_graphs() with exact saved
bytes and holder paths, diff, peak, the ledger, fragmentation, checkpointing advice, one doctor
at a time, the OOM report, the "outside" memory of a fake device query, and the running total's
host-side growth next to flat device memory."""
import re
import sys

import pytest

import graft as torch
import graft.doctor as doctor
import graft.nn as nn
import graft.nn.functional as F

import doctor_fixtures as fx

MiB = 1 << 20
with open(__file__, encoding="utf-8") as _f:
    _SOURCE = _f.read().splitlines()

# Under a trace or profile function (coverage, a profiler, a debugger) the doctor leaves the
# frames' f_locals snapshots alone (they are copied back into the frames), and a local the test
# deletes lives on in its snapshot until the frame returns: these checks are skipped then.
untraced = pytest.mark.skipif(sys.gettrace() is not None or sys.getprofile() is not None,
                              reason="a trace or profile function is set: frames keep their f_locals snapshots")


def line_of(marker):
    """'test_doctor_api.py:<line>' of the line ending with ``# <-- marker``."""
    return next(f"test_doctor_api.py:{i}" for i, t in enumerate(_SOURCE, 1) if t.endswith("# <-- " + marker))


def mlp_steps():
    """A clean step and a leaking one (a running total of losses) over one small MLP."""
    model, opt, x, y = fx._mlp()
    state = {"total": 0}

    def clean():
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    def leaking():
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)  # <-- forward
        loss.backward()
        state["total"] += loss  # <-- total
        opt.step()

    return clean, leaking, state


# ---- F12: helpers for test suites, suppressions ----

def test_assert_no_leak_passes_a_clean_step_and_names_the_rule_of_a_leaking_one():
    clean, leaking, state = mlp_steps()
    dr = doctor.assert_no_leak(clean, steps=10)
    assert dr.steps == 10 and dr.findings == []
    with pytest.raises(AssertionError) as info:
        doctor.assert_no_leak(leaking, steps=10)
    message = str(info.value)
    assert message.startswith("graft.doctor found 1 problem(s):\n")
    assert f"LD001 accumulated-loss (leak) at {line_of('total')}, reported at step 5" in message
    assert "held by state['total']" in message
    state.clear()
    del info
    # without an optimizer in it, each call of the step function is a doctor step; an info
    # finding (a forward under grad mode that no backward used: LD010) does not fail it
    model, _, x, _ = fx._mlp()
    calls = []
    dr = doctor.assert_no_leak(lambda: calls.append(model(x).sum().detach().item()), steps=7)
    assert dr.steps == len(calls) == 7
    assert [(f.id, f.severity) for f in dr.findings] == [("LD010", "info")]


def test_expect_flat_passes_while_flat_and_fails_on_growth_inside_its_block():
    clean, leaking, state = mlp_steps()
    with doctor.watch() as dr:
        for _ in range(3):
            clean()
        with dr.expect_flat():
            for _ in range(8):
                clean()
        with pytest.raises(AssertionError) as info:
            with dr.expect_flat():
                for _ in range(8):
                    leaking()  # from step 12: reported after 3 steps of growth
        state.clear()
    message = str(info.value)
    assert message.startswith("memory did not stay flat:\n")
    assert f"LD001 accumulated-loss (leak) at {line_of('total')}, reported at step 15" in message
    assert "+9 nodes per step" in message  # the MLP's 9 nodes a step (PyTorch's count), from the leak's start
    assert [(f.id, f.step) for f in dr.findings] == [("LD001", 15)]


def two_leaks(steps):
    model, opt, x, y = fx._mlp()
    state = {"total": 0}
    outputs = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        state["total"] += loss  # <-- two: total
        outputs.append(model(x).sum())  # <-- two: outputs
        opt.step()


def findings_of(*allowed):
    with doctor.watch() as dr:
        for a in allowed:
            dr.allow(a)
        two_leaks(8)
    return [(f.id, f.line, f.holders[0].path) for f in dr.findings]


def test_allow_suppresses_exactly_the_findings_of_its_path_or_line():
    total = ("LD001", line_of("two: total"), "state['total']")
    outputs = ("LD003", line_of("two: outputs"), "outputs[3]")
    assert findings_of() == [total, outputs]
    assert findings_of("state") == [outputs]               # a root and what lies under it
    assert findings_of("state['total']") == [outputs]
    assert findings_of("outputs") == [total]
    assert findings_of(line_of("two: outputs")) == [total]  # a line
    assert findings_of(line_of("two: total")) == [outputs]
    assert findings_of("stat", "output", "outputs[3]x", "test_doctor_api.py:1") == [total, outputs]  # none of them
    assert findings_of("state", line_of("two: outputs")) == []


# ---- F2: the live graphs ----

@untraced
def test_live_graphs_count_saved_bytes_exactly_and_name_their_holders():
    torch.manual_seed(0)
    lin = nn.Linear(64, 256)
    x = torch.randn(32, 64)  # does not require grad: only it is saved (for the weight's gradient)
    with doctor.watch() as dr:
        out = lin(x)  # <-- linear
        [g] = dr.live_graphs()
        assert g["saved_bytes"] == 32 * 64 * 4 and g["parameter_bytes"] == 0
        assert g["nodes"] == 5 and g["nodes_by_type"] == {"AccumulateGrad": 2, "AddBackward0": 1, "MmBackward0": 1,
                                                          "TBackward0": 1}
        assert [h.path for h in g["holders"]] == ["out"] and g["holders"][0].created_at == line_of("linear")
        assert g["lines"] == [line_of("linear")] and (g["oldest_step"], g["newest_step"]) == (1, 1)
        assert not g["executed"]
        y = out.relu()
        v1, v2 = y[:16], y[16:]  # two views of relu's result
        z = (v1 * v2).sum()  # saves both views: one storage, counted once
        [g] = dr.live_graphs()
        assert g["saved_bytes"] == 32 * 64 * 4 + 32 * 256 * 4
        mul = next(n for n in g["node_list"] if n["name"] == "MulBackward0")
        relu = next(n for n in g["node_list"] if n["name"] == "ReluBackward0")
        assert len({s["storage"] for s in mul["saved"] + relu["saved"]}) == 1
        assert g["nodes"] == 10
        assert sorted(h.path for h in g["holders"]) == ["out", "v1", "v2", "y", "z"]
        z.backward()
        [g] = dr.live_graphs()
        assert g["saved_bytes"] == 0 and g["nodes"] == 10 and g["executed"]  # freed, the nodes stay
        assert all(s["released"] for n in g["node_list"] for s in n["saved"])
        del z, v1, v2, y
        [g] = dr.live_graphs()
        assert g["nodes"] == 5 and [h.path for h in g["holders"]] == ["out"]
        del out
        assert dr.live_graphs() == []  # the handle died: so did its graph


def test_an_intermediate_only_the_graph_keeps_is_no_handle():
    x = torch.randn(4, 4, requires_grad=True)

    def forward():
        a = x * 2
        b = a.relu()  # a Python object once; then saved by ReluBackward0 and MulBackward0 only
        return (b * b).sum()  # <-- graph out

    with doctor.watch() as dr:
        out = forward()
        [g] = dr.live_graphs()
        handles = [(h["shape"], h["site"]) for h in g["handles"]]
        holders = [h.path for h in g["holders"]]
        del out
    assert handles == [([], line_of("graph out"))] and holders == ["out"]


def test_holder_paths_start_from_the_users_code_not_from_installed_packages():
    model, opt, x, y = fx._mlp()
    nested = {"run": {"losses": []}}  # the user's own (longer) path to the leak
    pytest._graft_doctor_probe = nested["run"]["losses"]  # an installed package's global (shorter) path to it
    try:
        with doctor.watch() as dr:
            for _ in range(6):
                opt.zero_grad()
                loss = F.mse_loss(model(x), y)
                loss.backward()
                nested["run"]["losses"].append(loss)
                opt.step()
    finally:
        del pytest._graft_doctor_probe
    nested.clear()
    [f] = dr.findings
    assert f.holders[0].path == "nested['run']['losses'][3]", [h.path for h in f.holders]


# ---- F9: the step diff ----

def test_diff_of_a_leaking_loop_counts_what_each_step_left():
    clean, leaking, state = mlp_steps()
    with doctor.watch(deterministic=True) as dr:
        for _ in range(8):
            leaking()
        diff = dr.diff(5, 7)
        state.clear()
        for _ in range(6):
            clean()
        # after the warm-up nothing a clean step made outlives the next step (the last step's
        # gradients and loss are alive: they are not in the range)
        empty = dr.diff(10, dr.steps - 1)
    forward = line_of("forward")
    counts = {(e["kind"], e["line"], e["type"]): e["count"] for e in diff["entries"]}
    assert counts == {("node", forward, "AddBackward0"): 4, ("node", forward, "MmBackward0"): 4,
                      ("node", forward, "TBackward0"): 4, ("node", forward, "MseLossBackward0"): 2,
                      ("node", forward, "ReluBackward0"): 2, ("node", line_of("total"), "AddBackward0"): 2}
    assert (diff["from"], diff["to"]) == (5, 7)
    assert str(diff).splitlines()[0].startswith(f"+4 nodes (AddBackward0) from {forward}, 2 per step, ")
    assert empty["entries"] == []


# ---- F5, F6: peak, ledger, fragmentation ----

def test_peak_parts_add_up_and_name_the_module_that_saved():
    clean, _, _ = mlp_steps()
    with doctor.watch():
        earlier = torch.zeros(500)  # made while an earlier doctor watched, dies in the next one's step 4
    with doctor.watch() as dr:
        for i in range(4):
            if i == 3:
                del earlier
            clean()
        p = dr.peak()
    assert p["step"] == 4
    assert sum(p["by_category"].values()) == p["peak_bytes"] == sum(b for _, b in p["by_line"])
    assert p["start_bytes"] <= p["peak_bytes"]
    assert p["by_category"]["saved_for_backward"] > 0
    assert dict(p["by_scope"])["Sequential.1"] == 32 * 16 * 4  # ReLU's saved result
    assert p["sentences"][0].startswith("Step 4 peaked at ")
    # two tables, each adding up to the peak
    s = p["sentences"]
    cats, lines = s[s.index("  by category:") + 1:s.index("  by the line that made it:")], []
    for t in s[s.index("  by the line that made it:") + 1:]:
        if not t.startswith("    "):
            break
        lines.append(t)
    assert len(cats) == len(p["by_category"]) and all(" made at " not in t for t in cats)
    assert lines and all(" made at " in t or " from before the session" in t for t in lines)


def ledger_sum(led):
    return sum(led["live_by_category"].values()) + led["rounding"] + led["cached_releasable"] + led["free_trapped"]


def test_the_ledger_parts_add_up_to_reserved_exactly():
    clean, leaking, state = mlp_steps()
    with doctor.watch() as dr:
        for _ in range(6):
            leaking()
        keep = [torch.zeros(1000), torch.zeros(3 * MiB // 4)]
        spare = torch.zeros(100000)
        del spare  # a free block next to live ones
        led = dr.ledger()
        assert led["reserved"] == torch.cpu.memory_reserved() == ledger_sum(led)
        assert sum(led["live_by_category"].values()) + led["rounding"] == torch.cpu.memory_allocated()
        assert led["live_by_category"]["gradient"] > 0 and led["graph_host_bytes"] > 0
        assert "  (the parts add up to " in "\n".join(led["sentences"])
        state.clear()
        del keep
        led = dr.ledger()
        assert led["reserved"] == ledger_sum(led)
        torch.cpu.empty_cache()
        led = dr.ledger()
        assert led["cached_releasable"] == 0 and led["reserved"] == ledger_sum(led) == torch.cpu.memory_reserved()


def test_fragmentation_is_one_minus_largest_free_over_free_per_pool():
    with doctor.watch() as dr:
        torch.cpu.empty_cache()
        before = {p["pool"]: p for p in dr.fragmentation()["pools"]}
        a, b, c = (torch.zeros(3 * MiB // 4) for _ in range(3))  # 3 MiB each, one large segment
        del a, c  # a hole before b, and free space after it
        frag = dr.fragmentation()
        del b
        torch.cpu.empty_cache()
    pools = {p["pool"]: p for p in frag["pools"]}
    assert set(pools) == {"small", "large"}
    for p in pools.values():
        expected = 0.0 if p["free_bytes"] == 0 else 1 - p["largest_free"] / p["free_bytes"]
        assert p["fragmentation"] == pytest.approx(expected, abs=1e-12)
    large = pools["large"]
    assert large["free_blocks"] >= before["large"]["free_blocks"] + 1 and large["fragmentation"] > 0
    assert frag["largest_allocation"] > 0
    assert any(s.startswith("The large pool has ") for s in frag["sentences"])


def test_external_memory_shows_as_outside_in_the_ledger():
    with doctor.watch() as dr:
        try:
            torch._C._doctor_set_external_memory_query(lambda device: 12345)
            led = dr.ledger()
            report = dr.report()
        finally:
            torch._C._doctor_set_external_memory_query(None)
        after = dr.ledger()
    assert led["outside"] == 12345
    assert "12.1 KiB of cpu memory is used outside graft's allocator." in led["sentences"]
    assert "12.1 KiB of cpu memory is used outside graft's allocator." in report
    assert after["outside"] != 12345  # back to the process's own measure


def test_the_running_total_grows_on_the_host_while_device_memory_stays_flat():
    _, leaking, state = mlp_steps()
    with doctor.watch(deterministic=True) as dr:
        for _ in range(10):
            leaking()
        led = dr.ledger()
        state.clear()
    records = dr.timeline()["steps"]
    device = [sum(r["bytes"].values()) for r in records]
    host = [r["graph_host_bytes"] for r in records]
    assert device == [device[0]] * 10 and {r["reserved"] for r in records} == {records[0]["reserved"]}
    assert all(r["saved_bytes"] == 0 for r in records)  # backward freed what was saved
    assert all(b > a for a, b in zip(host, host[1:])), host
    assert [r["graph_nodes"] for r in records] == [13 + 9 * i for i in range(10)]
    assert led["graph_host_bytes"] == host[-1]
    assert any(s.endswith("of host memory holds backward-graph nodes (outside the allocator).") for s in
               led["sentences"])


# ---- checkpointing advice ----

def test_checkpoint_advice_measures_a_saving_for_a_middle_block_of_a_deep_mlp():
    torch.manual_seed(0)

    def block():
        return nn.Sequential(nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh())

    model = nn.Sequential(nn.Linear(16, 64), block(), block(), block(), nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(128, 16), torch.randn(128, 1)
    calls = []

    def step():
        calls.append(1)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()

    with doctor.watch() as dr:
        advice = dr.checkpoint_advice(step, model)
    assert len(calls) == 2 + 5 and dr.findings == []
    assert sorted(a["segment"] for a in advice) == ["0", "1", "2", "3", "4"]
    assert [a["saving_bytes"] for a in advice] == sorted((a["saving_bytes"] for a in advice), reverse=True)
    assert advice[0]["segment"] in ("1", "2") and advice[0]["saving_bytes"] > 0
    assert all(a["peak_bytes"] + a["saving_bytes"] == a["baseline_bytes"] for a in advice)
    assert all("forward" not in vars(m) for m in model.modules())  # the modules' own forward again


# ---- one doctor at a time ----

def test_one_doctor_watches_at_a_time():
    doctor.step()  # no doctor: nothing happens (tests/python/test_doctor_verdict.py)
    with doctor.watch() as dr:
        with pytest.raises(RuntimeError, match="already watching"):
            with doctor.watch():
                pass
        assert doctor.current() is dr and dr.watching
        doctor.step()
        assert dr.steps == 1
    assert doctor.current() is None and not dr.watching
    with pytest.raises(RuntimeError, match="already started"):
        dr.start()
    with pytest.raises(RuntimeError, match="has not started"):
        doctor.Doctor().step()


# ---- F11: out of memory ----

def fill(keep):
    keep.append(torch.zeros(MiB))  # <-- oom holder


@pytest.mark.parametrize("to_file", [False, True], ids=["in_message", "to_file"])
def test_an_out_of_memory_error_carries_the_doctors_report(tmp_path, to_file):
    torch.cpu.empty_cache()
    total = torch.cpu.mem_get_info()[1]
    path = tmp_path / "oom.txt"
    with doctor.watch(oom_report=path if to_file else None) as dr:
        keep = []
        try:
            torch.cpu.set_per_process_memory_fraction((torch.cpu.memory_reserved() + 64 * MiB) / total)
            with pytest.raises(torch.OutOfMemoryError) as info:
                for _ in range(100):
                    fill(keep)
        finally:
            torch._C._set_per_process_memory_limit(None, "cpu")
        filled = len(keep)
        del keep
        report = dr.last_oom_report
    message = str(info.value)
    del info
    assert message.startswith("CPU out of memory. Tried to allocate 20.00 MiB.")
    if to_file:
        assert message.endswith(f"\n\ngraft.doctor wrote its report to {path}\n" + report)
        assert path.read_text() == report
    else:
        assert message.endswith("\n\ngraft.doctor:\n" + report) and not path.exists()
    assert "Cause: the per-process cap." in report
    top = report.split("Top holders by creation line:\n")[1].splitlines()[0]
    assert top == f"  {4 * filled}.0 MiB in {filled} other storages made at {line_of('oom holder')}", report
    torch.cpu.empty_cache()


# ---- batches made by DataLoader workers ----

class _Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 32

    def __getitem__(self, i):  # <-- dataset line
        return torch.full((4,), float(i * i)), i


def test_batches_made_by_workers_name_the_dataset_or_the_loader_line():
    from graft.utils.data import DataLoader, TensorDataset
    with doctor.watch():
        for x, _ in DataLoader(_Squares(), batch_size=8, num_workers=2):
            assert torch._C._doctor_site_of(x)[0] == line_of("dataset line")
        tensors = TensorDataset(torch.randn(32, 4))
        loader = DataLoader(tensors, batch_size=8, num_workers=2)  # <-- loader line
        for (x,) in loader:
            assert torch._C._doctor_site_of(x)[0] == line_of("loader line")  # graft's dataset: the loader's line


# ---- creation lines: one walk of the frames per call, never a stale one ----

class _Twice(torch.nn.Module):
    def forward(self, x):
        return x.mul(2)


def test_a_model_called_from_two_lines_gets_each_line_every_time():
    # the two calls' forward frames take the same address in turn, and mul (an op of the generated
    # bindings) finds its line once per call: the line found for one call is not the next one's
    model, x = _Twice(), torch.randn(3)
    with doctor.watch():
        outs = []
        for _ in range(3):
            outs.append(model(x))  # <-- first call
            outs.append(model(x))  # <-- second call
            outs.append(x.exp() if len(outs) % 2 else x.sin())  # <-- own line
    lines = [torch._C._doctor_site_of(o)[0] for o in outs]
    assert lines == [line_of("first call"), line_of("second call"), line_of("own line")] * 3
