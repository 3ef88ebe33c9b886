"""The heap each module costs when first imported: make bench's per-import table.

A boot script (profile_script) replaces builtins.__import__ in the MicroPython unix port
with a wrapper that, around every first import of a module, collects and reads
gc.mem_alloc(): what the import left on the heap (its bytecode as loaded from .mpy, the
qstrs its names add, the objects its top level makes and keeps) with and without the
modules it imported first itself. It prints one line per module ("import-heap NAME SELF
TOTAL") and then runs the firmware as main.py would; tools/bench/firmware.py boots the
board through the full session with it, so that the modules a session loads only later
(the link, a photo's HTTP client) are counted too, and parse() reads the lines back.
"""

PREFIX = "import-heap "

# The wrapper allocates its own frame before the first reading and prints after the last,
# so its bookkeeping stays out of the figures (a few bytes at most). A relative import
# (level > 0) is named after the package it resolves in, as sys.modules keys it; `from .
# import x` first imports the package itself (loaded already), then x by its full name.
_SCRIPT = """import builtins, gc, sys
_import = builtins.__import__
_open = []
def _measured(name, *args):
    level = args[3] if len(args) > 3 else 0
    full = name
    if level:
        scope = args[0] or {}
        package = scope.get("__name__", "")
        if "__path__" not in scope:
            package = package.rpartition(".")[0]
        for _ in range(level - 1):
            package = package.rpartition(".")[0]
        full = package + "." + name if name else package
    if full in sys.modules:
        return _import(name, *args)
    frame = [full, 0, 0]
    _open.append(frame)
    gc.collect()
    frame[1] = gc.mem_alloc()
    try:
        return _import(name, *args)
    finally:
        gc.collect()
        total = gc.mem_alloc() - frame[1]
        _open.pop()
        if _open:
            _open[-1][2] += total
        print("%s%%s %%d %%d" %% (full, total - frame[2], total))
builtins.__import__ = _measured
%s
"""

BOOT = "import main\nmain.run()"  # what firmware/main.py does when run as the script


def profile_script(then=BOOT):
    """The boot script's text: the measuring wrapper installed, then `then` (Python code)."""
    return _SCRIPT % (PREFIX, then)


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
