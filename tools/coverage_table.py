"""tools/coverage_table.py [--write | --check] [--graft PATH]: which of PyTorch's names graft has.

For each namespace (torch, torch.nn, torch.nn.functional, torch.Tensor, torch.optim,
torch.utils.data) it takes PyTorch's public names (``dir()``, no leading ``_``; modules from
outside torch such as ``os`` and ``typing`` names such as ``Optional`` are left out) and marks
each supported when graft's namespace has it (``hasattr``: it says that a program finds the
name, not how far its behaviour goes). The result is a Markdown table, one row per namespace,
then the missing names of each namespace in a collapsed <details> list.

Without options the table is printed. ``--write`` puts it in docs/python.md between the
``<!-- coverage:begin -->`` and ``<!-- coverage:end -->`` lines; ``--check`` exits 1 when the
text there differs from a fresh table (tests/python/test_programs.py runs it). The table is
generated against PyTorch as the running Python imports it and names its version; ``--check``
exits 3 (nothing to compare) when PyTorch is not importable or its version is not the one
the table in docs/python.md was made from.
"""
import argparse
import importlib
import os
import re
import sys
import textwrap
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "python.md")
BEGIN = "<!-- coverage:begin -->"
END = "<!-- coverage:end -->"
NAMESPACES = ["torch", "torch.nn", "torch.nn.functional", "torch.Tensor", "torch.optim", "torch.utils.data"]
NOTHING_TO_COMPARE = 3


def resolve(dotted):
    """The object a dotted name like 'torch.Tensor' or 'graft.nn.functional' names."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[:i + 1]))
    return obj


def public_names(namespace):
    """PyTorch's public names of `namespace`, sorted, without foreign modules and typing names."""
    names = []
    for name in dir(namespace):
        if name.startswith("_"):
            continue
        try:
            value = getattr(namespace, name)
        except Exception:  # a lazy attribute that fails to load is still a name
            names.append(name)
            continue
        if isinstance(value, types.ModuleType) and not value.__name__.split(".")[0] == "torch":
            continue
        if getattr(value, "__module__", None) == "typing":
            continue
        names.append(name)
    return sorted(names)


def has(namespace, name):
    """Whether graft's `namespace` has `name` (loading it on first use, as a program would)."""
    try:
        return hasattr(namespace, name)
    except Exception:
        return False


def coverage():
    """[(namespace name, PyTorch's names, the names graft lacks)] and PyTorch's version."""
    import torch
    if getattr(getattr(torch, "__spec__", None), "name", "torch") != "torch" or hasattr(torch, "_as_torch"):
        raise ImportError("`import torch` gives graft, not PyTorch")
    rows = []
    for dotted in NAMESPACES:
        names = public_names(resolve(dotted))
        try:
            ours = resolve("graft" + dotted[len("torch"):])
        except ImportError:
            ours = None
        missing = [n for n in names if ours is None or not has(ours, n)]
        rows.append((dotted, names, missing))
    return rows, torch.__version__


def markdown(rows, version):
    """The table between the markers (markers included)."""
    intro = (f"PyTorch {version}'s public names (`dir()`, no leading `_`, without modules from outside torch "
             "and `typing` names) that graft has (`hasattr`: a program finds the name; how far its behaviour "
             "goes is what the rest of this page and the tests say):")
    out = [BEGIN,
           f"<!-- made against PyTorch {version}; `tools/coverage_table.py --write` makes it again -->",
           "",
           *textwrap.wrap(intro, 100, break_long_words=False, break_on_hyphens=False),
           "",
           "| namespace | PyTorch's names | in graft | missing | covered |",
           "|---|---:|---:|---:|---:|"]
    total = have_total = 0
    for dotted, names, missing in rows:
        have = len(names) - len(missing)
        total += len(names)
        have_total += have
        out.append(f"| `{dotted}` | {len(names)} | {have} | {len(missing)} | {have / max(len(names), 1):.0%} |")
    out.append(f"| all | {total} | {have_total} | {total - have_total} | {have_total / max(total, 1):.0%} |")
    out.append("")
    for dotted, names, missing in rows:
        if not missing:
            continue
        out.append(f"<details><summary><code>{dotted}</code>: the {len(missing)} names graft does not have</summary>")
        out.append("")
        line = ""
        for name in missing:  # wrapped at 110 characters, so that diffs stay readable
            item = f"`{name}`"
            if line and len(line) + len(item) + 2 > 110:
                out.append(line + ",")
                line = ""
            line = f"{line}, {item}" if line else item
        out.append(line)
        out.append("")
        out.append("</details>")
        out.append("")
    out.append(END)
    return "\n".join(out)


def current_block(text):
    """The text between the markers in `text` (markers included), or None."""
    m = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.S)
    return m.group(0) if m else None


def documented_version(block):
    """The PyTorch version the table in docs/python.md was made from, or None."""
    m = re.search(r"made against PyTorch (\S+);", block or "")
    return m.group(1) if m else None


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tools/coverage_table.py", description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="write the table into docs/python.md")
    group.add_argument("--check", action="store_true", help="exit 1 if docs/python.md's table is not up to date")
    parser.add_argument("--graft", default=None, help="the folder holding the graft package (put first on sys.path)")
    opts = parser.parse_args(argv)
    if opts.graft:
        sys.path.insert(0, os.path.abspath(opts.graft))
    with open(DOC) as f:
        doc = f.read()
    block = current_block(doc)
    try:
        rows, version = coverage()
    except ImportError as e:
        if opts.check:
            print(f"coverage_table: nothing to compare: {e}")
            return NOTHING_TO_COMPARE
        raise
    table = markdown(rows, version)
    if opts.check:
        if block is None:
            print(f"coverage_table: {DOC} has no {BEGIN} ... {END} block")
            return 1
        if documented_version(block) != version:
            print(f"coverage_table: nothing to compare: the table is of PyTorch {documented_version(block)}, "
                  f"this Python has {version}")
            return NOTHING_TO_COMPARE
        if block != table:
            print(f"coverage_table: {DOC}'s table is out of date: run `python3 tools/coverage_table.py --write` "
                  "with PyTorch importable")
            return 1
        print("coverage_table: docs/python.md is up to date")
        return 0
    if opts.write:
        if block is None:
            parser.error(f"{DOC} has no {BEGIN} ... {END} block to write into")
        with open(DOC, "w") as f:
            f.write(doc.replace(block, table))
        print(f"coverage_table: wrote {DOC}")
        return 0
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
