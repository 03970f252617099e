"""python3 tests/programs/run.py [options]: the measured bar.

Runs the public PyTorch programs shipped under tests/programs/ (provenance and licences:
tests/programs/README.md), each unchanged, for a few seconds on small bundled data: on graft
(``import torch`` redirected to graft by graft._as_torch, see launch.py) and, when an
interpreter can import PyTorch, on PyTorch. It parses the losses each program prints in its own
log lines and compares the two runs:

- both finish (exit status 0), or stop where the program is known to stop on that backend;
- every loss is finite, and the run learns: the mean of its last three logged losses is below
  its first logged loss (a program that logs one value must meet its own threshold instead);
- graft's trajectory tracks PyTorch's. The two libraries draw different random numbers for the
  same seed (graft's generator is not PyTorch's), so the weights, batches and dropout masks
  differ and no step's loss can be compared tightly. What a different draw does not change is
  the level: the first loss (the untrained model, about log(vocabulary) for a language model)
  and the level reached after the same number of steps (the mean of the last three logged
  losses). Each is compared as a relative difference against a tolerance that is the spread of
  the libraries against themselves: ``--calibrate N`` runs each seedable program with seeds
  1..N on both and prints the largest relative difference between two seeds; a tolerance is
  twice the larger of the two spreads, at least 5%, rounded up to 5% (``tol_first`` /
  ``tol_level`` below; the measured spreads are in tests/programs/README.md).

A table follows: program, status on graft and on PyTorch, first and last loss of each, and the
verdict. The exit status is 1 if a program that should pass on graft fails (or does not track
PyTorch), 0 otherwise; programs that stop at a part of PyTorch graft does not have yet are
reported with that part ("xfail") and do not fail the bar.
"""
import argparse
import array
import concurrent.futures
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")
LAUNCH = os.path.join(HERE, "launch.py")
TIMEOUT_S = 180

# Where each shipped file comes from: the folder under tests/programs/ -> (repository, commit); the file's path
# there is its path under the folder. SOURCES holds each file's git blob id (`git rev-parse <commit>:<path>`):
# test_programs.py checks that the shipped files are byte for byte those of upstream.
REPOSITORIES = {
    "makemore": ("karpathy/makemore", "988aa59e4d8fefa526d06f3b453ad116258398d4"),
    "nanogpt": ("karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291"),
    "mingpt": ("karpathy/minGPT", "37baab71b9abea1b76ab957409a1cc2fbfba8a26"),
    "pytorch_examples": ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8"),
}
SOURCES = {
    "makemore/makemore.py": "db0fe4c1e071b05573f9bd73040e9a29410cb3db",
    "makemore/LICENSE": "329db5e33310fd5d98343e2bca690bfb07317526",
    "nanogpt/train.py": "de5785051050d64bbda37a4964c2c079f0739b2b",
    "nanogpt/model.py": "c698f8b60129d793494de058b0dd4e318c0dcb5e",
    "nanogpt/configurator.py": "a8bba9599537cbb34b378399a077b525a87d497f",
    "nanogpt/LICENSE": "329db5e33310fd5d98343e2bca690bfb07317526",
    "mingpt/mingpt/__init__.py": "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
    "mingpt/mingpt/model.py": "83ee22dc07707fd9cb62eb3215c1c1e4b150b5c9",
    "mingpt/mingpt/trainer.py": "c0d085210a8f438bbea28be5e103c67e39fd0be9",
    "mingpt/mingpt/utils.py": "af864ecbd61b73659731b2cc762802fce097a981",
    "mingpt/projects/chargpt/chargpt.py": "5de925b06f4d6062a289cb24fe945e0f8a2119db",
    "mingpt/projects/adder/adder.py": "55f03ee1caf4290e86f5ce02570553a87caeee23",
    "mingpt/LICENSE": "3d89960112452062baf36bb13d43a92028fc0f0e",
    "pytorch_examples/LICENSE": "1ba2484d4697a92afd0bf6be291eca930315534c",
    "pytorch_examples/regression/main.py": "cb41ad70eca2387eff4535a85f791b10726c2d25",
    "pytorch_examples/time_sequence_prediction/train.py": "2ccc85dc5a8f340c632bfa307e7b049d9fc2286e",
    "pytorch_examples/time_sequence_prediction/generate_sine_wave.py": "2b6cdf0f46986ea6207bb04b3d7b6ba6e1bea403",
    "pytorch_examples/word_language_model/main.py": "581b17cecd7d8008387c89f8e4b708dd33d88d01",
    "pytorch_examples/word_language_model/data.py": "a2f2249382b9eb094bb55c931ea68220e9a384fc",
    "pytorch_examples/word_language_model/model.py": "94d773bd1e931f48d6e4cd82916e26987f2f096c",
    "pytorch_examples/cpp/autograd/autograd.cpp": "2ef3c4dfcc38534494e9cc99ddc0d1178ef6a088",
    "pytorch_examples/cpp/regression/regression.cpp": "6a0eef8a682b9e0abd8d2a13374acd55b8eca411",
    "pytorch_examples/cpp/mnist/mnist.cpp": "d353c4f02186c235539b840101203a7d1aaa3394",
}


def blob_id(path):
    """The git blob id of the file at `path` (what `git hash-object` prints)."""
    import hashlib
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def changed_files():
    """The shipped files that are not byte for byte upstream's (or are missing)."""
    return [path for path, blob in SOURCES.items()
            if not os.path.exists(os.path.join(HERE, path)) or blob_id(os.path.join(HERE, path)) != blob]


# ---------------------------------------------------------------------------------------------
# data preparation: each writes the program's data source into its working copy


def prepare_nanogpt(work, backend, python, env):
    """nanoGPT's data/shakespeare_char/prepare.py, minus its download: the bundled excerpt of
    tiny shakespeare to train.bin / val.bin (uint16 character ids, 90/10) and meta.pkl."""
    with open(os.path.join(DATA, "tinyshakespeare.txt")) as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    out = os.path.join(work, "data", "shakespeare_char")
    os.makedirs(out, exist_ok=True)
    n = len(text)
    for name, part in (("train.bin", text[:int(n * 0.9)]), ("val.bin", text[int(n * 0.9):])):
        ids = array.array("H", (stoi[c] for c in part))
        if sys.byteorder != "little":
            ids.byteswap()
        with open(os.path.join(out, name), "wb") as f:
            ids.tofile(f)
    with open(os.path.join(out, "meta.pkl"), "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": itos, "stoi": stoi}, f)


def prepare_chargpt(work, backend, python, env):
    """minGPT's chargpt reads input.txt from its working directory: the tiny shakespeare excerpt."""
    shutil.copy(os.path.join(DATA, "tinyshakespeare.txt"), os.path.join(work, "projects", "chargpt", "input.txt"))


def prepare_wikitext_like(work, backend, python, env):
    """word_language_model's --data directory (train/valid/test.txt): the tiny shakespeare
    excerpt's lines split 80/10/10 in order, in place of wikitext-2."""
    with open(os.path.join(DATA, "tinyshakespeare.txt")) as f:
        lines = f.read().splitlines(True)
    out = os.path.join(work, "shakespeare")
    os.makedirs(out)
    n = len(lines)
    for name, part in (("train.txt", lines[:int(n * 0.8)]), ("valid.txt", lines[int(n * 0.8):int(n * 0.9)]),
                       ("test.txt", lines[int(n * 0.9):])):
        with open(os.path.join(out, name), "w") as f:
            f.writelines(part)


def prepare_sine_wave(work, backend, python, env):
    """time_sequence_prediction's traindata.pt, written by the example's own generate_sine_wave.py
    (seed 2) on the same backend, with 10 waves of 200 points instead of 100 of 1000 (the only
    change: the two constants, so that a step of LBFGS takes a second, not half a minute)."""
    with open(os.path.join(work, "generate_sine_wave.py")) as f:
        source = f.read()
    small = source.replace("\nL = 1000\n", "\nL = 200\n").replace("\nN = 100\n", "\nN = 10\n")
    if small.count("\nL = 200\n") != 1 or small.count("\nN = 10\n") != 1:
        raise RuntimeError("generate_sine_wave.py changed upstream: its L = 1000 / N = 100 lines are not there")
    script = os.path.join(work, "generate_sine_wave_small.py")
    with open(script, "w") as f:
        f.write(small)
    done = subprocess.run([python, LAUNCH, backend, script], cwd=work, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"generate_sine_wave.py failed on {backend}:\n{done.stderr[-2000:]}")


# ---------------------------------------------------------------------------------------------
# the programs


class Program:
    """One run of a shipped program: where it is, how it is called, what it logs."""

    def __init__(self, name, root, script, args, loss_re, cwd=".", prepare=None, pythonpath=(), seed_args=None,
                 graft_requires=(), graft_known=None, torch_known=None, tol_first=0.1, tol_level=0.1,
                 max_final=None, graft_then=None):
        self.name = name
        self.root = root                      # folder under tests/programs/ copied to a scratch directory
        self.script = script                  # relative to the copy
        self.args = list(args)
        self.loss_re = re.compile(loss_re, re.M)  # group "loss": the training losses it logs
        self.cwd = cwd                        # relative to the copy
        self.prepare = prepare
        self.pythonpath = list(pythonpath)    # relative to the copy (a package the program installs)
        self.seed_args = seed_args            # seed -> arguments (for --calibrate)
        self.graft_requires = tuple(graft_requires)  # torch.<name>s graft must have for the run to pass
        self.graft_known = graft_known        # a reason graft stops that is not a missing name
        self.torch_known = torch_known        # (text in PyTorch 1.13's error, why) where 1.13 stops early
        self.tol_first = tol_first            # relative tolerance, graft vs torch, first loss
        self.tol_level = tol_level            # the same, mean of the last 3 losses (None: not compared)
        self.max_final = max_final            # a program that logs one loss: the value it must reach
        self.graft_then = graft_then          # what the run uses the missing names for, where it helps


def _makemore(kind, tol_first, tol_level):
    return Program(
        f"makemore-{kind}", "makemore", "makemore.py",
        ["-i", "names.txt", "-o", "out", "--type", kind, "--max-steps", "201", "--num-workers", "0",
         "--n-layer", "2", "--n-embd", "32", "--n-embd2", "32", "--batch-size", "32", "--learning-rate", "5e-3"],
        r"^step \d+ \| loss (?P<loss>\S+) \|", seed_args=lambda s: ["--seed", str(s)],
        tol_first=tol_first, tol_level=tol_level)


def _wlm(model, tol_first, tol_level):
    return Program(
        f"word_language_model-{model}", "pytorch_examples/word_language_model", "main.py",
        ["--data", "shakespeare", "--model", model, "--epochs", "2", "--emsize", "32", "--nhid", "32",
         "--nlayers", "1", "--nhead", "2", "--bptt", "20", "--batch_size", "10", "--log-interval", "5",
         "--lr", "5", "--dropout", "0.1", "--save", "model.pt"],
        r"^\| epoch .*\| loss\s+(?P<loss>\S+) \|", prepare=prepare_wikitext_like,
        seed_args=lambda s: ["--seed", str(s)],
        graft_requires=["torch.nn.Transformer", "torch.serialization.safe_globals"],
        torch_known=("torch.serialization' has no attribute 'safe_globals'",
                     "reloads its best model with torch.serialization.safe_globals (2.x); "
                     "the losses before it are compared"),
        tol_first=tol_first, tol_level=tol_level)


PROGRAMS = [
    _makemore("transformer", 0.10, 0.20),
    _makemore("bigram", 0.05, 0.05),
    _makemore("mlp", 0.10, 0.15),
    _makemore("rnn", 0.05, 0.20),
    _makemore("gru", 0.05, 0.10),
    _makemore("bow", 0.25, 0.10),
    Program(
        "nanoGPT-shakespeare_char", "nanogpt", "train.py",
        ["--device=cpu", "--compile=False", "--dtype=float32", "--dataset=shakespeare_char", "--out_dir=out",
         "--eval_iters=5", "--eval_interval=100", "--log_interval=10", "--always_save_checkpoint=False",
         "--block_size=32", "--batch_size=16", "--n_layer=2", "--n_head=2", "--n_embd=32", "--dropout=0.0",
         "--gradient_accumulation_steps=1", "--learning_rate=3e-3", "--max_iters=100", "--lr_decay_iters=100",
         "--warmup_iters=10", "--min_lr=3e-4"],
        r"^iter \d+: loss (?P<loss>\S+),", prepare=prepare_nanogpt,
        graft_requires=["torch.distributed", "torch.bfloat16", "torch.float16", "torch.cuda.amp.GradScaler"],
        graft_then="train.py imports init_process_group from torch.distributed, names the 16-bit dtypes in a dict "
                   "and makes a torch.cuda.amp.GradScaler(enabled=False)",
        tol_first=0.05, tol_level=0.20),  # seed fixed (1337): spreads measured with the seed line edited
    Program(
        "minGPT-chargpt", "mingpt", "projects/chargpt/chargpt.py",
        ["--model.model_type=gpt-nano", "--data.block_size=32", "--trainer.batch_size=16",
         "--trainer.num_workers=0", "--trainer.max_iters=101", "--trainer.device=cpu", "--system.work_dir=out",
         "--trainer.learning_rate=2e-3"],
        r"^iter_dt .*; iter \d+: train loss (?P<loss>\S+)$", cwd="projects/chargpt", prepare=prepare_chargpt,
        pythonpath=["."], seed_args=lambda s: [f"--system.seed={s}"], tol_first=0.05, tol_level=0.10),
    Program(
        "minGPT-adder", "mingpt", "projects/adder/adder.py",
        ["--data.ndigit=1", "--trainer.batch_size=32", "--trainer.num_workers=0", "--trainer.max_iters=301",
         "--trainer.device=cpu", "--system.work_dir=out"],
        r"^iter_dt .*; iter \d+: train loss (?P<loss>\S+)$", cwd="projects/adder", pythonpath=["."],
        seed_args=lambda s: [f"--system.seed={s}"], graft_requires=["torch.Generator"],
        graft_then="AdditionDataset splits with torch.randperm(n, generator=torch.Generator())",
        tol_first=0.10, tol_level=0.55),  # a batch of 32 sums: its loss jumps from batch to batch
    Program(
        "examples-regression", "pytorch_examples/regression", "main.py", [],
        r"^Loss: (?P<loss>\S+) after \d+ batches", max_final=1e-3),
    Program(
        "examples-time_sequence_prediction", "pytorch_examples/time_sequence_prediction", "train.py",
        ["--steps", "2"], r"^loss: (?P<loss>\S+)$", prepare=prepare_sine_wave,
        graft_known="torch.load('traindata.pt') refuses the NumPy array generate_sine_wave.py saved: graft's "
                    "weights_only=True default is PyTorch 2.6's, which refuses it too "
                    "(numpy.core.multiarray._reconstruct is not an allowed global)",
        tol_first=0.05, tol_level=None),  # LBFGS's level after 2 steps: a factor 3 between PyTorch's seeds
    _wlm("LSTM", 0.05, 0.05),
    _wlm("Transformer", 0.10, 0.15),
]


# ---------------------------------------------------------------------------------------------
# running and comparing


def missing_names(graft, requires):
    """Those of `requires` (torch.<name> dotted names, in the order a program meets them) that
    the imported `graft` module does not have as attribute or submodule."""
    import importlib
    missing = []
    for dotted in requires:
        obj = graft
        parts = dotted.split(".")[1:]
        for i, part in enumerate(parts):
            try:
                if hasattr(obj, part):
                    obj = getattr(obj, part)
                    continue
                obj = importlib.import_module("graft." + ".".join(parts[:i + 1]))
            except Exception:
                missing.append(dotted)
                break
    return missing


def graft_lacks(requires, graft_path):
    """missing_names() for the graft at `graft_path`, asked in a subprocess so that the caller's
    graft (if any) is not touched."""
    if not requires:
        return []
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import run; import graft; "
            "print(' '.join(run.missing_names(graft, sys.argv[2:])))")
    env = dict(os.environ, PYTHONPATH=graft_path, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", code, HERE, *requires], env=env, capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"cannot import graft from {graft_path}:\n{done.stderr[-2000:]}")
    return done.stdout.split()


def expected_on_graft(program, graft_path=None, graft=None):
    """None when `program` should run on graft; else why it stops there (the missing name).
    Asks the imported module `graft` when given, else the graft at `graft_path` (a subprocess)."""
    if graft is not None:
        missing = missing_names(graft, program.graft_requires)
    else:
        missing = graft_lacks(program.graft_requires, graft_path)
    if missing:
        then = f" (then {', '.join(missing[1:])})" if len(missing) > 1 else ""
        use = f"; {program.graft_then}" if program.graft_then else ""
        return f"graft has no {missing[0]}{then}{use}"
    return program.graft_known


def find_torch_python(candidates=None):
    """The first interpreter of `candidates` that imports PyTorch (not graft), or None."""
    for python in candidates or [sys.executable, "/usr/bin/python3"]:
        if not python or not os.path.exists(python):
            continue
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        try:
            done = subprocess.run([python, "-c", "import torch; print(torch.__version__, torch.__file__)"], env=env,
                                  capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0 and "graft" not in done.stdout:
            return python
    return None


def _last_error(stderr):
    """The last line of a traceback (the exception), or the last line of stderr."""
    stderr = re.sub(r"\x1b\[[0-9;]*m", "", stderr)
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b", line):
            return line.strip()
    return lines[-1].strip() if lines else ""


class Run:
    """One program on one backend: exit status, losses, time, the error it stopped with."""

    def __init__(self, backend, status, losses, seconds, error="", output=""):
        self.backend, self.status, self.losses, self.seconds = backend, status, losses, seconds
        self.error, self.output = error, output

    @property
    def ok(self):
        return self.status == 0

    def first(self):
        return self.losses[0] if self.losses else None

    def level(self):
        """The mean of the last three logged losses (one value for a program that logs one)."""
        tail = self.losses[-3:]
        return sum(tail) / len(tail) if tail else None


def run_program(program, backend, python, graft_path=None, seed=None, keep=None):
    """Copies the program to a scratch directory, prepares its data, runs it; returns a Run."""
    scratch = tempfile.mkdtemp(prefix=f"graft-programs-{program.name}-{backend}-", dir=keep)
    work = os.path.join(scratch, "program")
    shutil.copytree(os.path.join(HERE, program.root), work)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    paths = [os.path.join(work, p) for p in program.pythonpath]
    if backend == "graft":
        paths.insert(0, graft_path)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    env.setdefault("OMP_NUM_THREADS", "1")  # two runs side by side on a small machine
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONHASHSEED"] = "0"
    args = list(program.args) + (program.seed_args(seed) if seed is not None and program.seed_args else [])
    t0 = time.time()
    try:
        if program.prepare:
            program.prepare(work, backend, python, env)
        done = subprocess.run([python, LAUNCH, backend, os.path.join(work, program.script), *args],
                              cwd=os.path.join(work, program.cwd), env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
        status, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        status, out, err = "timeout", (e.stdout or b"").decode(errors="replace"), f"TimeoutError: {TIMEOUT_S} s"
    except RuntimeError as e:
        status, out, err = "prepare", "", f"RuntimeError: {e}"
    seconds = time.time() - t0
    losses = []
    for m in program.loss_re.finditer(out):
        try:
            losses.append(float(m.group("loss")))
        except ValueError:
            losses.append(float("nan"))
    if keep is None:
        shutil.rmtree(scratch, ignore_errors=True)
    return Run(backend, status, losses, seconds, _last_error(err) if status != 0 else "", out + err)


def _rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-12)


def judge_run(program, run):
    """Problems with one run on its own: losses missing or not finite, no learning."""
    problems = []
    if not run.losses:
        return ["no loss in its log"]
    if not all(math.isfinite(v) for v in run.losses):
        problems.append("a loss is not finite")
    elif program.max_final is not None:
        if run.losses[-1] >= program.max_final:
            problems.append(f"final loss {run.losses[-1]:.4g} >= {program.max_final:g}")
    elif len(run.losses) < 2:
        problems.append("fewer than 2 losses")
    elif not run.level() < run.first():
        problems.append(f"does not learn (first {run.first():.4g}, last three {run.level():.4g})")
    return problems


def compare(program, graft_run, torch_run):
    """Problems with graft's trajectory against PyTorch's (both finished with losses)."""
    problems = []
    if program.max_final is not None or not graft_run.losses or not torch_run.losses:
        return problems
    if _rel(graft_run.first(), torch_run.first()) > program.tol_first:
        problems.append(f"first loss {graft_run.first():.4g} vs torch {torch_run.first():.4g} "
                        f"(tolerance {program.tol_first:.0%})")
    if program.tol_level is None:
        return problems
    n = min(len(graft_run.losses), len(torch_run.losses))
    g_level = sum(graft_run.losses[n - 3:n]) / len(graft_run.losses[n - 3:n])
    t_level = sum(torch_run.losses[n - 3:n]) / len(torch_run.losses[n - 3:n])
    if _rel(g_level, t_level) > program.tol_level:
        problems.append(f"level {g_level:.4g} vs torch {t_level:.4g} (tolerance {program.tol_level:.0%})")
    return problems


class Result:
    """The verdict on one program: graft's and PyTorch's runs and what went wrong."""

    def __init__(self, program, expected, graft_run, torch_run, torch_note, problems):
        self.program, self.expected = program, expected
        self.graft_run, self.torch_run, self.torch_note = graft_run, torch_run, torch_note
        self.problems = problems

    @property
    def passed(self):
        return not self.problems

    @property
    def verdict(self):
        if self.expected:
            return "xpass" if self.passed else "xfail"
        return "pass" if self.passed else "FAIL"


def check(program, graft_path, torch_python=None, keep=None, expected=False, always_torch=True):
    """Runs `program` on graft (and on PyTorch with `torch_python`, side by side); returns a
    Result. `expected`: why it stops on graft (expected_on_graft() when left False). With
    `always_torch` False, a program expected to stop on graft runs on PyTorch only if it does not."""
    if expected is False:
        expected = expected_on_graft(program, graft_path)
    if expected and not always_torch:
        graft_run = run_program(program, "graft", sys.executable, graft_path, None, keep)
        run_torch = torch_python and graft_run.ok
        torch_run = run_program(program, "torch", torch_python, None, None, keep) if run_torch else None
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            g = pool.submit(run_program, program, "graft", sys.executable, graft_path, None, keep)
            t = pool.submit(run_program, program, "torch", torch_python, None, None, keep) if torch_python else None
            graft_run, torch_run = g.result(), (t.result() if t else None)
    problems = []
    if not graft_run.ok:
        problems.append(f"graft: exit {graft_run.status}: {graft_run.error}")
    else:
        problems += [f"graft: {p}" for p in judge_run(program, graft_run)]
    torch_note = ""
    if torch_run is not None:
        known = program.torch_known
        if not torch_run.ok and known and known[0] in torch_run.error:
            torch_note = f"stops as known: {known[1]}"
        elif not torch_run.ok:
            problems.append(f"torch: exit {torch_run.status}: {torch_run.error}")
        torch_problems = judge_run(program, torch_run)
        problems += [f"torch: {p}" for p in torch_problems]
        if graft_run.ok and not torch_problems:
            problems += compare(program, graft_run, torch_run)
    return Result(program, expected, graft_run, torch_run, torch_note, problems)


def _status(run):
    if run is None:
        return "not run"
    if run.ok:
        return f"ok {run.seconds:.1f}s"
    return f"exit {run.status}"


def _losses(run):
    if run is None or not run.losses:
        return "-"
    return f"{run.first():.4g} -> {run.losses[-1]:.4g}"


def table(results):
    """The results as a plain-text table, then one line per problem or note."""
    rows = [("program", "graft", "torch", "graft first -> last", "torch first -> last", "verdict")]
    for r in results:
        rows.append((r.program.name, _status(r.graft_run), _status(r.torch_run), _losses(r.graft_run),
                     _losses(r.torch_run), r.verdict))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for r in results:
        if r.expected:
            lines.append(f"{r.program.name}: expected to stop on graft: {r.expected}")
        for p in r.problems:
            lines.append(f"{r.program.name}: {p}")
        if r.torch_note:
            lines.append(f"{r.program.name}: torch {r.torch_note}")
    return "\n".join(lines)


def _spread(runs):
    """(first losses, levels over the common length) of `runs`."""
    firsts = [r.first() for r in runs]
    n = min(len(r.losses) for r in runs)
    return firsts, [sum(r.losses[n - 3:n]) / len(r.losses[n - 3:n]) for r in runs]


def calibrate(programs, torch_python, graft_path, seeds):
    """PyTorch against itself: the largest relative difference of the first loss and of the level
    between `seeds` seeds of each seedable program (each tolerance is twice that, at least 5%);
    graft's range over the same seeds beside it."""
    for program in programs:
        if program.seed_args is None or program.max_final is not None:
            continue
        line = [program.name + ":"]
        for backend, python in (("torch", torch_python), ("graft", sys.executable)):
            runs = [run_program(program, backend, python, graft_path, seed=s) for s in range(1, seeds + 1)]
            runs = [r for r in runs if r.losses and all(math.isfinite(v) for v in r.losses)]
            if len(runs) < 2:
                line.append(f"{backend}: fewer than two runs log losses;")
                continue
            firsts, levels = _spread(runs)
            line.append(f"{backend} first {min(firsts):.4g}..{max(firsts):.4g} ({_rel(min(firsts), max(firsts)):.1%}) "
                        f"level {min(levels):.4g}..{max(levels):.4g} ({_rel(min(levels), max(levels)):.1%});")
        level = "not compared" if program.tol_level is None else f"{program.tol_level:.0%}"
        line.append(f"tolerances {program.tol_first:.0%} / {level}")
        print(" ".join(line), flush=True)


def default_graft_path():
    """$GRAFT_PYTHONPATH, else the folder of the graft this interpreter imports, else build/python."""
    if os.environ.get("GRAFT_PYTHONPATH"):
        return os.environ["GRAFT_PYTHONPATH"]
    import importlib.util
    spec = importlib.util.find_spec("graft")
    if spec is not None and spec.origin:
        return os.path.dirname(os.path.dirname(spec.origin))
    return os.path.join(ROOT, "build", "python")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tests/programs/run.py", description=__doc__.splitlines()[0])
    parser.add_argument("--graft", default=None,
                        help="the folder that holds the graft package (default: $GRAFT_PYTHONPATH, the graft this "
                             "Python imports, or build/python)")
    parser.add_argument("--torch-python", default=None,
                        help="the Python that runs the programs on PyTorch (default: this one or /usr/bin/python3, "
                             "whichever imports torch)")
    parser.add_argument("--no-torch", action="store_true", help="run on graft only")
    parser.add_argument("--only", nargs="+", default=None, help="these programs (names as --list prints)")
    parser.add_argument("--list", action="store_true", help="list the programs and what graft lacks for each")
    parser.add_argument("--keep", default=None, help="keep each run's working copy under this folder")
    parser.add_argument("--calibrate", type=int, default=0, metavar="N",
                        help="run PyTorch with N seeds and print its spread against itself")
    opts = parser.parse_args(argv)
    graft_path = os.path.abspath(opts.graft or default_graft_path())
    programs = PROGRAMS
    if opts.only:
        names = {p.name for p in PROGRAMS}
        unknown = [n for n in opts.only if n not in names]
        if unknown:
            parser.error(f"unknown program(s): {', '.join(unknown)}; --list lists them")
        programs = [p for p in PROGRAMS if p.name in opts.only]
    if opts.list:
        for p in programs:
            print(f"{p.name:38s} {expected_on_graft(p, graft_path) or 'runs on graft'}")
        return 0
    torch_python = None if opts.no_torch else find_torch_python([opts.torch_python] if opts.torch_python else None)
    if opts.calibrate:
        if torch_python is None:
            parser.error("--calibrate needs an interpreter that imports PyTorch")
        calibrate(programs, torch_python, graft_path, opts.calibrate)
        return 0
    changed = changed_files()
    for path in changed:
        print(f"{path}: not upstream's file (SOURCES holds its blob id); the bar runs programs unchanged")
    print(f"graft from {graft_path}; PyTorch: {torch_python or 'not found, graft only'}", flush=True)
    if opts.keep:
        os.makedirs(opts.keep, exist_ok=True)
    results = []
    for program in programs:
        result = check(program, graft_path, torch_python, opts.keep)
        print(f"{program.name}: {result.verdict}", flush=True)
        results.append(result)
    print()
    print(table(results))
    ran = [r for r in results if not r.expected]
    print(f"\n{sum(r.passed for r in results)} of {len(results)} runs pass on graft "
          f"({sum(r.passed for r in ran)} of the {len(ran)} expected to)")
    return 1 if changed or any(not r.passed for r in ran) else 0


if __name__ == "__main__":
    sys.exit(main())
