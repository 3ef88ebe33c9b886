"""python -m tools.mpy.rununix --micropython .venv/bin/micropython [--tests DIR]

Runs the portable test cases (tests/portable/test_*.py) inside the MicroPython unix
port with tests/portable/runner.py; the module path is the simulator's. Prints
each failure with its traceback and `N passed, N failed`; exits 1 if a test
failed, nothing ran, or the run did not finish in time.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from . import PORTABLE_TESTS, ROOT, micropython_env, search_path

RUNNER = os.path.join(PORTABLE_TESTS, "runner.py")
# Every case runs in one interpreter, and the simulated LCD keeps its controller's whole
# pixel memory (320x240x2 bytes, one block): the 32-bit port's default 1 MB heap, fragmented
# by the cases before, cannot always give it. The cases test behaviour; heap figures come
# from make bench at the heaps the issues name.
HEAPSIZE = "heapsize=4m"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m tools.mpy.rununix", description="Run the portable tests in the MicroPython unix port.")
    parser.add_argument("--micropython", default=os.path.join(ROOT, ".venv", "bin", "micropython"))
    parser.add_argument("--tests", default=PORTABLE_TESTS, help="folder of test_*.py modules")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for the whole run")
    args = parser.parse_args(argv)
    test_dir = os.path.abspath(args.tests)
    # Absolute, because the port runs in a scratch directory; a bare name is looked up on PATH.
    micropython = os.path.abspath(shutil.which(args.micropython) or args.micropython)
    env = micropython_env(search_path(test_dir))
    try:
        # A scratch working directory: files a test writes by relative path stay out of the tree.
        with tempfile.TemporaryDirectory(prefix="umcp-device-") as scratch:
            return subprocess.run([micropython, "-X", HEAPSIZE, RUNNER, test_dir], cwd=scratch, env=env,
                                  timeout=args.timeout).returncode
    except subprocess.TimeoutExpired:
        print("rununix: the portable tests did not finish within %g s" % args.timeout)
    except OSError as e:
        print("rununix: cannot start %s: %s" % (micropython, e))
    return 1


if __name__ == "__main__":
    sys.exit(main())
