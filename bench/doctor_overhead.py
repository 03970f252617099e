"""What graft.doctor costs on the anchor MLP training step, in one process.

The step is shared/anchors/torch_bench.py's mlp_step (784-512-256-10 ReLU MLP, batch 128,
cross-entropy, SGD with momentum 0.9) run with graft. Each round times it without a doctor,
with tier 0 (counters: generations, live lists, the verdict), with tier 1 (+ the creation line
of every node, storage and tensor) and with tier 1 plus the forced cyclic collection at every
step (LD006, on by default), in an order that rotates per round; medians and the ratios to
the run without a doctor are printed. Targets (issue #11): tier 0 <= 1.02, tier 1 <= 1.10.

    PYTHONPATH=build/python /usr/bin/python3 bench/doctor_overhead.py [--rounds 7] [--steps 60]
    ... bench/doctor_overhead.py --count MODE STEPS   (one mode, untimed: for callgrind's
        instruction counts, bench/doctor_instructions.sh --python build/python)

The machine is shared and noisy: compare the ratios, not the absolute times.
"""
import argparse
import statistics
import time

import graft as torch
import graft.doctor as doctor

MODES = {
    "off": None,
    "tier0": dict(tier="counters", collect_cycles=False),
    "tier1": dict(tier="sites", collect_cycles=False),
    "tier1+cycles": dict(tier="sites", collect_cycles=True),
}


def make():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(128, 784), torch.randint(0, 10, (128,))
    lossf = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()

    return step


def ms_per_step(step, steps, mode):
    options = MODES[mode]
    if options is None:
        for _ in range(3):
            step()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        return (time.perf_counter() - t0) / steps * 1e3
    with doctor.watch(**options) as dr:
        for _ in range(3):
            step()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        elapsed = time.perf_counter() - t0
    assert dr.steps == steps + 3 and not dr.findings, dr.report()
    return elapsed / steps * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--threads", type=int, default=1, help="graft.set_num_threads (default 1: less noise)")
    parser.add_argument("--count", nargs=2, metavar=("MODE", "STEPS"), help="run one mode untimed (for callgrind)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    step = make()
    if args.count:
        ms_per_step(step, int(args.count[1]), args.count[0])
        return
    names = list(MODES)
    times = {m: [] for m in names}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for m in order:
            times[m].append(ms_per_step(step, args.steps, m))
    base = statistics.median(times["off"])
    print(f"mlp step (784-512-256-10, batch 128, SGD momentum), median of {args.rounds} rounds x {args.steps} steps, "
          f"{args.threads} thread(s)")
    for m in names:
        t = statistics.median(times[m])
        print(f"  {m:13s} {t:8.3f} ms/step   ratio {t / base:.3f}")


if __name__ == "__main__":
    main()
