"""Builds the graft Python package (graft._C through CMake, plus python/graft/) for pip:

    /usr/bin/python3 -m pip install --no-build-isolation .

Offline: the build uses only Debian's setuptools, pybind11-dev, cmake and ninja. The C++ build
tree is build-pip/cmake unless GRAFT_BUILD_DIR names an existing one (the test suite reuses
build/ that way instead of compiling graft twice)."""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures (once) and builds the graft_python target, then copies the module into the
    wheel's package directory."""

    def build_extension(self, ext):
        build_dir = os.environ.get("GRAFT_BUILD_DIR") or os.path.join(ROOT, "build-pip", "cmake")
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            subprocess.check_call([
                "cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                "-DGRAFT_BUILD_TESTS=OFF", "-DGRAFT_BUILD_EXAMPLES=OFF", f"-DPython_EXECUTABLE={sys.executable}",
            ])
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "graft_python", "-j", str(os.cpu_count() or 1)])
        dest = self.get_ext_fullpath(ext.name)
        built = os.path.join(build_dir, "python", "graft", os.path.basename(dest))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)


setup(ext_modules=[CMakeExtension("graft._C")], cmdclass={"build_ext": CMakeBuild})
