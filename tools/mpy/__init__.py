"""Running device code inside real MicroPython on the host.

`compileall` checks every device file with mpy-cross, `rununix` and
`runwasm.mjs` run the portable test cases (tests/portable) inside the MicroPython
unix port and the WebAssembly build. The names below are shared by them.
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Everything that runs under MicroPython: what goes onto the board, the simulated
# hardware (the pty board's start among it), the portable test cases themselves and the bench's scripts.
DEVICE_TREES = ("lib", "firmware", "tools/sim/hwsim", "tests/portable", "tools/bench/scripts")

PORTABLE_TESTS = os.path.join(ROOT, "tests", "portable")

# The simulator's sys.path (docs/DESIGN.md), after the test folder; runwasm.mjs
# builds the same list inside its in-memory filesystem.
SEARCH_PATH = ("firmware", "lib", "tools/sim/hwsim")


def micropython_env(path):
    """The environment that runs the unix port with `path` (folders) as its module path.

    MICROPYPATH replaces the default path, so ".frozen" (the port's own asyncio and
    friends) goes first. Standard library only: tools.sim uses it too."""
    return dict(os.environ, MICROPYPATH=os.pathsep.join([".frozen"] + list(path)))


def search_path(test_dir):
    """Absolute module search path for running the test modules in `test_dir`."""
    heads = [test_dir] if test_dir == PORTABLE_TESTS else [test_dir, PORTABLE_TESTS]
    return heads + [os.path.normpath(os.path.join(ROOT, p)) for p in SEARCH_PATH]
