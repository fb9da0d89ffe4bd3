"""Builds the `pipesim` Python package with CMake (the `_pipesim` target) for the
interpreter that runs this script. Offline, with Debian's packages:

    /usr/bin/python3 -m pip install --no-build-isolation --no-deps --prefix PREFIX .

See docs/python.md. PIPESIM_BUILD_DIR reuses an existing CMake build directory as configured;
CMAKE_BUILD_PARALLEL_LEVEL sets the compile jobs (default 2).
"""

import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(pipesim VERSION ([0-9.]+)", f.read()).group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("PIPESIM_BUILD_DIR")
        build_dir = os.path.abspath(given or os.path.join(self.build_temp, "cmake"))
        # A given build directory is used as configured (its interpreter, its options).
        if not (given and os.path.exists(os.path.join(build_dir, "CMakeCache.txt"))):
            subprocess.check_call([
                "cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                f"-DPython3_EXECUTABLE={sys.executable}", "-DPIPESIM_PYTHON=ON",
                "-DPIPESIM_BUILD_TESTS=OFF", "-DPIPESIM_CUDA=OFF"])
        env = dict(os.environ)
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_pipesim",
                               "pipesim-simgrid"], env=env)
        built = glob.glob(os.path.join(build_dir, "python", "pipesim", "_pipesim*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _pipesim module in {build_dir}, found {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)
        # The SimGrid engine plugin, which the module loads from its own directory.
        plugin = os.path.join(build_dir, "cli", "pipesim-simgrid.so")
        shutil.copyfile(plugin, os.path.join(os.path.dirname(target), "pipesim-simgrid.so"))


setup(
    name="pipesim",
    version=project_version(),
    description="Pipeline-parallel training schedules: analytic replay, SimGrid cluster "
                "simulation, pictures",
    packages=["pipesim"],
    package_dir={"pipesim": "python/pipesim"},
    ext_modules=[CMakeExtension("pipesim._pipesim")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    install_requires=["numpy"],
    zip_safe=False,
    options={"build": {"build_base": "build/setuptools"}},
)
