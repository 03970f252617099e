"""The leak hunt of `make demo`: examples/python/leak_hunt.py has four classic habits, and
`python -m graft.doctor` names each one (rule, holder, line) by step 5; leak_hunt_fixed.py
trains the same model to the same losses and is reported clean; and the leaky script runs
unchanged on PyTorch once its import line says `import torch` (the habits are PyTorch code)."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples", "python")


def doctor(script, tmp_path, *extra):
    out = subprocess.run([sys.executable, "-m", "graft.doctor", "--html", str(tmp_path / "report.html"), *extra,
                          os.path.join(EXAMPLES, script), "12"], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ))
    return out


def line_of(script, text):
    with open(os.path.join(EXAMPLES, script)) as f:
        for i, line in enumerate(f, 1):
            if text in line:
                return f"{script}:{i}"
    raise KeyError(text)


def test_the_doctor_names_every_habit_by_step_5(tmp_path):
    out = doctor("leak_hunt.py", tmp_path)
    assert out.returncode == 0, out.stderr
    found = dict(re.findall(r"^  (LD\d{3}) [a-z-]+ \(\w+\) at (\S+)(?: \(made at \S+\))?, reported at step 5$",
                            out.stdout, re.M))
    made = line_of("leak_hunt.py", "# 4. the hook keeps")
    assert re.search(rf"^  LD005 hook-capture \(leak\) at \S+ \(made at {made}\), reported at step 5$", out.stdout,
                     re.M), out.stdout
    assert found == {
        "LD001": line_of("leak_hunt.py", "# 1. the graph comes along"),
        "LD002": line_of("leak_hunt.py", "# 2. carried"),
        "LD003": line_of("leak_hunt.py", "# 3. under grad mode"),
        "LD005": line_of("leak_hunt.py", "seen.append(output))"),  # stored in the hook's body
    }, out.stdout
    for holder in ("held by running_loss", "held by context", "held by val_outputs[",
                   "held by probe._forward_hooks["):
        assert holder in out.stdout, out.stdout
    assert "[graft.doctor] step 12:" in out.stderr  # a progress line per step
    assert (tmp_path / "report.html").exists()


def test_the_fixed_script_is_clean_and_trains_the_same(tmp_path):
    leaky = doctor("leak_hunt.py", tmp_path)
    fixed = doctor("leak_hunt_fixed.py", tmp_path, "--fail-on-leak")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "No findings: nothing grows from step to step (allocated memory and live graphs were flat" in fixed.stdout
    losses = lambda out: re.findall(r"mean loss ([0-9.]+)", out.stdout)  # noqa: E731
    assert losses(fixed) == losses(leaky) and losses(fixed)


def test_the_leaky_script_is_pytorch_code(tmp_path):
    pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
    with open(os.path.join(EXAMPLES, "leak_hunt.py")) as f:
        source = f.read()
    assert source.count("import graft as torch\n") == 1
    script = tmp_path / "leak_hunt_torch.py"
    script.write_text(source.replace("import graft as torch\n", "import torch\n").replace(
        'os.path.join(here, "..", "..", "data"', f'os.path.join({ROOT!r}, "data"'))
    out = subprocess.run([sys.executable, str(script), "10"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "step 10: mean loss" in out.stdout
