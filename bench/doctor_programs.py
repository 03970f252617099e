"""What graft.doctor costs on the step loops of real programs, in one process.

Three programs, each set up inside the watched region as under ``python -m graft.doctor`` (the
session starts before the script makes its data and model):
  digits  the digits CNN of examples/python/digits_cnn.py (two convolutions, Adam, a DataLoader
          over the bundled UCI digits, batch 64);
  chartf  a character transformer (embedding, 2 TransformerEncoderLayers of width 64, causal
          mask, AdamW) on batches of 32 x 64 characters of a text kept as Python strings;
  lstm    a character LSTM (embedding, 1-layer LSTM of width 128, SGD with clipping) on the same
          text, 32 x 32 characters.
Modes: off (no doctor), counters (tier="counters"), default (tier="sites" with the cyclic
collection at each boundary: what watch() and the command line do). With --framework torch the
same programs run on PyTorch itself (the digits example with its import line made `import torch`,
as its docstring says), and the modes are off and torch (watch(backend="torch"), what
`python -m graft.doctor --torch` does). A round runs every mode of a
program once (rotating their order) for --steps steps after 5 unmeasured ones; medians of the
process CPU time per step over --rounds rounds and the ratios to "off" are printed. Targets
(issue #27): default <= 1.05, counters <= 1.01.

    PYTHONPATH=build/python /usr/bin/python3 bench/doctor_programs.py [--rounds 5] [--steps 40]
    ... bench/doctor_programs.py --framework torch   (the PyTorch backend, on PyTorch's own step loops)
    ... bench/doctor_programs.py --count PROGRAM MODE STEPS   (one run, untimed: for callgrind)

CPU time moves on this shared machine by a few percent between rounds: compare medians.
"""
import argparse
import importlib
import os
import statistics
import sys
import time
import types

import numpy as np

import graft.doctor as doctor

# the framework the programs are defined on, read before their classes are (--framework)
FRAMEWORK = sys.argv[sys.argv.index("--framework") + 1] if "--framework" in sys.argv[:-1] else "graft"
torch = importlib.import_module(FRAMEWORK)
nn = torch.nn
F = torch.nn.functional
HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ({"off": None, "counters": dict(tier="counters"), "default": dict()} if FRAMEWORK == "graft" else
         {"off": None, "torch": dict(backend="torch")})


def _digits_example():
    """examples/python/digits_cnn.py as a module, on graft or (its import line made `import torch`) on PyTorch."""
    path = os.path.join(HERE, "..", "examples", "python", "digits_cnn.py")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    if FRAMEWORK == "torch":
        source = source.replace("import graft as torch\n", "import torch\n", 1)
    module = types.ModuleType("digits_cnn")
    module.__file__ = path
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def digits():
    DigitsNet = _digits_example().DigitsNet
    data = np.loadtxt(os.path.join(HERE, "..", "data", "digits", "digits.csv"), delimiter=",", dtype=np.float32)
    images = torch.from_numpy(data[:, :64].copy()).reshape(-1, 1, 8, 8) / 16.0
    labels = torch.from_numpy(data[:, 64].astype(np.int64))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels), batch_size=64, shuffle=True)
    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = nn.CrossEntropyLoss()
    batches = iter(())

    def step():
        nonlocal batches
        try:
            x, y = next(batches)
        except StopIteration:
            batches = iter(loader)
            x, y = next(batches)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach().item()

    return step


def _text():
    words = ("the doctor watches every step of the loop and names what grows who holds it and the line "
             "that stored it a tensor kept with its graph keeps every node alive ").split()
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(words, 12)) for _ in range(4000)]  # a corpus as Python strings
    text = "\n".join(lines)
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    ids = torch.tensor([index[c] for c in text], dtype=torch.long)
    return ids, len(vocab)


def _batches(ids, batch, length):
    def next_batch():
        starts = torch.randint(0, len(ids) - length - 1, (batch,))
        x = torch.stack([ids[s:s + length] for s in starts.tolist()])
        y = torch.stack([ids[s + 1:s + length + 1] for s in starts.tolist()])
        return x, y

    return next_batch


class CharTransformer(nn.Module):
    def __init__(self, vocab, width=64, length=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.zeros(length, width))
        self.layers = nn.ModuleList(
            [nn.TransformerEncoderLayer(width, 4, 4 * width, dropout=0.1, batch_first=True) for _ in range(2)])
        self.head = nn.Linear(width, vocab)
        i = torch.arange(length)
        self.register_buffer("mask", torch.zeros(length, length).masked_fill(i[None, :] > i[:, None], float("-inf")))

    def forward(self, x):
        h = self.embed(x) + self.pos[:x.shape[1]]
        for layer in self.layers:
            h = layer(h, src_mask=self.mask)
        return self.head(h)


def chartf():
    ids, vocab = _text()
    next_batch = _batches(ids, 32, 64)
    model = CharTransformer(vocab)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        x, y = next_batch()
        opt.zero_grad()
        loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.detach().item()

    return step


class CharLSTM(nn.Module):
    def __init__(self, vocab, width=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.lstm = nn.LSTM(32, width, batch_first=True)
        self.head = nn.Linear(width, vocab)

    def forward(self, x):
        out, _ = self.lstm(self.embed(x))
        return self.head(out)


def lstm():
    ids, vocab = _text()
    next_batch = _batches(ids, 32, 32)
    model = CharLSTM(vocab)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)

    def step():
        x, y = next_batch()
        opt.zero_grad()
        loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.detach().item()

    return step


PROGRAMS = {"digits": digits, "chartf": chartf, "lstm": lstm}


def cpu_ms_per_step(program, mode, steps, warm=5):
    """Sets the program up and runs it under `mode`; CPU milliseconds per step after `warm` steps."""
    options = MODES[mode]
    dr = doctor.watch(**options) if options is not None else None
    if dr is not None:
        dr.start()
    try:
        torch.manual_seed(0)
        step = PROGRAMS[program]()
        for _ in range(warm):
            step()
        t0 = time.process_time()
        for _ in range(steps):
            step()
        elapsed = time.process_time() - t0
    finally:
        if dr is not None:
            dr.stop()
    if dr is not None:
        assert dr.steps == warm + steps and not dr.findings, dr.report()
    return elapsed / steps * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--count", nargs=3, metavar=("PROGRAM", "MODE", "STEPS"), help="one run, untimed")
    parser.add_argument("--framework", choices=["graft", "torch"], default="graft",
                        help="the programs on graft (default) or on PyTorch itself")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.count:
        cpu_ms_per_step(args.count[0], args.count[1], int(args.count[2]))
        return
    names = list(MODES)
    print(f"CPU ms per step on {FRAMEWORK}, median of {args.rounds} rounds x {args.steps} steps, 1 thread")
    for program in args.programs.split(","):
        times = {m: [] for m in names}
        for r in range(args.rounds):
            for m in names[r % len(names):] + names[:r % len(names)]:
                times[m].append(cpu_ms_per_step(program, m, args.steps))
                print(f"\r  {program}: round {r + 1}/{args.rounds} {m:9s}", end="", file=sys.stderr, flush=True)
        print("\r\x1b[K", end="", file=sys.stderr)
        base = statistics.median(times["off"])
        cells = "  ".join(f"{m} {statistics.median(times[m]):7.2f} ({statistics.median(times[m]) / base:.3f})"
                          for m in names)
        print(f"  {program:7s} {cells}")


if __name__ == "__main__":
    main()
