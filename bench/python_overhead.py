"""graft's Python overhead beside PyTorch's (Debian python3-torch), in one invocation.

1. eager_us_per_op: the loop of shared/anchors/torch_bench.py (16-element float32 tensors,
   ``(x * w + 1.0).tanh().sum()`` then ``backward()``, time per op with 4 ops + backward per
   iteration), run for graft and for torch in alternating rounds in this process; medians and
   the ratio graft/torch. Issue #5 target: ratio <= 0.5.
2. import time: ``import graft`` and ``import torch`` each timed inside fresh subprocesses of the
   interpreter (alternating, after one untimed warm-up each); medians and the ratio. Issue #5
   target: ratio <= 0.2.

Run from the repository root with the package on the path:
    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [--rounds 7] [--ops 20000] [--imports 7]
The machine is shared and noisy: compare the ratios, not the absolute times.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import graft
import torch

PER_OP_TARGET = 0.5
IMPORT_TARGET = 0.2


def eager_us_per_op(lib, n):
    """torch_bench.py's eager_overhead loop for `lib` (graft or torch): microseconds per op."""
    x = lib.randn(16, requires_grad=True)
    w = lib.randn(16)
    t0 = time.perf_counter()
    for _ in range(n // 4):
        y = (x * w + 1.0).tanh().sum()
        y.backward()
    return (time.perf_counter() - t0) / n * 1e6


IMPORT_SNIPPET = "import time; t0 = time.perf_counter(); import {0}; print(time.perf_counter() - t0)"


def import_seconds(module):
    """Seconds `import module` takes in a fresh interpreter (the interpreter's own start excluded)."""
    out = subprocess.run([sys.executable, "-c", IMPORT_SNIPPET.format(module)], check=True, capture_output=True,
                         text=True, env=os.environ)
    return float(out.stdout.strip().splitlines()[-1])


def verdict(ratio, target):
    return "meets" if ratio <= target else "misses"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds of the eager loop per library")
    parser.add_argument("--ops", type=int, default=20000, help="ops per round (4 per iteration)")
    parser.add_argument("--imports", type=int, default=7, help="fresh-process imports per library")
    args = parser.parse_args()

    for lib in (graft, torch):
        lib.set_num_threads(2)
        lib.manual_seed(0)
        eager_us_per_op(lib, 2000)  # warm-up: caches, allocator segments, lazy initialisation
    times = {"graft": [], "torch": []}
    for r in range(args.rounds):
        order = (graft, torch) if r % 2 == 0 else (torch, graft)
        for lib in order:
            times[lib.__name__].append(eager_us_per_op(lib, args.ops))
    g, t = statistics.median(times["graft"]), statistics.median(times["torch"])
    print(f"eager_us_per_op  graft {g:.3f}  torch {t:.3f}  ratio {g / t:.3f}  "
          f"(median of {args.rounds} rounds of {args.ops} ops; target <= {PER_OP_TARGET}: {verdict(g / t, PER_OP_TARGET)})")

    for module in ("graft", "torch"):
        import_seconds(module)  # warm-up: the page cache holds the shared libraries afterwards
    imports = {"graft": [], "torch": []}
    for r in range(args.imports):
        for module in (("graft", "torch") if r % 2 == 0 else ("torch", "graft")):
            imports[module].append(import_seconds(module))
    g, t = statistics.median(imports["graft"]), statistics.median(imports["torch"])
    print(f"import_ms        graft {g * 1e3:.1f}  torch {t * 1e3:.1f}  ratio {g / t:.3f}  "
          f"(median of {args.imports} fresh processes; target <= {IMPORT_TARGET}: {verdict(g / t, IMPORT_TARGET)})")


if __name__ == "__main__":
    main()
