"""graft.doctor on PyTorch itself (``watch(backend="torch")``, ``python -m graft.doctor --torch``):
the fixtures of doctor_fixtures.py, run on PyTorch, give the findings they give on graft (rule,
step reported, line, the first holder's root), with the differences PyTorch's missing records
make (docs/doctor.md, "On PyTorch itself"); the command line watches an unchanged `import torch`
script; a walk of the live tensors holds nothing after a step."""
import gc
import inspect
import os
import warnings

import pytest

import graft.doctor as doctor
from graft import _as_torch

import doctor_fixtures as fx
from test_doctor_cli import run_doctor  # (the command line as a user runs it, in a subprocess)

torch = pytest.importorskip("torch")  # Debian's python3-torch (make test installs it)
if not _as_torch.is_real_torch(torch):
    pytest.skip("`import torch` gives graft in this process", allow_module_level=True)

on_torch = fx.on_torch()


def findings(fixtures, name, backend, steps=10, **kwargs):
    fn = getattr(fixtures, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_graph=True: both frameworks warn as PyTorch does
        with doctor.watch(backend=backend) as dr:
            if "dr" in inspect.signature(fn).parameters:
                fn(dr, steps, **kwargs)
            else:
                fn(steps, **kwargs)
    return dr


def summary(dr):
    return [(f.id, f.step, f.line, f.holders[0].path.split(".")[0].split("[")[0] if f.holders else "")
            for f in dr.findings]


# every fixture whose findings PyTorch's records are enough for, leaking and fixed
SAME = [("running_total", {}), ("running_total", {"fixed": True}), ("losses_list", {}),
        ("losses_list", {"fixed": True}), ("carried_state", {}), ("carried_state", {"fixed": True}),
        ("eval_outputs_kept", {}), ("eval_outputs_kept", {"fixed": True}), ("hook_capture", {}),
        ("hook_capture", {"fixed": True}), ("cycle_held", {"fixed": True}), ("detached_every", {}),
        ("no_zero_grad", {}), ("no_zero_grad", {"fixed": True}), ("gradient_accumulation", {}),
        ("retain_unused", {"fixed": True}), ("gradient_penalty", {}), ("eval_under_grad", {"fixed": True}),
        ("fast_weights_kept", {}), ("intermediate_kept", {}), ("ctx_keeps_previous", {}),
        ("ctx_keeps_previous", {"fixed": True}), ("gan", {}), ("gan", {"fixed": False}), ("gan", {"leak": True}),
        ("kept_predictions", {}), ("kept_predictions", {"keep": "number"}), ("kept_predictions", {"keep": "window"}),
        ("manual_sgd", {}), ("manual_sgd", {"leak": True}), ("raw_tensors", {}), ("raw_tensors", {"leak": True})]


@pytest.mark.parametrize("name,kwargs", SAME, ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'leak'}"
                                                    for n, kw in SAME])
def test_a_fixture_gives_the_same_findings_on_pytorch_as_on_graft(name, kwargs):
    on_graft = findings(fx, name, "graft", **kwargs)
    on_pytorch = findings(on_torch, name, "torch", **kwargs)
    assert on_pytorch.steps == on_graft.steps
    assert summary(on_pytorch) == summary(on_graft), on_pytorch.report()


def test_create_graph_grads_are_ld004_without_a_line_on_pytorch():
    # the finding's line is the node's creation line on graft; PyTorch records none, and the
    # holder (the parameter) has no stored-at line: .grad is written by backward
    dr = findings(on_torch, "create_graph_grads", "torch")
    assert [(f.id, f.step) for f in dr.findings] == [("LD004", 5)]
    assert any(h.path.startswith("model.") and h.path.endswith(".grad") for h in dr.findings[0].holders)
    assert findings(on_torch, "create_graph_grads", "torch", fixed=True, steps=12).findings == []


def test_reference_cycles_are_ld006_on_pytorch():
    dr = findings(on_torch, "cycle_held", "torch")
    assert [f.id for f in dr.findings] == ["LD006"]
    assert dr.findings[0].step <= 6 and dr.findings[0].holders[0].path == "a _Cache object.me (a reference cycle)"


def test_the_report_names_pytorch_and_its_live_storages():
    dr = findings(on_torch, "kept_predictions", "torch", steps=8)
    text = dr.report()
    assert text.startswith(f"graft.doctor: 8 steps watched on torch {torch.__version__.split('+')[0]} ")
    assert "LD011 tensor-growth (growth) at " + fx.line_of("LD011 stored") in text
    assert "Live tensor storages at step" in text
    assert "peaked at" not in text  # PyTorch records no storage events: no peak within a step
    page = dr.render(format="html")
    assert "LD011" in page and "<svg" in page


def test_live_graphs_on_pytorch_have_holders_and_keep_nothing_alive():
    model = torch.nn.Linear(4, 1)
    kept = []
    with doctor.watch(backend="torch") as dr:
        for _ in range(3):
            kept.append(model(torch.randn(2, 4)).sum())
            dr.step()
        graphs = dr.live_graphs()
    assert sorted(g["newest_step"] for g in graphs) == [1, 2, 3]
    assert {h.path for g in graphs for h in g["holders"]} == {"kept[0]", "kept[1]", "kept[2]"}
    assert dr.report() and dr.verdict  # (each walks the live graphs again)
    # the doctor's walk of every live tensor was released: the last one dies with its last reference
    last = kept.pop()
    ref = __import__("weakref").ref(last)
    del last, graphs
    gc.collect()
    assert ref() is None


def test_the_hooks_on_pytorch_are_removed_when_the_session_stops():
    before = (torch.autograd.backward, torch.optim.SGD.step, torch.optim.Optimizer.zero_grad,
              torch.nn.Module.zero_grad, torch.optim.Optimizer.__init__)
    with doctor.watch(backend="torch"):
        assert torch.autograd.backward is not before[0]
    assert (torch.autograd.backward, torch.optim.SGD.step, torch.optim.Optimizer.zero_grad,
            torch.nn.Module.zero_grad, torch.optim.Optimizer.__init__) == before


class _SubclassedSGD(torch.optim.SGD):
    """An optimizer class without a step of its own: PyTorch puts its profiling wrapper (around the
    doctor's, during a session) into this class when the first one is made."""


def test_optimizer_steps_are_seen_session_after_session_of_a_subclass_made_while_watching():
    model = torch.nn.Linear(2, 1)
    for _ in range(3):
        with doctor.watch(backend="torch") as dr:
            opt = _SubclassedSGD(model.parameters(), lr=0.1)
            for _ in range(3):
                opt.zero_grad()
                model(torch.randn(4, 2)).sum().backward()
                opt.step()
        assert dr.steps == 3
    assert "step" not in vars(_SubclassedSGD) or not any(
        getattr(f, "__module__", "").startswith("graft") for f in _chain(vars(_SubclassedSGD)["step"]))


def _chain(f):
    while f is not None:
        yield f
        f = getattr(f, "__wrapped__", None)


def test_an_unknown_backend_is_a_value_error():
    with pytest.raises(ValueError, match="backend must be 'graft' or 'torch'"):
        doctor.watch(backend="jax")


_SCRIPT = '''\
import torch
import torch.nn.functional as F

torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 4), torch.randn(8, 1)
total = 0
for _ in range(8):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    total += loss  # <-- accumulate
    opt.step()
print("RAN ON", torch.__name__, type(total).__module__)
'''


def test_the_command_line_watches_an_unchanged_script_on_pytorch(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(_SCRIPT)
    r = run_doctor(tmp_path, "--torch", "--html", "page.html", "train.py")
    assert r.returncode == 0, r.stderr
    assert "RAN ON torch torch" in r.stdout
    assert "watched on torch" in r.stdout
    assert "LD001 accumulated-loss (leak) at train.py:13" in r.stdout
    assert "held by total (stored at train.py:13" in r.stdout
    assert "gives graft" not in r.stderr  # no redirect
    assert (tmp_path / "page.html").read_text().count("LD001") >= 1


def _finding_titles(stdout):
    return sorted(line.strip().split(", reported")[0] for line in stdout.splitlines() if line.startswith("  LD"))


def test_the_leak_hunt_example_on_pytorch_names_the_habits_it_names_on_graft(tmp_path):
    # the example with its import line made `import torch` (as its docstring says), beside the data it reads
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    source = open(os.path.join(repo, "examples", "python", "leak_hunt.py"), encoding="utf-8").read()
    (tmp_path / "examples" / "python").mkdir(parents=True)
    (tmp_path / "examples" / "python" / "leak_hunt.py").write_text(
        source.replace("import graft as torch\n", "import torch\n", 1))
    (tmp_path / "data").symlink_to(os.path.join(repo, "data"))
    runs = {}
    for flags, script in ((["--torch"], tmp_path / "examples" / "python" / "leak_hunt.py"),
                          ([], os.path.join(repo, "examples", "python", "leak_hunt.py"))):
        r = run_doctor(tmp_path, "--quiet", "--html", tmp_path / "page.html", *flags, script, "12")
        assert r.returncode == 0, r.stderr
        runs[bool(flags)] = _finding_titles(r.stdout)
    assert runs[True] == runs[False]
    assert [t.split()[0] for t in runs[True]] == ["LD001", "LD002", "LD003", "LD005"]


def test_kept_graphs_count_their_saved_activations_after_the_optimizer_changed_a_saved_weight():
    # reading a slot whose tensor an optimizer changed in place raises too: that slot is skipped,
    # the node is not taken for one a backward freed
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    kept = []
    with doctor.watch(backend="torch") as dr:
        for _ in range(6):
            opt.zero_grad()
            model(torch.randn(4, 8)).sum().backward()
            kept.append(model(torch.randn(16, 8)))  # outputs kept under grad mode (LD003)
            opt.step()
        graphs = dr.live_graphs()
    assert [f.id for f in dr.findings] == ["LD003"]
    assert dr.findings[0].saved_bytes > 0
    assert all(g["saved_bytes"] >= 16 * 8 * 4 for g in graphs)  # each keeps its tanh's output at least
    del kept, graphs


def test_a_checkpointed_model_trains_under_the_doctor_and_its_slots_are_not_unpacked():
    from torch.utils.checkpoint import checkpoint
    torch.manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh())
    head = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(list(block.parameters()) + list(head.parameters()), lr=0.1)
    calls = []
    block.register_forward_hook(lambda m, i, o: calls.append(1))
    x = torch.randn(4, 8)
    with doctor.watch(backend="torch") as dr:
        for _ in range(6):
            opt.zero_grad()
            out = head(checkpoint(block, x, use_reentrant=False))
            before = len(calls)
            dr.live_graphs()  # a walk while the checkpointed graph is alive and not yet backpropagated
            assert len(calls) == before  # the walk did not run the recomputation
            out.sum().backward()
            opt.step()
    assert dr.steps == 6 and dr.findings == []


def test_gradients_zeroed_by_hand_are_not_ld008():
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with doctor.watch(backend="torch") as dr:
        for _ in range(8):
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.zero_()
            model(torch.randn(8, 4)).sum().backward()
            opt.step()
    assert dr.findings == []


def test_the_timeline_keeps_nothing_alive():
    model = torch.nn.Linear(4, 1)
    with doctor.watch(backend="torch") as dr:
        out = model(torch.randn(2, 4)).sum()
        dr.step()
        assert dr.timeline()["steps"]
    ref = __import__("weakref").ref(out)
    del out
    gc.collect()
    assert ref() is None


def test_the_doctor_keeps_no_graph_of_a_past_step_alive():
    # (the first step's loss is alive when the doctor freezes what lives at step 1, and is found later
    # through a weak reference: touching it as PyTorch's weak-reference warning asks, with
    # _fix_weakref(), kept its graph alive for good on 1.13: 100 stale nodes at every step). The doctor
    # freezes only when nothing is frozen, and pytest froze objects: they are unfrozen for this test
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    try:
        dr = _train_an_lstm_from_a_corpus()
    finally:
        if frozen:
            gc.freeze()
    assert [s["stale_nodes"] for s in dr.timeline()["steps"]] == [0] * 6


def _train_an_lstm_from_a_corpus():
    with doctor.watch(backend="torch") as dr:
        ids = torch.randint(0, 20, (5000,))
        emb, model, head = torch.nn.Embedding(20, 8), torch.nn.LSTM(8, 16, batch_first=True), torch.nn.Linear(16, 20)
        opt = torch.optim.SGD(list(emb.parameters()) + list(model.parameters()) + list(head.parameters()), lr=0.1)

        def step():
            starts = torch.randint(0, 4000, (4,)).tolist()
            x, y = torch.stack([ids[s:s + 6] for s in starts]), torch.stack([ids[s + 1:s + 7] for s in starts])
            opt.zero_grad()
            out, _ = model(emb(x))
            loss = torch.nn.functional.cross_entropy(head(out).reshape(-1, 20), y.reshape(-1))
            loss.backward()
            opt.step()
            return loss.detach().item()

        for _ in range(6):
            step()
    return dr
