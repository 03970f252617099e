"""examples/python/digits_cnn.py is a PyTorch training script that runs on graft by its import
line alone: it must train to >= 95% test accuracy on graft, and (when PyTorch is installed)
run unchanged on PyTorch once the import line says `import torch`."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "python", "digits_cnn.py")
CSV = os.path.join(ROOT, "data", "digits", "digits.csv")


def run(script, tmp_path):
    env = dict(os.environ)
    out = subprocess.run([sys.executable, script, CSV, str(tmp_path / "ckpt")], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    acc = float(re.search(r"test accuracy ([0-9.]+)%", out.stdout).group(1))
    assert "checkpoint written and resumed at epoch 6" in out.stdout
    return acc


def test_digits_script_trains_on_graft(tmp_path):
    assert run(SCRIPT, tmp_path) >= 95.0


def test_the_same_script_runs_on_pytorch(tmp_path):
    pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
    with open(SCRIPT) as f:
        source = f.read()
    assert source.count("import graft as torch\n") == 1
    torch_script = tmp_path / "digits_cnn_torch.py"
    torch_script.write_text(source.replace("import graft as torch\n", "import torch\n"))
    assert run(str(torch_script), tmp_path) >= 95.0
