"""umcp COMMAND [OPTIONS]: the host programs as one command, as pip and uvx install it
(pyproject.toml's [project.scripts]). Each command is a module of this package and takes
that module's options; in a clone, `python -m tools.<module>` and the make targets run
the same code.

    sim        the local backend and a simulated board (yours: --board, --config): one session
    backend    the local backend for real boards, with its console and web console
    bridge     every board that connects as one MCP server, over stdio or HTTP
    discover   the boards on the network serving MCP over HTTP, found by mDNS
    deploy     compile the firmware and copy it with config.json onto a board
    catalogue  write the tool catalogue for a config.json (beside it on the board)
    flash      erase a board and write a MicroPython image with esptool
    repl       the board's REPL through mpremote
    boards     the boards, chips and part types a config.json may name
    doctor     the serial ports; on a board: its MicroPython, heap, firmware and config.json
"""

import importlib
import os
import re
import sys

from .paths import LIB

# command: (module of this package, its entry, what it does)
COMMANDS = {
    "sim": ("sim.demo", "main", "the local backend and a simulated board (yours: --board, --config): one session"),
    "backend": ("backend.__main__", "run", "the local backend for real boards, with its console and web console"),
    "bridge": ("bridge.__main__", "run", "every board that connects as one MCP server, over stdio or HTTP"),
    "discover": ("bridge.discover", "main", "the boards on the network serving MCP over HTTP, found by mDNS"),
    "deploy": ("board.deploy", "main", "compile the firmware and copy it with config.json onto a board"),
    "catalogue": ("board.catalogue", "main", "write the tool catalogue for a config.json (beside it on the board)"),
    "flash": ("board.flash", "main", "erase a board and write a MicroPython image with esptool"),
    "repl": ("board.repl", "main", "the board's REPL through mpremote"),
    "boards": ("board.boards", "main", "the boards, chips and part types a config.json may name"),
    "doctor": ("board.doctor", "main", "the serial ports; on a board: its MicroPython, heap, firmware and config.json"),
}


def usage():
    lines = ["usage: umcp COMMAND [OPTIONS]   (umcp COMMAND --help: its options)", "", "commands:"]
    lines += ["  %-9s %s" % (name, what) for name, (_, _, what) in COMMANDS.items()]
    lines += ["", "umcp --version: the release. The guides: README.md and docs/ in umcp's repository."]
    return "\n".join(lines)


def version():
    """umcp's release: umcp.__version__ of the device core this copy ships (not imported:
    the host's sys.path stays as it is)."""
    with open(os.path.join(LIB, "umcp", "__init__.py")) as source:
        return re.search(r'^__version__ = "([^"]+)"', source.read(), re.M).group(1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--version"]:
        print("umcp %s" % version())
        return 0
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        sys.stderr.write("umcp: no command %r; commands: %s\n" % (name, ", ".join(COMMANDS)))
        return 2
    module, entry, _ = COMMANDS[name]
    command = getattr(importlib.import_module("." + module, __package__), entry)
    return command(rest, prog="umcp " + name) or 0


if __name__ == "__main__":
    sys.exit(main())
