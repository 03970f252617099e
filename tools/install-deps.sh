#!/usr/bin/env bash
# Installs the Debian packages graft needs to build and test, only when missing.
# Usage: tools/install-deps.sh [extra packages...]
set -euo pipefail
pkgs=(cmake ninja-build g++ make libopenblas-dev libgtest-dev nlohmann-json3-dev
      # the op generator (tools/opgen) reads src/ops/ops.yaml
      python3-yaml
      # the Python package: Debian's interpreter, pybind11, DLPack, NumPy, pytest, and pip/venv for the install check
      python3-dev pybind11-dev libdlpack-dev python3-numpy python3-pytest python3-pip python3-venv python3-setuptools
      python3-wheel "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
