"""The wheel built from this tree and installed into a fresh venv with its declared
dependencies only (tests/tooling/test_wheel.py): install(base) -> what the tests need of it.
Prepared in the background as soon as a test that needs it is collected (tests/conftest.py)."""

import glob
import os
import pathlib
import subprocess
import sys
import types

from tests.support import ROOT


def install(base):
    """The wheel installed in a venv of its own under `base`; `cwd` a folder that is not the
    clone, `env` an activated venv's."""
    base = pathlib.Path(base)
    def quietly(*command, timeout):
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise AssertionError(done.stdout + done.stderr[-3000:])

    dist = base / "dist"
    quietly(sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
            "--wheel-dir", str(dist), ROOT, timeout=300)
    wheels = glob.glob(str(dist / "umcp-*.whl"))
    if len(wheels) != 1:
        raise AssertionError(wheels)
    venv = base / "venv"
    quietly(sys.executable, "-m", "venv", str(venv), timeout=120)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = str(bindir / "python")
    quietly(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheels[0], timeout=400)
    cwd = base / "elsewhere"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")  # as an activated venv or uvx has it
    return types.SimpleNamespace(umcp=str(bindir / "umcp"), python=python, cwd=cwd, env=env, venv=venv)
