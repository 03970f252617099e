#!/usr/bin/env python3
"""Checks that graft's layers point one way (docs/notes/architecture.md).

    python3 tools/check_layers.py            # fail on a violation not in tools/layer_baseline.txt
    python3 tools/check_layers.py --list     # print every violation (the baseline's content)

Layers, lowest first (a file may include headers of its own layer and of lower ones):

    core < alloc < backend < ops < autograd < {nn, optim, data} < serialize < doctor < python

A layer is the folder a file lives in: include/graft/<layer>/ (public) and src/<layer>/ (private),
python/csrc/ for the bindings; include/graft/graft.h is the umbrella header (above everything but
python), memory.h belongs to alloc and parallel.h to core. Three rules:

  upward    a file includes a header of a higher layer, or of a peer (nn, optim and data do
            not include each other; serialize, which saves modules and optimizers, sits above);
  private   a file includes a private header (src/<layer>/...) of another layer;
  bindings  python/csrc includes anything but public headers (include/graft/...) and its own.

Every violation found today is listed in tools/layer_baseline.txt, which #13 empties: the check
fails on a violation that is not there (a new one), and names the entries that no longer occur
(fixed: delete them), so the list only shrinks.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(ROOT, "tools", "layer_baseline.txt")
RANK = {"core": 0, "alloc": 1, "backend": 2, "ops": 3, "autograd": 4,
        "nn": 5, "optim": 5, "data": 5, "serialize": 6, "doctor": 7, "umbrella": 8, "python": 9}
TOP_LEVEL_HEADERS = {"graft.h": "umbrella", "memory.h": "alloc", "parallel.h": "core"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(rel):
    """(layer, is_private) of a repository-relative path, or None outside the layered tree."""
    parts = rel.split("/")
    if parts[:2] == ["include", "graft"]:
        if len(parts) == 3:
            return TOP_LEVEL_HEADERS.get(parts[2]), False
        return parts[2], False
    if parts[0] == "src" and len(parts) > 2:
        return parts[1], True
    if parts[:2] == ["python", "csrc"]:
        return "python", True
    return None, False


def resolve(including, target):
    """Repository-relative path of an #include "target" seen in `including`, or None (external)."""
    here = os.path.dirname(os.path.join(ROOT, including))
    for base in (here, os.path.join(ROOT, "include"), os.path.join(ROOT, "src")):
        p = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(p):
            return os.path.relpath(p, ROOT)
    return None


def sources():
    for top in ("include/graft", "src", "python/csrc"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith((".h", ".cpp", ".def", ".cu")):
                    yield os.path.relpath(os.path.join(dirpath, f), ROOT)


def violations():
    found = []
    for rel in sources():
        layer, _ = layer_of(rel)
        if layer is None:
            continue
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            text = f.read()
        for target in INCLUDE.findall(text):
            dep = resolve(rel, target)
            if dep is None:
                continue
            dep_layer, dep_private = layer_of(dep)
            if dep_layer is None or dep_layer == layer:
                continue
            if layer == "python":
                if dep_private:
                    found.append(f"bindings {rel} -> {dep}")
                continue
            if dep_private:
                found.append(f"private {rel} -> {dep}")
            elif RANK[dep_layer] >= RANK[layer]:
                found.append(f"upward {rel} -> {dep}")
    return sorted(set(found))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print every violation and exit 0")
    args = ap.parse_args()
    found = violations()
    if args.list:
        print("\n".join(found))
        return 0
    with open(BASELINE, encoding="utf-8") as f:
        baseline = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    new = [v for v in found if v not in baseline]
    fixed = sorted(baseline - set(found))
    counts = {}
    for v in found:
        counts[v.split()[0]] = counts.get(v.split()[0], 0) + 1
    print(f"layers: {len(found)} known violations ({', '.join(f'{k} {n}' for k, n in sorted(counts.items()))}); "
          f"{len(new)} new; {len(fixed)} fixed")
    for v in fixed:
        print(f"  fixed, delete from tools/layer_baseline.txt: {v}")
    for v in new:
        print(f"  NEW: {v}")
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
