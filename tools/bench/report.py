"""python -m tools.bench [--micropython PATH] (make bench)

Runs tools/bench/core.py inside CPython, the MicroPython unix port and the
MicroPython WebAssembly build, and prints its figures side by side: building a
full tools/list page with umcp against the floor (a bare json.dumps of the same
page), the heap each took, and one tools/call dispatch. Then the heap the whole
firmware uses in the unix port (tools/bench/firmware.py), and the bridge's figures
(tools/bench/bridge.py: a call through it against the same call straight to the
device, and many clients on several devices). Figures, not a test:
nothing here asserts on time.
"""

import argparse
import functools
import json
import os
import subprocess
import sys

from tools.bench import bridge as bench_bridge
from tools.bench import firmware as bench_firmware
from tools.board.deploy import DeployError
from tools.mpy import ROOT, micropython_env

SCRIPT = os.path.join(ROOT, "tools", "bench", "core.py")
LIB = os.path.join(ROOT, "lib")


def interpreters(micropython):
    """(column title, command, environment) of each interpreter."""
    return [
        ("CPython", [sys.executable, SCRIPT], dict(os.environ, PYTHONPATH=LIB)),
        ("MicroPython unix", [micropython, SCRIPT], micropython_env([LIB])),
        ("MicroPython wasm", ["node", os.path.join(ROOT, "tools", "mpy", "run_wasm.mjs"), "--script", SCRIPT],
         dict(os.environ)),
    ]


def measure(command, env):
    """The figures the bench script printed, or raise RuntimeError with its output."""
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


def core_table(micropython):
    """Print the MCP core's table; returns whether every interpreter ran, and the figures
    by interpreter."""
    columns = []
    failed = False
    for title, command, env in interpreters(micropython):
        try:
            columns.append((title, measure(command, env)))
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
    return not failed, dict(columns)


def firmware_table(figures):
    """The whole firmware's heap figures -> the printed table's lines."""
    rows = [
        ("heap in use after boot, initialize and tools/list", _kb(figures["connected"])),
        ("heap in use after %s" % ", ".join(name.rsplit(".", 1)[1] for name in figures["calls"]),
         _kb(figures["after_calls"])),
        ("  of which the simulated hardware (tools/hwsim)", _kb(figures["simulated_modules"])),
        ("smallest -X heapsize that connects and answers", "%s (to %d KB, %d runs)" % (
            _kb(figures["smallest_heapsize"]), bench_firmware.HEAPSIZE_STEP // 1024, figures["bisect_runs"])),
    ]
    first = max(len(label) for label, _ in rows) + 2
    return [label.ljust(first) + value for label, value in rows]


def word_size_note(core):
    """What the MCP core's heap figures say about a 32-bit build against the 64-bit unix port."""
    unix, wasm = core.get("MicroPython unix"), core.get("MicroPython wasm")
    if not (unix and wasm):
        return ["(the MCP core's figures for both MicroPython builds are needed to compare them)"]
    return ["How much less, on the MCP core (first table): building the tools/list page allocated",
            "%s in the 32-bit wasm build against %s in the unix port (%s), while the page's"
            % (_kb(wasm["list_heap"]), _kb(unix["list_heap"]), _ratio(wasm["list_heap"], unix["list_heap"])),
            "text alone (json.dumps) takes about the same in both (%s against %s). The firmware's"
            % (_kb(wasm["floor_heap"]), _kb(unix["floor_heap"])),
            "heap mixes both kinds: expect an ESP32 to need between about half and all of the above."]


def print_firmware(micropython, core):
    """Print the whole firmware's table; returns whether it ran."""
    print()
    print("Whole firmware, MicroPython unix port: the host board's files compiled as make deploy")
    print("stages them, against the local backend on loopback")
    print()
    try:
        figures = bench_firmware.measure(micropython)
    except (bench_firmware.FirmwareFailed, DeployError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        print("the firmware bench did not run:\n%s" % e)
        return False
    print("\n".join(firmware_table(figures)))
    print()
    lines = [
        "Heap in use: gc.mem_alloc() after gc.collect(), as self.get_system_info reports it from",
        "inside the firmware (run with -X heapsize=%dk; %d tools listed). The smallest heap is"
        % (figures["heapsize"] // 1024, figures["tools"]),
        "larger: what the firmware allocates on the way (the link's 4 KB line buffer at connection, a",
        "photo and its upload) needs room too, in one piece on a fragmented heap. On a board,",
        "machine, esp32, network, camera and neopixel are C modules in flash (subtract the hwsim",
        "line), and a frozen build (README) keeps the bytecode in flash as well.",
        "The unix port is a 64-bit build: its pointers and object headers take twice the bytes of",
        "an ESP32's and its heap blocks are 32 bytes, not 16, so an ESP32 needs less.",
    ]
    print("\n".join(lines + word_size_note(core)))
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench",
                                     description="MCP core and whole-firmware figures.")
    parser.add_argument("--micropython", default=os.path.join(ROOT, ".venv", "bin", "micropython"))
    bench_bridge.add_arguments(parser)
    args = parser.parse_args(argv)
    core_ran, core = core_table(args.micropython)
    firmware_ran = print_firmware(args.micropython, core)
    print()
    bridge_ran = bench_bridge.run(args, out=functools.partial(print, flush=True))
    return 0 if core_ran and firmware_ran and bridge_ran else 1


if __name__ == "__main__":
    sys.exit(main())
