"""Builds the graft Python package (graft._C through CMake, plus python/graft/) for pip:

    pip install .                                           # any venv: setuptools from PyPI
    /usr/bin/python3 -m pip install --no-build-isolation .  # offline: Debian's setuptools

The C++ side needs Debian's packages (tools/install-deps.sh: cmake, ninja, pybind11-dev, OpenBLAS,
...). The C++ build tree is build-pip/cmake-<python> unless GRAFT_BUILD_DIR names an existing one (the test
suite reuses build/ that way instead of compiling graft twice). pip shows a build's output only
with -v, so on a terminal the build also keeps one line there up to date ("compiling the C++
core: 120/251")."""
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(ROOT, "build-pip"), exist_ok=True)  # setup.cfg's egg_base (a fresh clone has none)


def _python_tag():
    """"cpython-311": one C++ tree per interpreter."""
    return sys.implementation.cache_tag or f"{sys.implementation.name}-{sys.version_info[0]}{sys.version_info[1]}"


def _terminal():
    """The controlling terminal, written to directly (pip captures the build's output), or None."""
    try:
        return open("/dev/tty", "w")
    except OSError:
        return None


def _run(cmd, what):
    """Runs a build command, its output passed on; on a terminal one line shows ninja's progress."""
    tty = _terminal()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    for line in proc.stdout:
        sys.stdout.write(line)
        m = re.match(r"\[(\d+)/(\d+)\]", line)
        if tty is not None and m:
            tty.write(f"\r\x1b[K[graft] {what}: {m.group(1)}/{m.group(2)}")
            tty.flush()
    if tty is not None:
        tty.write("\r\x1b[K")
        tty.close()
    if proc.wait() != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures (once) and builds the graft_python target, then copies the module into the
    wheel's package directory."""

    def build_extension(self, ext):
        # one tree per interpreter (a module built for one Python is not another's)
        build_dir = os.environ.get("GRAFT_BUILD_DIR") or os.path.join(ROOT, "build-pip",
                                                                       "cmake-" + _python_tag())
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            _run(["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                  "-DGRAFT_BUILD_TESTS=OFF", "-DGRAFT_BUILD_EXAMPLES=OFF", f"-DPython_EXECUTABLE={sys.executable}",
                  # a user's build does not stop at a warning another Python's headers bring (3.12's
                  # make GCC see a maybe-uninitialized optional in pybind11); CI keeps -Werror
                  "-DGRAFT_WERROR=OFF"],
                 "configuring")
        _run(["cmake", "--build", build_dir, "--target", "graft_python", "-j", str(os.cpu_count() or 1)],
             "compiling the C++ core")
        dest = self.get_ext_fullpath(ext.name)
        built = os.path.join(build_dir, "python", "graft", os.path.basename(dest))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)


setup(ext_modules=[CMakeExtension("graft._C")], cmdclass={"build_ext": CMakeBuild})
