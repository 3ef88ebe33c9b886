"""make repl PORT=/dev/ttyUSB0: the board's REPL through mpremote (Ctrl-] leaves).

PORT takes what deploy takes: a device path, `auto`, or an mpremote shortcut (u0, a0, c0).
UMCP_MPREMOTE (or --mpremote) names the program."""

import argparse
import os
import shlex
import subprocess
import sys

from ..paths import beside_python, hint, module_prog
from .deploy import connect_args
from .ports import port_problem


def main(argv=None, prog=module_prog("board.repl")):
    parser = argparse.ArgumentParser(prog=prog, description="The board's REPL through mpremote (Ctrl-] leaves).")
    parser.add_argument("--port", required=True, help="serial port, auto, or an mpremote shortcut (u0, a0, c0)")
    parser.add_argument("--mpremote", default=os.environ.get("UMCP_MPREMOTE") or beside_python("mpremote"))
    args = parser.parse_args(argv)
    problem = port_problem(args.port)  # not mpremote's "it may be in use by another program"
    if problem:
        sys.stderr.write("repl: %s\n" % problem)
        return 1
    command = shlex.split(args.mpremote) + connect_args(args.port) + ["repl"]
    try:
        return subprocess.call(command)
    except FileNotFoundError:
        sys.stderr.write("repl: %s not found (%s, or set UMCP_MPREMOTE)\n"
                         % (command[0], hint("run `make setup`", "install umcp again")))
        return 1


if __name__ == "__main__":
    sys.exit(main())
