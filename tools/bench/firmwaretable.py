"""make bench's firmware table, printed: the whole firmware's heap in each form, what the
MCP endpoint link and the board's own HTTP endpoint add, the measuring form's fuzz and its
per-import table (tools/bench/firmware.py measures them; report.py calls print_firmware)."""

import subprocess

from . import firmware as bench_firmware
from . import heap
from . import imports as bench_imports
from ..board.deploy import DeployError


def _kb(value):
    return "%.1f KB" % (value / 1024)


def _ratio(a, b):
    return "%.2fx" % (a / b) if b else "-"


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
                 "DELETE: tools/sim/fullsession.py's http_exchanges). The session ends with a restart, so",
                 "\"after the session\" is the endpoint listening, unused since boot; the smallest heap is",
                 "the one that also serves the HTTP client (the endpoint's code loaded at its first request;",
                 "dropped again once idle for umcpfw.mcphttp.IDLE_S seconds). \"In use\": the heap",
                 "self.get_system_info reports through the endpoint, on the legacy session with its GET",
                 "stream open; the per-request figures are make bench's link table (tools/bench/httpheap.py)."] + lines
    return lines


def print_firmware(micropython, core, frozen=None, hardware_frozen=None):
    """Print the whole firmware's table; returns whether it ran."""
    print()
    print("Whole firmware on the host board against the local backend on loopback, full session:")
    print("hello, initialize, every tools/list page (8000 bytes), every common and board tool (a")
    print("photo, an upgrade from a URL that answers 404), reconnections")
    try:
        figures = bench_firmware.measure(micropython, frozen=frozen, hardware_frozen=hardware_frozen)
    except (bench_firmware.FirmwareFailed, heap.BenchFailed, DeployError, OSError, ValueError,
            subprocess.TimeoutExpired) as e:
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
        % (heap.HEAPSIZE_STEP // 1024),
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
                  "a unix port built with tools/bench/unixfrozenmanifest.py (the firmware and the",
                  "simulated hardware frozen in), running main.py alone."]
    if "mpy_board" in figures:
        lines += ["\".mpy, hardware frozen\": %s running the .mpy files make deploy copies, with"
                  % figures["mpy_board"]["micropython"],
                  "asyncio and the simulated hardware frozen: the .mpy form as a board without PSRAM",
                  "would hold it, from a build of tools/bench/unixhwsimmanifest.py (a build with the",
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
