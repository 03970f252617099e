#!/usr/bin/env python3
"""Differential fuzz of graft against Debian's PyTorch: the long run (`make fuzz`).

    PYTHONPATH=build/python /usr/bin/python3 tools/fuzz_diff.py --seed 1 --cases 100000 --out fuzz.json
    PYTHONPATH=build/python /usr/bin/python3 tools/fuzz_diff.py --repro 1:F.max_pool2d:117
    PYTHONPATH=build/python /usr/bin/python3 tools/fuzz_diff.py --only F.batch_norm --cases 2000

Case i calls the i % len(surface)-th callable of the discovered surface in round i // len(surface);
a case is a pure function of its key "seed:callable:round", which --repro runs again (in a fresh
child) and prints as standalone torch and graft snippets. The summary (JSON) has the counts by
class and one finding per (callable, class) with its key, a short call and a reproducer. The exit
status is 1 when a gating finding (crash, hang, wrong_value, wrong_grad, mutated_on_error,
accept_refuse, error_type: compare.GATING) is not in tests/python/fuzz_diff/known_differences.json
(--no-gate: always 0). error_text differences are counted by kind (compare.ERROR_TEXT_KINDS). The machinery lives in
tests/python/fuzz_diff/ (see its __init__.py); the fixed-seed slice is tests/python/test_fuzz_diff.py.
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

from fuzz_diff import generator, runner  # noqa: E402

KNOWN = os.path.join(ROOT, "tests", "python", "fuzz_diff", "known_differences.json")


def repro(key, args):
    seed, cid, rnd = key.split(":")
    surface = runner.discover_surface(args.graft_path)
    entry = next((e for e in surface if e["id"] == cid), None)
    if entry is None:
        sys.exit(f"{cid} is not in the surface")
    case = generator.make_case(entry, int(seed), int(rnd))
    print("case:  ", generator.short_call(case))
    print("torch: ", generator.snippet(case, "torch"))
    print("graft: ", generator.snippet(case, "graft"))
    drv = runner.Driver(args.graft_path, args.timeout)
    try:
        res = drv.run_case(case)
    finally:
        drv.close()
    print(f"class:  {res['class']}  {res.get('detail', '')}")
    print(f"torch-> {res.get('torch', '')}")
    print(f"graft-> {res.get('graft', '')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=100_000)
    ap.add_argument("--start", type=int, default=0, help="first case index (resume a run)")
    ap.add_argument("--out", default="fuzz_diff_summary.json")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per half of a case before it is a hang")
    ap.add_argument("--progress", type=int, default=500, help="print a progress line every N cases")
    ap.add_argument("--only", action="append", help="restrict to a callable (id like F.conv2d, or a name); repeatable")
    ap.add_argument("--graft-path", default=None, help="directory holding the graft package (default: PYTHONPATH)")
    ap.add_argument("--known", default=KNOWN)
    ap.add_argument("--no-gate", action="store_true", help="exit 0 even with new gating findings")
    ap.add_argument("--repro", metavar="SEED:CALLABLE:ROUND", help="run one case again and print its snippets")
    args = ap.parse_args()
    if args.repro:
        repro(args.repro, args)
        return 0
    summary = runner.run(args.seed, args.cases, start=args.start, graft_path=args.graft_path, timeout=args.timeout,
                         progress=args.progress, only=args.only, log=lambda m: print(m, flush=True))
    known = runner.load_known(args.known)
    new, stale = runner.gate(summary, known)
    summary["new_gating"] = [f"{f['callable']} {f['class']}" for f in new]
    summary["stale_known"] = [f"{e['callable']} {e['class']}" for e in stale]
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=1, default=str)
    print(f"\n{summary['cases']} cases over {summary['callables']} callables in {summary['elapsed_s']}s "
          f"(seed {args.seed}); counts: {json.dumps(summary['counts'])}")
    print(f"accept/refuse directions: {json.dumps(summary['accept_refuse_directions'])}")
    from fuzz_diff.compare import error_text_kind
    kinds = {}
    for f in summary["findings"]:
        if f["class"] == "error_text":
            k = error_text_kind(f["torch"].partition(": ")[2], f["graft"].partition(": ")[2])
            kinds[k] = kinds.get(k, 0) + f["count"]
    summary["error_text_kinds"] = kinds
    print(f"error_text cases by kind (compare.ERROR_TEXT_KINDS): {json.dumps(kinds)}")
    for f in summary["findings"]:
        if f["class"] in ("crash", "hang", "mutated_on_error", "wrong_value", "wrong_grad"):
            tag = "known" if (f["callable"], f["class"]) in known else "NEW"
            print(f"  [{tag}] {f['class']:<16} {f['callable']:<34} x{f['count']:<4} {f['call'][:110]}")
            print(f"         {f['detail'][:160]}   (--repro {f['key']})")
    if stale and not args.only and summary["cases"] >= 50_000:
        print(f"\nknown differences not seen in this run (fixed, or not drawn): {', '.join(summary['stale_known'])}")
    elif stale:
        print(f"\n{len(stale)} known differences not drawn or not seen (a short run; see stale_known in the summary)")
    print(f"summary written to {args.out}")
    if new and not args.no_gate:
        print(f"\n{len(new)} gating finding(s) not in {os.path.relpath(args.known, ROOT)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
