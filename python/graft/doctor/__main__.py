"""python -m graft.doctor [options] script.py [args...]

Runs an unchanged training script under graft.doctor, as ``python script.py args...`` would run
it: ``import torch`` (and every ``torch.<name>``) gives graft unless --no-redirect or --torch
(which watches the script on PyTorch itself); every
optimizer.step() is a doctor step; progress goes to stderr (one updating line on a terminal)
with each finding printed once as it is made; at the end the report is printed and an HTML page
(the timeline, the findings, the live graphs) is written. The script sees its own arguments in
sys.argv; the exit status is the script's (130 after Ctrl-C, as Python's).
"""
import argparse
import importlib.util
import os
import runpy
import signal
import sys
import traceback


def _parser():
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
    parser.add_argument("--no-redirect", action="store_true",
                        help="leave `import torch` to PyTorch (graft watches only what runs on graft)")
    parser.add_argument("--torch", action="store_true",
                        help="run the script on PyTorch itself and watch it there (no redirect)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--fail-on-leak", action="store_true", help="exit with status 3 if a leak or warning was found")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    return parser


def _run(script, dr):
    """Runs the script; returns (exit status, the exception it stopped with or None)."""
    try:
        runpy.run_path(script, run_name="__main__")  # sys.argv[0] as typed, as `python script.py`
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return (e.code or 0), None
        print(e.code, file=sys.stderr)  # sys.exit("message"): Python prints the message too
        return 1, None
    except KeyboardInterrupt as e:
        dr._end_progress()
        traceback.print_exc()
        return 130, e
    except BaseException as e:  # the script failed: report what was seen until then
        dr._end_progress()
        traceback.print_exc()
        return 1, e
    return 0, None


def _where_it_ran(redirected, steps):
    """A sentence when the script ran (partly) on real PyTorch, which graft does not watch."""
    from .. import _as_torch
    torch = sys.modules.get("torch")
    if redirected or torch is None or not _as_torch.is_real_torch(torch):
        return None
    version = getattr(torch, "__version__", "?")
    return (f"graft.doctor: this script ran on PyTorch {version} (--no-redirect), which this run did not watch: "
            f"{steps} step(s) of graft were watched. Run it with --torch to watch it on PyTorch, or without "
            "--no-redirect to run it on graft.")


def _missing_part(stopped, redirected):
    """A sentence when the script stopped at a part of PyTorch that graft does not have."""
    if not redirected or not isinstance(stopped, (AttributeError, ImportError)):
        return None
    text = str(stopped)
    if not any(w in text for w in ("'torch", "'graft", "torch.")):
        return None
    return (f"graft.doctor: the script stopped at a part of PyTorch that graft does not have ({text}); the steps "
            f"before it were watched. --no-redirect runs the script on PyTorch, which graft's doctor does not watch.")


def main(argv=None):
    parser = _parser()
    opts = parser.parse_args(argv)
    script = os.path.abspath(opts.script)
    if not os.path.isfile(script):
        parser.error(f"no such script: {opts.script}")

    import graft
    import graft.doctor as doctor
    from .. import _as_torch

    redirected = not opts.no_redirect and not opts.torch
    if opts.torch and importlib.util.find_spec("torch") is None:
        parser.error("--torch watches a script on PyTorch, and PyTorch is not installed for this Python "
                     f"({sys.executable})")
    if redirected:
        _as_torch.install()
        if not opts.quiet:
            print(f"graft.doctor: `import torch` gives graft {graft.__version__} in this run "
                  f"(--no-redirect leaves it to PyTorch)", file=sys.stderr, flush=True)
    sys.argv = [opts.script] + opts.args
    sys.path.insert(0, os.path.dirname(script))
    dr = doctor.watch(tier=opts.tier, warmup=opts.warmup, confirm=opts.confirm, collect_cycles=not opts.no_cycles,
                      progress=not opts.quiet, backend="torch" if opts.torch else "graft")
    dr._joinable = True
    with dr:
        status, stopped = _run(opts.script, dr)
        if stopped is not None:
            dr.note_stopped(stopped)
        report = dr.report()
        dr.render(opts.html, format="html")
        if opts.json:
            dr.render(opts.json, format="json")
    print(report)
    for note in (None if opts.torch else _where_it_ran(redirected, dr.steps), _missing_part(stopped, redirected)):
        if note:
            print(note, file=sys.stderr)
    print(f"graft.doctor: HTML report written to {opts.html}", file=sys.stderr)
    if opts.torch and not opts.quiet:
        print(f"graft.doctor: watched on {dr._session.framework_name}, which records no creation lines: LD009, "
              "LD010 and the peak within a step are graft's only (docs/doctor.md, \"On PyTorch itself\")",
              file=sys.stderr)
    if opts.fail_on_leak and status == 0 and any(f.severity != "info" for f in dr.findings):
        status = 3
    if isinstance(stopped, KeyboardInterrupt):
        # die of SIGINT as Python does after an uncaught KeyboardInterrupt (the shell sees 130)
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return status


if __name__ == "__main__":
    sys.exit(main())
