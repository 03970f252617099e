"""leak_hunt.py with its habits fixed: graft's leak doctor reports it clean.

Each of leak_hunt.py's four habits, fixed as the doctor's findings say:
  1. running_loss += loss.detach()                 (LD001: no graph comes along)
  2. the context is detached at each step, and backward needs no retain_graph     (LD002)
  3. validation under graft.no_grad()              (LD003)
  4. the hook stores output.detach()               (LD005)
and what it kept without a graph, which still grew each step, is kept as numbers: the
validation accuracy as a float and the probe's outputs as their largest value (`.item()`), so
allocated memory stays flat and the doctor says "nothing grows".

    PYTHONPATH=build/python /usr/bin/python3 -m graft.doctor examples/python/leak_hunt_fixed.py

Everything below the import is ordinary PyTorch (replace the first line with `import torch`).
"""
import graft as torch

import os
import sys

import numpy as np

nn = torch.nn
F = torch.nn.functional


def load_digits(steps, batch):
    here = os.path.dirname(os.path.abspath(__file__))
    csv = os.path.join(here, "..", "..", "data", "digits", "digits.csv")
    data = np.loadtxt(csv, delimiter=",", dtype=np.float32)
    x = torch.from_numpy(data[:, :64] / 16.0)
    y = torch.from_numpy(data[:, 64].astype(np.int64))
    return x[: steps * batch], y[: steps * batch], x[-200:], y[-200:]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.body(x))


def keep_activations(module):
    """Stores what `module` outputs, for a look after training."""
    seen = []
    module.register_forward_hook(lambda mod, inputs, output: seen.append(output.detach().abs().max().item()))
    return seen


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    batch = 32
    torch.manual_seed(0)
    x, y, x_val, y_val = load_digits(steps, batch)
    model = Classifier()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    probe = nn.Linear(64, 10)  # a linear probe on the raw pixels, for comparison
    probe_opt = torch.optim.SGD(probe.parameters(), lr=1e-2)
    keep_activations(probe)

    # a "context" vector that summarises the stream of batches, updated every step
    tracker = nn.Linear(10, 10)
    tracker_opt = torch.optim.SGD(tracker.parameters(), lr=1e-3)
    context = torch.zeros(1, 10)

    running_loss = 0.0
    val_accuracy = []
    for step in range(steps):
        xb, yb = x[step * batch:(step + 1) * batch], y[step * batch:(step + 1) * batch]
        opt.zero_grad()
        logits = model(xb)
        loss = F.cross_entropy(logits, yb)
        loss.backward()
        opt.step()
        running_loss += loss.detach()                          # 1. no graph comes along

        probe_opt.zero_grad()
        F.cross_entropy(probe(xb), yb).backward()              # 4. the hook keeps probe(xb).detach()
        probe_opt.step()

        tracker_opt.zero_grad()
        context = torch.tanh(0.9 * context.detach() + tracker(logits.detach().mean(0, keepdim=True)))  # 2.
        context.pow(2).mean().backward()
        tracker_opt.step()

        with torch.no_grad():
            val_out = model(x_val)                             # 3. no graph
        val_accuracy.append((val_out.argmax(1) == y_val).float().mean().item())  # a float, not the outputs
        if step % 10 == 9:
            print(f"step {step + 1}: mean loss {running_loss.item() / (step + 1):.3f}, "
                  f"validation accuracy {val_accuracy[-1]:.2f}")


if __name__ == "__main__":
    main()
