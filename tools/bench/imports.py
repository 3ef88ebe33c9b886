"""The heap each module costs when first imported: make bench's per-import table.

A boot script (scripts/importprofile.py) replaces builtins.__import__ in the MicroPython
unix port with a wrapper that, around every first import of a module, collects and reads
gc.mem_alloc(): what the import left on the heap (its bytecode as loaded from .mpy, the
qstrs its names add, the objects its top level makes and keeps) with and without the
modules it imported first itself. It prints one line per module ("import-heap NAME SELF
TOTAL") and then runs the firmware as main.py would; tools/bench/firmware.py boots the
board through the full session with it, so that the modules a session loads only later
(the link, a photo's HTTP client) are counted too, and parse() reads the lines back.
"""

import os

PREFIX = "import-heap "  # what scripts/importprofile.py prints
SCRIPT = "importprofile.py"  # in tools/bench/scripts/: the boot script that measures
PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts", SCRIPT)


def profile_script():
    """The boot script's text (scripts/importprofile.py), for a board's folder."""
    with open(PATH) as source:
        return source.read()


def parse(lines):
    """[(module, self bytes, bytes with what it imported first)] in the order the imports
    ended, each module once (its first import: a board booted again imports it again)."""
    rows, seen = [], set()
    for line in lines:
        if not line.startswith(PREFIX):
            continue
        name, own, total = line[len(PREFIX):].split()
        if name not in seen:
            seen.add(name)
            rows.append((name, int(own), int(total)))
    return rows


def table(rows, top=15, simulated=()):
    """The printed table's lines: the `top` modules costing most by their own share, then
    the sum over every module measured; `simulated` names modules a board has as C code
    (their share is marked, and left out of the firmware's sum)."""
    ranked = sorted(rows, key=lambda row: -row[1])
    lines = ["| module | own heap | with what it imported first |", "|---|---:|---:|"]
    for name, own, total in ranked[:top]:
        mark = " (simulated hardware)" if name in simulated else ""
        lines.append("| %s%s | %d B | %d B |" % (name, mark, own, total))
    firmware = sum(own for name, own, _ in rows if name not in simulated)
    hardware = sum(own for name, own, _ in rows if name in simulated)
    lines.append("| %d modules in all: the firmware's | %d B | |" % (len(rows), firmware))
    if simulated:
        lines.append("| the simulated hardware's (nothing on a board) | %d B | |" % hardware)
    return lines
