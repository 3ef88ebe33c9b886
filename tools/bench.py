"""python -m tools.bench [--micropython PATH] (make bench)

Runs tools/bench_device.py inside CPython, the MicroPython unix port and the
MicroPython WebAssembly build, and prints its figures side by side: building a
full tools/list page with umcp against the floor (a bare json.dumps of the same
page), the heap each took, and one tools/call dispatch. Figures, not a test:
nothing here asserts on time.
"""

import argparse
import json
import os
import subprocess
import sys

from tools.mpy import ROOT

SCRIPT = os.path.join(ROOT, "tools", "bench_device.py")
LIB = os.path.join(ROOT, "lib")


def interpreters(micropython):
    """(column title, command, extra environment) of each interpreter."""
    return [
        ("CPython", [sys.executable, SCRIPT], {"PYTHONPATH": LIB}),
        ("MicroPython unix", [micropython, SCRIPT], {"MICROPYPATH": ".frozen:" + LIB}),
        ("MicroPython wasm", ["node", os.path.join(ROOT, "tools", "mpy", "run_wasm.mjs"), "--script", SCRIPT], {}),
    ]


def measure(command, extra_env):
    """The figures the bench script printed, or raise RuntimeError with its output."""
    env = dict(os.environ)
    env.update(extra_env)
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError((proc.stdout + proc.stderr).strip() or "exit status %d" % proc.returncode)
    return json.loads(lines[-1])


def _us(value):
    return "%.1f us" % value


def _kb(value):
    return "%.1f KB" % (value / 1024)


def _ratio(a, b):
    return "%.2fx" % (a / b) if b else "-"


ROWS = (
    ("tools/list page, umcp handle()", lambda r: _us(r["list_us"])),
    ("tools/list page, json.dumps (floor)", lambda r: _us(r["floor_us"])),
    ("  umcp / floor", lambda r: _ratio(r["list_us"], r["floor_us"])),
    ("heap for the page, umcp handle()", lambda r: _kb(r["list_heap"])),
    ("heap for the page, json.dumps (floor)", lambda r: _kb(r["floor_heap"])),
    ("  umcp / floor", lambda r: _ratio(r["list_heap"], r["floor_heap"])),
    ("tools/call, handle() to response", lambda r: _us(r["call_us"])),
)


def table(columns):
    """`columns`: [(title, results)] -> the printed table's lines."""
    first = max(len(label) for label, _ in ROWS) + 2
    cells = [[title, results["interpreter"]] + [cell(results) for _, cell in ROWS] for title, results in columns]
    width = max(len(c) for column in cells for c in column) + 2
    labels = ["", ""] + [label for label, _ in ROWS]
    return ["".join([labels[i].ljust(first)] + [column[i].ljust(width) for column in cells]).rstrip()
            for i in range(len(labels))]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description="tools/list and tools/call figures.")
    parser.add_argument("--micropython", default=os.path.join(ROOT, ".venv", "bin", "micropython"))
    args = parser.parse_args(argv)
    columns = []
    failed = False
    for title, command, extra_env in interpreters(args.micropython):
        try:
            columns.append((title, measure(command, extra_env)))
        except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
            print("%s: the bench did not run:\n%s\n" % (title, e))
            failed = True
    if columns:
        page = columns[0][1]
        print("tools/list page: %d-byte frame (xiaozhi envelope included, limit %d), %d of %d tools"
              % (page["frame_bytes"], page["page_limit"], page["tools_on_page"], page["tools_registered"]))
        print()
        print("\n".join(table(columns)))
        print()
        print("umcp's page is an already-parsed tools/list request through handle(): it hands the")
        print("transport the pieces of tool entries serialized once at registration and never builds")
        print("the page's text, which is why it beats the floor, a bare json.dumps of the same page")
        print("from objects. The tools/call tool does nothing.")
        print("Times are means over >= 0.2 s of runs. Heap: CPython's tracemalloc peak; MicroPython's")
        print("bytes allocated with the collector off (an upper bound of the peak).")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
