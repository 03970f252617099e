#!/usr/bin/env bash
# The README's Python install, checked: pip installs graft into a fresh virtual environment
# offline (--no-build-isolation: Debian's setuptools), and a program run from another folder
# imports the installed package; then the same from a wheel (pip wheel) installed into a second
# environment. Usage: check_install.sh <source dir> <cmake build dir>
# The build dir is reused through GRAFT_BUILD_DIR so that graft is not compiled a second time.
set -euo pipefail
src=$1
build=$2
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$venv"
GRAFT_BUILD_DIR="$build" "$venv/bin/pip" install --no-build-isolation --no-index -q "$src"
check() {  # <python>: the installed package imports from its environment and differentiates
  (cd "$venv" && "$1" - <<'PY'
import graft as torch
assert torch.__file__.startswith(__import__("sys").prefix), torch.__file__
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(x * x).sum().backward()
assert x.grad.tolist() == [2.0, 4.0, 6.0], x.grad
print("installed graft works:", torch.__file__)
PY
  )
}
check "$venv/bin/python"
GRAFT_BUILD_DIR="$build" "$venv/bin/pip" wheel --no-build-isolation --no-index --no-deps -q -w "$venv/wheels" "$src"
/usr/bin/python3 -m venv --system-site-packages "$venv/from-wheel"
"$venv/from-wheel/bin/pip" install --no-index -q "$venv"/wheels/graft-*.whl
check "$venv/from-wheel/bin/python"
