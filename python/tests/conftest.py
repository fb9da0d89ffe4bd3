"""Shared fixtures: the command-line program the module is checked against."""

import json
import os
import shutil
import subprocess

import pytest


@pytest.fixture(scope="session")
def cli():
    """Runs `pipesim ARGS...` and returns its parsed --json output (or raises with its
    stderr). The program is $PIPESIM_CLI (set by ctest) or `pipesim` on PATH."""
    program = os.environ.get("PIPESIM_CLI") or shutil.which("pipesim")
    if not program or not os.path.exists(program):
        pytest.skip("no pipesim program: set PIPESIM_CLI to build/cli/pipesim")

    def run(*args, expect_error=False):
        done = subprocess.run([program, *map(str, args)], capture_output=True, text=True,
                              timeout=60)
        if expect_error:
            assert done.returncode == 2, done.stdout
            return done.stderr
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    return run
