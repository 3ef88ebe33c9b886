"""umcp boards: what config.json may name, from the firmware this copy ships: the boards
(lib/boards: config.json's "board", deploy's and sim's --board), the chips (config.json's
"chip": lib/parts/check.py's CHIPS, the pins a generic board's parts are checked against)
and the part types (config.json's "parts": check.py's TYPES, each with its options).

The boards are read, not imported (a board module imports its hardware); the parts' check
is imported from lib/ as the board imports it (tools.devicelib)."""

import argparse
import ast
import json
import os
import sys

from .. import devicelib  # noqa: F401 (lib/ on sys.path: the parts' check)
from ..paths import LIB, module_prog

BOARDS_DIR = os.path.join(LIB, "boards")
SHARED = ("__init__.py", "setup.py")  # lib/boards/ modules that are not boards (deploy's BOARDS_SHARED)
ABOUT_MAX = 64


def boards():
    """[(name, what it is)] of every board in lib/boards, sorted: what its docstring's first
    line says, up to its first colon or bracket."""
    found = []
    for name in sorted(os.listdir(BOARDS_DIR)):
        if not name.endswith(".py") or name in SHARED:
            continue
        with open(os.path.join(BOARDS_DIR, name), encoding="utf-8") as source:
            doc = ast.get_docstring(ast.parse(source.read())) or ""
        about = doc.split("\n")[0].split(": ")[0].split(" (")[0].rstrip(" ,.:")
        if len(about) > ABOUT_MAX:
            about = about[:ABOUT_MAX].rsplit(" ", 1)[0] + "..."
        found.append((name[:-3], about))
    return found


def chips():
    """The chips config.json's "chip" may name."""
    from parts import check

    return sorted(check.CHIPS)


def part_types():
    """[(type, its options as text)] in parts.types' order: a required option bare, the
    others with their default as JSON ("invert=false"), those without one with "?"."""
    from parts import types

    listed = []
    for kind, entry in types.TYPES.items():
        options = []
        for option in entry[1]:
            name, default = option[0], option[2]
            options.append(name if default == types.REQUIRED else
                           "%s?" % name if default is None else
                           "%s=%s" % (name, default if isinstance(default, str) else json.dumps(default)))
        listed.append((kind, ", ".join(options)))
    return listed


def listing():
    """The whole listing, as lines."""
    lines = ['boards (config.json "board"; umcp deploy --board NAME, umcp sim --board NAME):']
    lines += ["  %-16s %s" % entry for entry in boards()]
    lines += ['chips (config.json "chip"; the generic board checks its parts\' pins against it):',
              "  " + " ".join(chips()),
              'part types (config.json "parts": {"type": ..., "name": ..., and these}; '
              'an option without "=" or "?" is required):']
    lines += ["  %-9s %s" % entry for entry in part_types()]
    return lines


def main(argv=None, prog=module_prog("board.boards")):
    """The command: `umcp boards`."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.parse_args(argv)
    print("\n".join(listing()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
