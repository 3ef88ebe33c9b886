"""make bench's per-import table (tools/bench/imports.py): replaces builtins.__import__ with a
wrapper that, around every first import of a module, collects and reads gc.mem_alloc(),
printing one line per module ("import-heap NAME SELF TOTAL": what the import left on the
heap without and with the modules it imported first itself), then runs the program: the
file named by the argument, else the firmware as firmware/main.py runs it.

The wrapper allocates its own frame before the first reading and prints after the last,
so its bookkeeping stays out of the figures (a few bytes at most). A relative import
(level > 0) is named after the package it resolves in, as sys.modules keys it; `from .
import x` first imports the package itself (loaded already), then x by its full name.
"""
import builtins
import gc
import sys

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
        print("import-heap %s %d %d" % (full, total - frame[2], total))


builtins.__import__ = _measured
if len(sys.argv) > 1:
    with open(sys.argv[1]) as _program:
        exec(_program.read())
else:
    import main

    main.run()
