"""`python -m graft.doctor script.py args...` (graft/doctor/__main__.py) run as a user runs it: a
subprocess on a small script written into tmp_path, with PYTHONPATH pointing at the graft
package under test. A leaking script is named by step 5 on stderr (progress line per step, then
the finding with its rule id, holder path and line); the HTML and JSON reports are written where
asked; the script sees its own arguments (even ones that look like the doctor's options) and its
exit status comes back; the fixed script reports "No findings"; --fail-on-leak exits with 3."""
import json
import os
import re
import signal
import subprocess
import sys

import pytest

import graft
import graft.doctor as doctor

_SCRIPT = '''\
import json, sys
import graft as torch
import graft.nn as nn
import graft.nn.functional as F

print("ARGV " + json.dumps(sys.argv))
steps = int(sys.argv[1])
torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 4), torch.randn(8, 1)
total = 0
for _ in range(steps):
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    total += {added}  # <-- accumulate
    opt.step()
if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[2] == "--exit":
    sys.exit({exit})
'''
_LINE = next(i for i, t in enumerate(_SCRIPT.splitlines(), 1) if t.endswith("# <-- accumulate"))
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(graft.__file__)))


def script(tmp_path, name="train.py", added="loss", exit="7"):
    path = tmp_path / name
    path.write_text(_SCRIPT.format(added=added, exit=exit))
    return path


def run_doctor(tmp_path, *argv):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([_PACKAGE_ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-m", "graft.doctor", *map(str, argv)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def script_argv(stdout):
    return json.loads(next(line[5:] for line in stdout.splitlines() if line.startswith("ARGV ")))


def test_a_leaking_script_is_named_by_step_5_and_its_reports_are_written(tmp_path):
    train = script(tmp_path)
    r = run_doctor(tmp_path, "--html", "out.html", "--json", "out.json", train, 8, "--html", "mine.html")
    assert r.returncode == 0, r.stderr
    err = r.stderr.splitlines()
    progress = [line for line in err if re.match(r"\[graft\.doctor\] step \d+: ", line)]
    # not a terminal: a line per step until the verdict is due (step 5) and one more, then at
    # powers of two, and the last step's
    assert [int(line.split()[2][:-1]) for line in progress] == [1, 2, 3, 4, 5, 6, 8]
    assert all(line.endswith("findings: none") for line in progress[:4]), progress
    assert all(line.endswith("findings: LD001") for line in progress[4:]), progress
    # the finding comes right after step 5's line, before step 6's
    at5 = err.index(progress[4])
    finding = err[at5 + 1:err.index(progress[5])]
    assert finding[0] == f"[graft.doctor] LD001 accumulated-loss (leak) at train.py:{_LINE}, reported at step 5"
    assert f"[graft.doctor]     held by total (made at train.py:{_LINE}, step 1)" in finding
    assert any("fix: accumulate loss.detach()" in line for line in finding), finding
    # the report on stdout after the script's own output
    assert "Findings (1):" in r.stdout and f"LD001 accumulated-loss (leak) at train.py:{_LINE}" in r.stdout
    assert r.stdout.index("ARGV ") < r.stdout.index("Findings (1):")
    # the script's argv is its own: '--html mine.html' went to it, not to the doctor
    argv = script_argv(r.stdout)
    assert argv[1:] == ["8", "--html", "mine.html"] and os.path.samefile(argv[0], train)
    assert not (tmp_path / "mine.html").exists() and not (tmp_path / "graft-doctor.html").exists()
    html = (tmp_path / "out.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "LD001" in html and "held by total" in html
    assert "graft.doctor: HTML report written to out.html" in err
    timeline = doctor.load_timeline(tmp_path / "out.json")
    assert timeline["session"]["steps"] == 8
    [f] = timeline["findings"]
    assert (f["id"], f["step"], f["line"]) == ("LD001", 5, f"train.py:{_LINE}")
    assert [h["path"] for h in f["holders"]] == ["total"]


def test_the_fixed_script_reports_no_findings(tmp_path):
    r = run_doctor(tmp_path, "--fail-on-leak", script(tmp_path, added="loss.detach()"), 8)
    assert r.returncode == 0, r.stderr
    assert "No findings" in r.stdout and "LD0" not in r.stdout
    progress = [line for line in r.stderr.splitlines() if line.startswith("[graft.doctor] step ")]
    assert len(progress) == 7 and all(line.endswith("findings: none") for line in progress)
    assert (tmp_path / "graft-doctor.html").exists()  # the default page, in the working directory


def test_fail_on_leak_exits_with_3_on_a_leak(tmp_path):
    r = run_doctor(tmp_path, "--fail-on-leak", "--quiet", script(tmp_path), 8)
    assert r.returncode == 3, r.stderr
    assert "[graft.doctor] step" not in r.stderr  # --quiet: no progress lines
    assert f"LD001 accumulated-loss (leak) at train.py:{_LINE}" in r.stdout


def test_the_scripts_exit_status_comes_back(tmp_path):
    # its own status wins over --fail-on-leak's 3
    r = run_doctor(tmp_path, "--quiet", "--fail-on-leak", script(tmp_path, exit="7"), 6, "--exit")
    assert r.returncode == 7, r.stderr
    assert "LD001" in r.stdout  # the report is still printed
    # sys.exit("message") prints the message and exits with 1, as under `python script.py`
    r = run_doctor(tmp_path, "--quiet", script(tmp_path, added="loss.detach()", exit="'bad input'"), 2, "--exit")
    assert r.returncode == 1 and "bad input" in r.stderr.splitlines(), r.stderr
    # an exception: its traceback, status 1, and the report of what was seen until then
    r = run_doctor(tmp_path, "--quiet", script(tmp_path, exit="1 / 0"), 6, "--exit")
    assert r.returncode == 1
    assert "ZeroDivisionError" in r.stderr and "LD001" in r.stdout


_TORCH_SCRIPT = """\
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
same_oom = torch.cuda.OutOfMemoryError is getattr(torch, "OutOfMemoryError", None)
print("TORCH", torch.__name__, nn.Linear.__module__.split(".")[0], same_oom)
torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8)
total = 0
for x, y in loader:
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    total += loss  # <-- accumulate
    opt.step()
{tail}
"""


def torch_script(tmp_path, tail=""):
    path = tmp_path / "train_torch.py"
    path.write_text(_TORCH_SCRIPT.format(tail=tail))
    return path


def test_an_unchanged_import_torch_script_runs_on_graft_and_is_watched(tmp_path):
    r = run_doctor(tmp_path, torch_script(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == (f"graft.doctor: `import torch` gives graft {graft.__version__} in this run "
                                        "(--no-redirect leaves it to PyTorch)")
    assert "TORCH graft graft True" in r.stdout
    line = next(i for i, t in enumerate(_TORCH_SCRIPT.splitlines(), 1) if t.endswith("# <-- accumulate"))
    assert f"LD001 accumulated-loss (leak) at train_torch.py:{line}, reported at step 5" in r.stdout
    assert "8 steps watched" in r.stdout


def test_no_redirect_says_the_script_ran_on_pytorch(tmp_path):
    torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
    r = run_doctor(tmp_path, "--no-redirect", torch_script(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "TORCH torch torch" in r.stdout
    assert "No step was watched, so there is no verdict" in r.stdout and "nothing grows" not in r.stdout
    assert (f"graft.doctor: this script ran on PyTorch {torch.__version__} (--no-redirect), which this run did not "
            "watch: 0 step(s) of graft were watched. Run it with --torch to watch it on PyTorch") in r.stderr


def test_a_part_of_pytorch_graft_lacks_is_named_with_the_steps_before_it(tmp_path):
    r = run_doctor(tmp_path, torch_script(tmp_path, tail="import torch.fx"))
    assert r.returncode == 1
    assert "ModuleNotFoundError: No module named 'torch.fx'" in r.stderr
    out = r.stdout.splitlines()
    assert out[out.index("graft.doctor: 8 steps watched (tier sites, warm-up 2, confirmation 3)") + 2] == (
        "The program stopped with an error in step 9: ModuleNotFoundError: No module named 'torch.fx'.")
    assert "LD001" in r.stdout
    assert "graft.doctor: the script stopped at a part of PyTorch that graft does not have (No module named " \
           "'torch.fx'); the steps before it were watched." in r.stderr


_MARKED = """\
import graft as torch
import graft.doctor
import graft.nn.functional as F
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 4), torch.randn(8, 1)
total = 0
with graft.doctor.watch() as dr:
    for _ in range(8):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        total += loss
        opt.step()
graft.doctor.step()  # nothing watches here under plain python: a no-op
print("JOINED", dr.steps, dr.watching)
"""


def test_a_watch_inside_the_script_joins_the_command_lines_session(tmp_path):
    path = tmp_path / "marked.py"
    path.write_text(_MARKED)
    plain = subprocess.run([sys.executable, str(path)], env=dict(os.environ, PYTHONPATH=_PACKAGE_ROOT),
                           capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0 and "JOINED 8 False" in plain.stdout, plain.stderr
    # under the command line the block uses the command line's session, which goes on watching
    r = run_doctor(tmp_path, path)
    assert r.returncode == 0, r.stderr
    assert "JOINED 9 True" in r.stdout and "LD001" in r.stdout and "9 steps watched" in r.stdout


def test_ctrl_c_reports_and_dies_of_sigint_as_python_does(tmp_path):
    r = run_doctor(tmp_path, "--quiet", torch_script(tmp_path, tail="raise KeyboardInterrupt"))
    assert r.returncode == -signal.SIGINT, (r.returncode, r.stderr)
    assert "KeyboardInterrupt" in r.stderr and "The program stopped with an error in step 9: KeyboardInterrupt." in \
        r.stdout and "LD001" in r.stdout


def test_on_a_terminal_the_progress_is_one_updating_line(tmp_path):
    import pty
    leader, follower = pty.openpty()
    env = dict(os.environ, PYTHONPATH=_PACKAGE_ROOT, PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.Popen([sys.executable, "-m", "graft.doctor", str(script(tmp_path)), "8"], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    err = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed
            break
        if not chunk:
            break
        err += chunk
    p.wait(timeout=300)
    os.close(leader)
    err = err.decode()
    assert p.returncode == 0, err
    body = err.split("\n", 1)[1]  # after the redirect's announcement
    # each step redraws the same line; the finding is printed once, above it
    lines = body.split("\r\n")  # the terminal's newlines
    # steps 1..4 and 6..8 redraw the line in place; step 5 first prints the finding above it
    assert lines[0].count("\r\x1b[K[graft.doctor] step ") == 4
    assert lines[0].startswith("\r\x1b[K[graft.doctor] step 1: ")
    assert lines[0].endswith("\r\x1b[K[graft.doctor] LD001 accumulated-loss (leak) at train.py:"
                             f"{_LINE}, reported at step 5")
    assert body.count("LD001 accumulated-loss (leak)") == 1
    last = next(ln for ln in lines if ln.startswith("[graft.doctor] step 5: "))
    assert last.count("\r\x1b[K[graft.doctor] step ") == 3
    assert re.search(r"\r\x1b\[K\[graft\.doctor\] step 8: 42 graph nodes, [^|]+ \| findings: LD001$", last), last
