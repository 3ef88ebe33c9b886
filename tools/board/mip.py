"""python -m tools.board.mip [--check]: writes the package.json files MicroPython's mip
installs from (`mpremote mip install github:<owner>/<repo>/<folder>`, or mip.install() on a
board), so that umcp is used without cloning the repository:

    lib/umcp/package.json   the MCP core alone: umcp/ into the board's /lib
    lib/package.json        the firmware: every package of lib/ (the simulated host board
                            apart) into /lib; its boot file is firmware/main.py, a second
                            install with --target / (docs/boards.md)

Each lists its files with URLs relative to itself (mip and mpremote 1.25+ resolve those
against the package.json's own address), so a fork installs from itself. They sit beside
their files, below npm's package.json at the root, and make deploy copies only .py files:
the board never gets them. --check exits 1 when a file is not what this would write
(make test runs it through tests/tooling/test_mip.py).
"""

import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(ROOT, "lib")
SIMULATED_ONLY = ("boards/host.py",)  # needs tools/sim/hwsim: no board has it


def version():
    """umcp.__version__, read from its source."""
    with open(os.path.join(LIB, "umcp", "__init__.py")) as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def python_files(folder):
    """The .py files under `folder`, relative to it with "/", sorted."""
    found = []
    for where, subfolders, names in os.walk(folder):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        found += [os.path.relpath(os.path.join(where, n), folder).replace(os.sep, "/")
                  for n in names if n.endswith(".py")]
    return sorted(found)


def core_package():
    """lib/umcp/package.json: umcp's files, installed as umcp/<file>."""
    files = python_files(os.path.join(LIB, "umcp"))
    return {"urls": [["umcp/" + name, name] for name in files], "version": version()}


def firmware_package():
    """lib/package.json: every package of lib/, as laid out under the board's /lib."""
    files = [name for name in python_files(LIB) if "/" in name and name not in SIMULATED_ONLY]
    return {"urls": [[name, name] for name in files], "version": version()}


PACKAGES = {os.path.join("lib", "umcp", "package.json"): core_package,
            os.path.join("lib", "package.json"): firmware_package}


def text(package):
    """The JSON text, one URL pair a line."""
    urls = ",\n".join("  " + json.dumps(pair) for pair in package["urls"])
    return '{\n "urls": [\n%s\n ],\n "version": %s\n}\n' % (urls, json.dumps(package["version"]))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.board.mip", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether the files are up to date")
    args = parser.parse_args(argv)
    stale = []
    for path, make in PACKAGES.items():
        wanted = text(make())
        full = os.path.join(ROOT, path)
        try:
            with open(full) as f:
                current = f.read()
        except OSError:
            current = None
        if current == wanted:
            continue
        if args.check:
            stale.append(path)
        else:
            with open(full, "w") as f:
                f.write(wanted)
            print("wrote %s" % path)
    if stale:
        print("out of date: %s (run python -m tools.board.mip)" % ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
