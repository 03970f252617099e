"""The measured bar: the public PyTorch programs shipped under tests/programs/ run unchanged on
graft and track PyTorch's losses (tests/programs/run.py does the work; its docstring states the
comparison and the tolerances). A program that stops at a part of PyTorch graft does not have
yet is an xfail whose reason names that part, so the bar stays visible; it turns into an XPASS
the day graft has the part. Also: the shipped files are upstream's byte for byte, and the
coverage table in docs/python.md is what tools/coverage_table.py generates now (when PyTorch is
importable, and is the version the table was made from)."""
import importlib.util
import os
import subprocess
import sys

import pytest

import graft

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRAFT_PATH = os.path.dirname(os.path.dirname(os.path.abspath(graft.__file__)))


def _load_bar():
    spec = importlib.util.spec_from_file_location("graft_programs_bar", os.path.join(ROOT, "tests", "programs",
                                                                                     "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bar = _load_bar()
_torch_python = []


def torch_python():
    """The interpreter that runs the programs on PyTorch, or None (looked for once)."""
    if not _torch_python:
        _torch_python.append(bar.find_torch_python())
    return _torch_python[0]


def _cases():
    cases = []
    for program in bar.PROGRAMS:
        expected = bar.expected_on_graft(program, graft=graft)
        marks = [pytest.mark.xfail(reason=expected, strict=False)] if expected else []
        cases.append(pytest.param(program, expected, id=program.name, marks=marks))
    return cases


def test_shipped_programs_are_upstreams_files():
    assert bar.changed_files() == []


@pytest.mark.parametrize("program,expected", _cases())
def test_program(program, expected):
    result = bar.check(program, GRAFT_PATH, torch_python(), expected=expected, always_torch=False)
    details = bar.table([result])
    if not result.graft_run.ok:
        details += "\n--- graft's output (end) ---\n" + result.graft_run.output[-3000:]
    assert result.passed, details


def test_coverage_table_is_up_to_date():
    done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "coverage_table.py"), "--check",
                           "--graft", GRAFT_PATH], capture_output=True, text=True, timeout=300)
    if done.returncode == 3:
        pytest.skip(done.stdout.strip())
    assert done.returncode == 0, done.stdout + done.stderr
