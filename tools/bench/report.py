"""python -m tools.bench [--micropython PATH] [--only PARTS] [--record FILE] (make bench)

Runs tools/bench/core.py inside CPython, the MicroPython unix port and the
MicroPython WebAssembly build, and prints its figures side by side: building a
full tools/list page with umcp against the floor (a bare json.dumps of the same
page), the heap each took, and one tools/call dispatch. Then MCP round trips over the
device's WebSocket link on loopback (tools/bench/link.py), and a tools/call over each
xiaozhi transport (tools/bench/transport.py). Then the heap the whole
firmware uses in the unix port through a full session (tools/bench/firmware.py), as
.py sources and as the .mpy files make deploy copies. Then the bridge's figures
(tools/bench/bridge.py: a call through it against the same call straight to the device,
and many clients on several devices), and a board on its serial line through the bridge
(tools/bench/serial.py: the QEMU board's round trips, the serial session's heap beside the
xiaozhi link's). Last, the web console's speed.
Figures, not a test: nothing here asserts on time.

--only core,link,... runs some parts only. --record FILE also writes what each part
printed to a Markdown file headed with the machine, date and commit (tools/bench/record.py;
make bench: docs/bench/latest.md).

The unix port: --micropython, else UMCP_MICROPYTHON, else the venv's 64-bit wheel. A
32-bit build (UMCP_MICROPYTHON=/path/to/micropython-x86) gives an ESP32's object sizes.
"""

import argparse
import functools
import json
import os
import subprocess
import sys

from . import bridge as bench_bridge
from . import firmware as bench_firmware
from . import generic as bench_generic
from . import imports as bench_imports
from . import link as bench_link
from . import record
from . import serial as bench_serial
from . import transport as bench_transport
from ..board.deploy import DeployError
from ..mpy import ROOT, micropython_env

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
        print("umcp's page is an already-parsed tools/list request through handle(): each tool's")
        print("entry is serialized as the page is built (nothing of it is kept between requests, so")
        print("the tools hold no JSON text on the heap) and handed to the transport as a piece; the")
        print("page's text is never joined. The floor is a bare json.dumps of the same page from")
        print("ready-made objects. The tools/call tool does nothing.")
        print("Times are means over >= 0.2 s of runs. Heap: CPython's tracemalloc peak; MicroPython's")
        print("bytes allocated with the collector off (an upper bound of the peak).")
    return not failed, dict(columns)


FORM_TITLES = {"py": ".py sources", "mpy": ".mpy (make deploy)", "romfs": "ROMFS (deploy ROMFS=1)",
               "mpy_http": ".mpy + mcp_http", "romfs_http": "ROMFS + mcp_http",
               "mpy_board": ".mpy, hardware frozen", "romfs_board": "ROMFS, hardware frozen",
               "frozen": "frozen (own build)"}


def binary_label(figures):
    """Which MicroPython the firmware figures come from, in words."""
    if figures["bits"] == 32:
        kind = "32-bit unix port: an ESP32's object sizes"
    else:
        kind = "64-bit unix port: larger objects than an ESP32's (UMCP_MICROPYTHON picks a 32-bit build)"
    return "%s (%s)" % (figures["micropython"], kind)


def _simulated(form):
    """Bytes of a form's heap figures that the simulated hardware holds."""
    return form["simulated"]["modules"] + form["simulated"]["state"]


def firmware_table(figures):
    """The whole firmware's heap figures, a column per form -> the printed table's lines."""
    forms = [form for form in bench_firmware.FORMS + ("mpy_board", "romfs_board", "frozen") if form in figures]
    calls = len(figures["calls"])
    rows = [
        ("heap in use after boot, initialize and tools/list",
         lambda f: _kb(f["connected"])),
        ("  of which the simulated hardware: modules + kept state",
         lambda f: "%s + %s" % (_kb(f["simulated"]["modules"]), _kb(f["simulated"]["state"]))),
        ("  the firmware's own (a board's figure)",
         lambda f: _kb(f["connected"] - _simulated(f))),
        ("heap in use after %d calls and %d reconnections" % (calls, figures["reconnects"]),
         lambda f: _kb(f["after_calls"])),
        ("heap in use after %d more calls (drift: at most 1 KB)" % bench_firmware.LONG_CALLS,
         lambda f: "%s (%+.1f KB)" % (_kb(f["after_long"]), (f["after_long"] - f["after_calls"]) / 1024)
         if "after_long" in f else "-"),
        ("smallest -X heapsize completing the full session",
         lambda f: "%s (%d runs)" % (_kb(f["smallest_heapsize"]), f["bisect_runs"])),
        ("  less the simulated hardware (a board's figure)",
         lambda f: _kb(f["smallest_heapsize"] - _simulated(f))),
    ]
    first = max(len(label) for label, _ in rows) + 2
    cells = [[FORM_TITLES[form]] + [cell(figures[form]) for _, cell in rows] for form in forms]
    width = max(len(c) for column in cells for c in column) + 2
    labels = [""] + [label for label, _ in rows]
    return ["".join([labels[i].ljust(first)] + [column[i].ljust(width) for column in cells]).rstrip()
            for i in range(len(labels))]


def endpoint_table(figures):
    """What the MCP endpoint link adds to the forms measured with it -> the printed lines
    (none when no form was)."""
    forms = [form for form in bench_firmware.FORMS + ("mpy_board",)
             if form in figures and form + bench_firmware.ENDPOINT in figures]
    if not forms:
        return []
    budget = bench_firmware.ENDPOINT_BUDGET

    def both(form):
        return figures[form + bench_firmware.ENDPOINT]

    def added(form):
        return both(form)["fine_heapsize"] - figures[form]["fine_heapsize"]

    rows = [
        ("heap in use at rest: the xiaozhi link alone", lambda f: _kb(figures[f]["connected"])),
        ("  with an MCP endpoint link beside it", lambda f: _kb(both(f)["connected"])),
        ("  one endpoint link, resident (code, session, link)",
         lambda f: "%+.1f KB" % ((both(f)["connected"] - figures[f]["connected"]) / 1024)),
        ("heap in use during a call through the endpoint",
         lambda f: "%s (%+.1f KB)" % (_kb(both(f)["endpoint_call"]),
                                      (both(f)["endpoint_call"] - both(f)["connected"]) / 1024)),
        ("smallest -X heapsize (to %d B), the xiaozhi link alone" % bench_firmware.FINE_STEP,
         lambda f: "%s (4 KB steps: %s)" % (_kb(figures[f]["fine_heapsize"]), _kb(figures[f]["smallest_heapsize"]))),
        ("  both links, the full session and the endpoint's",
         lambda f: "%s (4 KB steps: %s)" % (_kb(both(f)["fine_heapsize"]), _kb(both(f)["smallest_heapsize"]))),
        ("  both - xiaozhi alone (target <= %d KB)" % (budget // 1024),
         lambda f: "%+.1f KB %s" % (added(f) / 1024, "met" if added(f) <= budget else "MISSED")),
    ]
    first = max(len(label) for label, _ in rows) + 2
    cells = [[FORM_TITLES[form]] + [cell(form) for _, cell in rows] for form in forms]
    width = max(len(c) for column in cells for c in column) + 2
    labels = [""] + [label for label, _ in rows]
    return ["".join([labels[i].ljust(first)] + [column[i].ljust(width) for column in cells]).rstrip()
            for i in range(len(labels))]


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


def imports_lines(imports):
    """The per-import table (tools/bench/imports.py) of the measuring form, with its note."""
    where = ".mpy files, hardware frozen" if imports["form"] == "mpy_board" else ".mpy files"
    lines = ["Heap per module at its first import (%s, %s; the full session's boots):"
             % (where, imports["micropython"]), ""]
    lines += bench_imports.table(imports["rows"], simulated=bench_firmware.SIMULATED_MODULES
                                 + SIMULATED_EXTRA)
    lines += ["", "Own heap: gc.mem_alloc() after a collection, after the import less before it, less",
              "what the modules it imported first took (their bytecode, the qstrs of their names, what",
              "their top level keeps). umcpfw.boot is dropped once the board has started: its own",
              "share leaves the heap again. MicroPython keeps the names it interns in pools that double",
              "(on the 32-bit port: 640 names, about 4.5 KB, once 620 are interned): the module whose",
              "names open a pool pays for it, so a large share can be many modules' names (the qstr",
              "rows of the generic board's table say where the firmware stands)."]
    return lines


def fuzz_lines(fuzz):
    """The measuring form's fuzz (tools/bench/fuzz.py), in words."""
    return ["Fuzz, .mpy files with the hardware frozen, at the smallest heap plus %s (-X heapsize=%d):"
            % (_kb(bench_firmware.FUZZ_HEADROOM), fuzz["heapsize"]),
            "%d hostile messages within the %s-byte limit the device announced: %d of %d requests"
            % (fuzz["sent"], fuzz["limit"], fuzz["answered"], fuzz["requests"]),
            "answered with their id (%d unanswered, %d out of memory), %d of %d null-id errors owed,"
            % (fuzz["unanswered"], fuzz["out_of_memory"], fuzz["null_errors"], fuzz["expected_null"]),
            "%d link drop(s) other than RFC 6455's 1009 for a message over the limit, %d unreadable frame(s)."
            % (fuzz["drops"], fuzz["bad"])] + list(fuzz["problems"])


# Modules of tools/sim/hwsim beside SIMULATED_MODULES that the host board imports.
SIMULATED_EXTRA = ("simhistory", "simoled", "simlcd", "simspi", "siminputs", "dht", "onewire", "ds18x20")


def http_growth(figures):
    """What enabling the board's own MCP endpoint adds, .mpy and ROMFS (target: 8 KB)."""
    lines = []
    for plain, http in (("mpy", "mpy_http"), ("romfs", "romfs_http")):
        if plain in figures and http in figures:
            a, b = figures[plain], figures[http]
            lines.append("%s: mcp_http adds %s after boot, %s after the session, %s to the smallest heap "
                         "(target: at most 8 KB)" % (FORM_TITLES[plain].split(" (")[0], _kb(b["connected"] - a["connected"]),
                                                    _kb(b["after_calls"] - a["after_calls"]),
                                                    _kb(b["smallest_heapsize"] - a["smallest_heapsize"])))
            if "simulated_network" in b:
                lines.append("  of that, the simulated network module, which setting the host name loads on the host "
                             "board (in flash on a board): %s" % _kb(b["simulated_network"]))
            if "http_in_use" in b:
                lines.append("  in use: %s while a client is served (its code loaded, two connections, a "
                             "call), %s over its own heap after boot" % (_kb(b["http_in_use"]),
                                                                        _kb(b["http_in_use"] - b["connected"])))
    board = figures.get("mpy_board_http")
    if board:
        base, listening, used = board["baseline"], board["listening"], board["used"]
        lines.append(".mpy, hardware frozen (a board's network module is C: none of it on the heap), bisected to %s:"
                     % _kb(bench_firmware.FINE_STEP))
        lines.append("  mcp_http enabled, no HTTP client: %s after boot, %s to the smallest heap (target: at most 8 KB)"
                     % (_kb(listening["connected"] - base["connected"]),
                        _kb(listening["smallest_heapsize"] - base["smallest_heapsize"])))
        lines.append("  and an HTTP client served in the session: %s to the smallest heap%s"
                     % (_kb(used["smallest_heapsize"] - base["smallest_heapsize"]),
                        "; while it is served, %s in use over its heap after boot"
                        % _kb(used["http_in_use"] - used["connected"]) if used.get("http_in_use") else ""))
    if lines:
        lines = ["\"+ mcp_http\": config.json's mcp_http enabled, and a client using it in the session (a",
                 "2026-07-28 discover, list and call; a legacy session with its GET stream, a list, a call,",
                 "DELETE: tools/bench/firmware.py's http_exchanges). The session ends with a restart, so",
                 "\"after the session\" is the endpoint listening, unused since boot; the smallest heap is",
                 "the one that also serves the HTTP client (the endpoint's code loaded at its first request;",
                 "dropped again once idle for umcpfw.mcphttp.IDLE_S seconds). \"In use\": the heap",
                 "self.get_system_info reports through the endpoint, on the legacy session with its GET",
                 "stream open; the per-request figures are make bench's link table (tools/bench/http_heap.py)."] + lines
    return lines


def print_firmware(micropython, core, frozen=None, hardware_frozen=None):
    """Print the whole firmware's table; returns whether it ran."""
    print()
    print("Whole firmware on the host board against the local backend on loopback, full session:")
    print("hello, initialize, every tools/list page (8000 bytes), every common and board tool (a")
    print("photo, an upgrade from a URL that answers 404), reconnections")
    try:
        figures = bench_firmware.measure(micropython, frozen=frozen, hardware_frozen=hardware_frozen)
    except (bench_firmware.FirmwareFailed, DeployError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        print("the firmware bench did not run:\n%s" % e)
        return False
    print("MicroPython: " + binary_label(figures))
    print()
    print("\n".join(firmware_table(figures)))
    print()
    lines = [
        "Heap in use: gc.mem_alloc() after gc.collect(), as self.get_system_info reports it from",
        "inside the firmware (run with -X heapsize=%dk; %d tools listed). The smallest heap is"
        % (figures["heapsize"] // 1024, figures["mpy"]["tools"]),
        "bisected to %d KB: what the session allocates on the way (a photo and its upload, the"
        % (bench_firmware.HEAPSIZE_STEP // 1024),
        "download code, messages) needs room too, in one piece on a fragmented heap. On a board,",
        "machine, esp32, network, camera and neopixel are C modules in flash, with their state",
        "in silicon: the simulated hardware's share (its modules, loaded as the firmware is, and",
        "what it keeps of the board's start-up, measured in a run of its own) is left out of the",
        "board's figures. ROMFS or a frozen build (docs/boards.md) keeps the bytecode in flash as well.",
        "ROMFS: the .mpy files in a ROMFS image (mpremote romfs build) mounted at /rom and run in",
        "place. The unix port has no flash, so the image is read into the heap first; its %s"
        % _kb(figures["romfs"]["image_heap"]) if "romfs" in figures else "",
        "are left out of the ROMFS column, as a board keeps the image in flash." if "romfs" in figures else "",
    ]
    endpoint = endpoint_table(figures)
    if endpoint:
        lines += ["", "The MCP endpoint link (config.json's mcp_endpoint, to the backend's endpoint, every",
                  "tool offered there): the same session over the xiaozhi link, plus the endpoint's",
                  "initialize, tools/list and a call; at rest and the resident figure read over the",
                  "xiaozhi link, the call's through the endpoint (its get_system_info), same binary, same run:",
                  ""] + endpoint + [""]
    if "frozen" in figures:
        lines += ["Frozen: %s," % figures["frozen"]["micropython"],
                  "a unix port built with tools/bench/unix_frozen_manifest.py (the firmware and the",
                  "simulated hardware frozen in), running main.py alone."]
    if "mpy_board" in figures:
        lines += ["\".mpy, hardware frozen\": %s running the .mpy files make deploy copies, with"
                  % figures["mpy_board"]["micropython"],
                  "asyncio and the simulated hardware frozen: the .mpy form as a board without PSRAM",
                  "would hold it, from a build of tools/bench/unix_hwsim_manifest.py (a build with the",
                  "firmware frozen too keeps the firmware's names in its image and flatters this column)."]
    if "romfs_board" in figures:
        lines += ["\"ROMFS, hardware frozen\": the ROMFS image on the same binary, the form closest to a",
                  "board without PSRAM running ROMFS (the frozen simulated hardware's modules and state",
                  "still take the heap the simulated-hardware row says; a board has them in C)."]
    lines = [line for line in lines if line]
    lines += http_growth(figures)
    if "fuzz" in figures:
        lines += [""] + fuzz_lines(figures["fuzz"])
    if "imports" in figures:
        lines += [""] + imports_lines(figures["imports"])
    if figures["bits"] != 32:
        lines += [
            "This unix port is a 64-bit build: its pointers and object headers take twice the bytes",
            "of an ESP32's and its heap blocks are 32 bytes, not 16, so an ESP32 needs less.",
        ]
        lines += word_size_note(core)
    print("\n".join(lines))
    return True


WEB_TEST = "tests/backend/test_web_console.py::test_twenty_devices_usable_within_a_second_and_a_slider_round_trip"
WEB_TIMINGS = os.path.join(ROOT, "build", "artifacts", "web-timings.json")


def print_web():
    """The web console's speed, from its browser test (run here): page usable with 20
    simulated devices online, and a slider's effect shown by the device."""
    print()
    print("Web console, headless Chromium against the local backend and 20 simulated devices on")
    print("loopback (%s)" % WEB_TEST.split("::")[1])
    print()
    try:
        os.remove(WEB_TIMINGS)
    except FileNotFoundError:
        pass
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", WEB_TEST],
                          cwd=ROOT, capture_output=True, text=True)
    try:
        with open(WEB_TIMINGS) as f:
            figures = json.load(f)
        usable, effect, worst = (figures["page_usable_ms"], figures["slider_to_device_ms_median"],
                                 figures["slider_to_device_ms_max"])
    except (OSError, ValueError, KeyError):
        print("the browser test did not run:\n%s" % (done.stdout[-3000:] + done.stderr[-2000:]))
        return False
    print("  page usable (20 devices listed, the first one's tools ready)  %7.0f ms   target < 1000 ms  %s"
          % (usable, "met" if usable < 1000 else "MISSED"))
    print("  slider let go -> value shown by the device (median)           %7.1f ms   target <  100 ms  %s"
          % (effect, "met" if effect < 100 else "MISSED"))
    print("  slider let go -> value shown by the device (worst of 7)       %7.1f ms" % worst)
    print()
    print("Usable: performance.now() at the first moment the page lists every device and the selected")
    print("device's tool forms are rendered, from navigation start (a fresh browser profile). Slider:")
    print("from the change event to the device card showing the value the device reported")
    print("(self.get_device_status, re-read after the call); both measured inside the page.")
    if done.returncode != 0:
        print("the browser test failed:\n%s" % done.stdout[-3000:])
        return False
    return True


PARTS = ("core", "link", "transport", "firmware", "generic", "bridge", "serial", "web")
TITLES = {
    "core": "MCP core: a tools/list page and a tools/call, CPython and MicroPython",
    "link": "Round trips over the device's WebSocket link",
    "transport": "tools/call over each xiaozhi transport",
    "firmware": "Whole firmware: heap through a full session",
    "generic": "The generic board: ten parts beside the host board, and each part type's cost",
    "bridge": "The bridge: one call against the floor, and many clients",
    "serial": "A board on its serial line (bridge --serial, the QEMU board): round trips and heap",
    "web": "Web console: 20 devices",
}


def parse_parts(text):
    """--only's comma-separated part names, in the bench's own order; ValueError if unknown."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in PARTS]
    if unknown or not names:
        raise ValueError("unknown part %s: choose from %s" % (", ".join(unknown) or "(none)", ", ".join(PARTS)))
    return [part for part in PARTS if part in names]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench",
                                     description="MCP core and whole-firmware figures.")
    parser.add_argument("--micropython", default=bench_firmware.default_micropython(),
                        help="MicroPython unix port binary (default: UMCP_MICROPYTHON, else the venv's)")
    parser.add_argument("--frozen", default=bench_firmware.default_frozen(), metavar="BIN",
                        help="a unix port with the firmware frozen in (tools/bench/unix_frozen_manifest.py; "
                             "default: UMCP_MICROPYTHON_FROZEN): adds a frozen column")
    parser.add_argument("--hardware-frozen", default=bench_firmware.default_hardware_frozen(), metavar="BIN",
                        help="a unix port with the simulated hardware alone frozen in "
                             "(tools/bench/unix_hwsim_manifest.py; default: UMCP_MICROPYTHON_HWSIM): "
                             "the measuring form's column (else --frozen's binary runs it)")
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
    facts = record.machine_facts(args.micropython, args.frozen, wasm=True) if args.record else None
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
            elif part == "transport":
                section.ran = bench_transport.main() == 0
            elif part == "firmware":
                section.ran = print_firmware(args.micropython, core, args.frozen, args.hardware_frozen)
            elif part == "generic":
                section.ran = bench_generic.print_generic(args.micropython)
            elif part == "bridge":
                section.ran = bench_bridge.run(args, out=functools.partial(print, flush=True))
            elif part == "serial":
                section.ran = bench_serial.print_serial(args.micropython)
            else:
                section.ran = print_web()
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
