"""python -m graft.doctor [options] script.py [args...]

Runs an unchanged training script under graft.doctor: every optimizer.step() is a doctor
step; a progress line per step and each finding as it is made go to stderr; at the end the
report is printed and an HTML page (the timeline, the findings, the live graphs) is written.
The script sees its own arguments in sys.argv, as under `python script.py args...`.
"""
import argparse
import os
import runpy
import sys
import traceback


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m graft.doctor",
        description="Run a training script under graft's leak doctor and report which graph leaks, who holds it, "
                    "at which line, and how to fix it.")
    parser.add_argument("--html", default="graft-doctor.html", help="the HTML report to write (default: %(default)s)")
    parser.add_argument("--json", default=None, help="also write the timeline as JSON here")
    parser.add_argument("--tier", choices=["counters", "sites"], default="sites",
                        help="counters: verdicts only; sites: + creation lines (default)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up steps (default: %(default)s)")
    parser.add_argument("--confirm", type=int, default=3, help="confirmation steps (default: %(default)s)")
    parser.add_argument("--no-cycles", action="store_true", help="do not force a cyclic collection per step (LD006)")
    parser.add_argument("--quiet", action="store_true", help="no progress line per step")
    parser.add_argument("--fail-on-leak", action="store_true", help="exit with status 3 if a leak or warning was found")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    opts = parser.parse_args(argv)

    import graft.doctor as doctor

    script = os.path.abspath(opts.script)
    if not os.path.isfile(script):
        parser.error(f"no such script: {opts.script}")
    sys.argv = [opts.script] + opts.args
    sys.path.insert(0, os.path.dirname(script))
    status = 0
    dr = doctor.watch(tier=opts.tier, warmup=opts.warmup, confirm=opts.confirm, collect_cycles=not opts.no_cycles,
                      progress=not opts.quiet)
    with dr:
        try:
            runpy.run_path(opts.script, run_name="__main__")  # sys.argv[0] as typed, as `python script.py`
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if e.code is not None and not isinstance(e.code, int):
                print(e.code, file=sys.stderr)  # sys.exit("message"): Python prints the message too
        except BaseException:  # the script failed: report what was seen so far
            traceback.print_exc()
            status = 1
        report = dr.report()
        dr.render(opts.html, format="html")
        if opts.json:
            dr.render(opts.json, format="json")
    print(report)
    print(f"graft.doctor: HTML report written to {opts.html}", file=sys.stderr)
    if opts.fail_on_leak and status == 0 and any(f.severity != "info" for f in dr.findings):
        status = 3
    return status


if __name__ == "__main__":
    sys.exit(main())
