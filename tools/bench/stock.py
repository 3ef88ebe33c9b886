"""The commonest board: an original ESP32 DevKit without PSRAM on the stock micropython.org
image, whose heap is two areas of about 56 KB (111,936 bytes: MicroPython's split heap).
make bench's "stock" table (python -m tools.bench --only stock --stock PATH).

Its instrument is a 32-bit unix port with asyncio and the simulated hardware frozen
(unixhwsimmanifest.py as its FROZEN_MANIFEST) built with MICROPY_GC_SPLIT_HEAP and two
heaps (CFLAGS_EXTRA="-m32 -DMICROPY_GC_SPLIT_HEAP=1 -DMICROPY_GC_SPLIT_HEAP_N_HEAPS=2"), so
that `-X heapsize=112K` gives two 56 KB areas as the board has; --stock or
UMCP_MICROPYTHON_STOCK names it (docs/benchmarks.md says how one is built). Each board
(BOARDS: the generic board with config.json "chip": "esp32") is staged as make deploy
stages it and driven through the session a backend drives (generic.session: hello,
initialize, every tools/list page, a call of each part's tool and self.get_device_status,
the server closing the link with 1001, the board back, a call again). For each: the
smallest heap completing the session, bisected to 1 KB, a size counting only when it
passed twice in a row (the figure moves by about 2 KB from run to run with where the
collector finds room); the heap in use after onboarding at a generous heap, the simulated
hardware's share of it (generic.simulated), the firmware's own, and the names interned at
run time then (micropython.qstr_info()'s n_qstr: a name is heap for good, and the pools
double as they fill). With --hardware-frozen (the same build in one area), the smallest
heap in one area too. Last, the host board's whole session (fullsession, the one make
bench's firmware table drives) in two areas.
"""

import asyncio
import os
import shutil
import subprocess
import tempfile

from . import firmware, generic, heap
from ..board import deploy
from ..hub.endpoint import at_endpoint
from ..sim.board import BoardFailed, config_for, has_frozen_hardware

STOCK_HEAP = 111936  # the stock image's heap on an ESP32 without PSRAM: two areas of ~56 KB
TARGET = 112 * 1024  # board (a) completes in -X heapsize=112K
# ... and in this, leaving 16 KB of the stock heap to what a real network stack and a
# burst of messages take (issue 29)
TARGET_SPARE = 96 * 1024
GENEROUS = 256 * 1024  # the run whose heap in use is reported
STEP = 1024
LOWEST = 32 * 1024  # below any board's need: the bisection's floor
REPEAT = 2  # a size passes only when it passed this many times in a row
RUNTIME = "mpy-frozen-hardware"  # the .mpy files beside the simulated hardware frozen in
RELAY = {"type": "relay", "name": "lamp", "pin": 2}
DHT22 = {"type": "dht", "name": "room", "pin": 27}
BUTTON = {"type": "button", "name": "door", "pin": 0}
STATUS_SCREEN = {"type": "oled", "name": "panel", "sda": 21, "scl": 22, "status": True}
# Board (d)'s ten parts, its own: the figures README.md's "up to ten parts" rests on stay
# those of these ten whatever joins the example parts (tools/sim/generic.json).
TEN_PARTS = [
    {"type": "relay", "name": "lamp", "pin": 2, "description": "desk lamp"},
    {"type": "pwm", "name": "fan", "pin": 4},
    {"type": "strip", "name": "leds", "pin": 5, "count": 8},
    {"type": "servo", "name": "arm", "pin": 13},
    {"type": "buzzer", "name": "beeper", "pin": 15},
    {"type": "button", "name": "door", "pin": 0},
    {"type": "analog", "name": "light", "pin": 34, "max": 1000, "unit": "lux"},
    {"type": "dht", "name": "room", "pin": 27},
    {"type": "ds18b20", "name": "water", "pin": 26},
    {"type": "battery", "name": "battery", "pin": 35},
]
TEN_CALLS = [
    ("self.lamp.turn_on", {}), ("self.fan.set_level", {"level": 40}),
    ("self.leds.set_color", {"red": 255, "green": 80, "blue": 0}), ("self.arm.set_angle", {"angle": 90}),
    ("self.beeper.beep", {"frequency": 880, "duration_ms": 100}), ("self.light.read", {}),
    ("self.room.read", {}), ("self.water.read", {}), ("self.battery.get_level", {}),
    ("self.get_device_status", {}),
]
THREE_CALLS = [("self.lamp.turn_on", {}), ("self.room.read", {}), ("self.get_device_status", {})]
BOARDS = [
    # (key, what it is, parts, the session's calls, the link: None xiaozhi, AT_OTA xiaozhi's from
    # the OTA check, else the endpoint's accept)
    ("a", "a relay, a DHT22, a button; xiaozhi WebSocket link", [RELAY, DHT22, BUTTON], THREE_CALLS, None),
    ("b", "the same, only an MCP endpoint URL", [RELAY, DHT22, BUTTON], THREE_CALLS, at_endpoint),
    ("c", "(a) and an SSD1306 status screen", [RELAY, DHT22, BUTTON, STATUS_SCREEN], THREE_CALLS, None),
    ("d", "ten parts and the status screen", TEN_PARTS + [STATUS_SCREEN], TEN_CALLS, None),
    ("f", "(a) given only an OTA URL, as xiaozhi.me's boards (the OTA server hands out the link)",
     [RELAY, DHT22, BUTTON], THREE_CALLS, generic.AT_OTA),
    ("g", "(f) with the OTA server handing out MQTT (and UDP for audio) instead",
     [RELAY, DHT22, BUTTON], THREE_CALLS, generic.AT_OTA_MQTT),
]
HOW_TO_BUILD = [
    "The stock table needs a unix port that holds a heap as the stock ESP32 image does: --stock",
    "PATH or UMCP_MICROPYTHON_STOCK naming it. Build MicroPython's unix port (ports/unix, its",
    "README.md: MicroPython's own build documentation) 32-bit, with asyncio and the simulated",
    "hardware frozen (FROZEN_MANIFEST=%s) and the split heap:" % os.path.relpath(heap.HWSIM_MANIFEST, os.getcwd()),
    'CFLAGS_EXTRA="-m32 -DMICROPY_GC_SPLIT_HEAP=1 -DMICROPY_GC_SPLIT_HEAP_N_HEAPS=2";',
    "then -X heapsize=112K gives two 56 KB areas. docs/benchmarks.md, \"The stock plain ESP32\".",
]


def default_stock():
    """UMCP_MICROPYTHON_STOCK: the split-heap measuring binary, or None."""
    return os.environ.get("UMCP_MICROPYTHON_STOCK") or None


def board_config(parts):
    return config_for("generic", chip="esp32", parts=parts)


async def _run(micropython, stage_dir, heapsize, parts, calls, accept, qstr=False):
    return await generic.run_board(micropython, None, stage_dir, heapsize, RUNTIME, board_config(parts), calls,
                                   accept, qstr=qstr)


def _smallest(micropython, stage_dir, parts, calls, accept):
    async def attempt(size):
        await _run(micropython, stage_dir, size, parts, calls, accept)

    return asyncio.run(heap.smallest(attempt, GENEROUS, LOWEST, STEP, REPEAT, generic.GenericFailed))


def measure_board(micropython, one_area, stage_dir, parts, calls, accept):
    """{"in_use": heap in use after onboarding at GENEROUS, "names": names interned then,
    "simulated": the simulated hardware's share of the heap, "smallest": the smallest heap
    in two areas (bytes), "runs": bisection runs, "one_area": the smallest in one area
    (with `one_area`, the same build without the split heap)}."""
    figures = asyncio.run(_run(micropython, stage_dir, GENEROUS, parts, calls, accept, qstr=True))
    smallest, runs = _smallest(micropython, stage_dir, parts, calls, accept)
    board = {"in_use": figures["boot"], "tools": figures["tools"], "smallest": smallest, "runs": runs,
             "names": figures["qstrs_boot"][1],
             "simulated": generic.simulated(micropython, None, stage_dir, board_config(parts))}
    if one_area:
        board["one_area"], _ = _smallest(one_area, stage_dir, parts, calls, accept)
    return board


def measure_host(micropython):
    """The host board's whole session (fullsession's, as make bench's firmware table drives
    it) as the .mpy files beside the simulated hardware frozen: its smallest heap in two
    areas and the bisection's runs."""
    folder = tempfile.mkdtemp(prefix="umcp-bench-stock-host-")
    try:
        stage = heap.stage_form("mpy_board", folder)

        async def attempt(size):
            await firmware.run_firmware(micropython, stage, size)

        return asyncio.run(heap.smallest(attempt, GENEROUS, LOWEST, STEP, REPEAT, firmware.FirmwareFailed))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(micropython, one_area=None):
    """Every board's figures, {key: figures}, and "host": (the host board's smallest heap,
    runs); raises generic.GenericFailed, BoardFailed or deploy.DeployError."""
    stage_dir = tempfile.mkdtemp(prefix="umcp-bench-stock-")
    try:
        generic.stage("generic", stage_dir, RUNTIME)
        figures = dict((key, measure_board(micropython, one_area, stage_dir, parts, calls, accept))
                       for key, _, parts, calls, accept in BOARDS)
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)
    figures["host"] = measure_host(micropython)
    return figures


def _kb(value):
    return "%.1f KB" % (value / 1024)


def _k(value):
    return "%dK" % (value // 1024) if value is not None else "-"


def table(figures):
    lines = ["| board (generic, \"chip\": \"esp32\") | tools | smallest heap, two areas | one area | heap in use "
             "after onboarding | of which simulated hardware | the firmware's own | names interned |",
             "|---|---|---|---|---|---|---|---|"]
    host, runs = figures["host"]
    rows = {"e": "| (e) the host board, the whole session of make bench's firmware table | | %dK (%d runs) "
                 "| | | | | |" % (host // 1024, runs)}
    for key, what, _, _, _ in BOARDS:
        board = figures[key]
        rows[key] = "| (%s) %s | %d | %dK (%d runs) | %s | %s | %s | %s | %d |" % (
            key, what, board["tools"], board["smallest"] // 1024, board["runs"], _k(board.get("one_area")),
            _kb(board["in_use"]), _kb(board["simulated"]), _kb(board["in_use"] - board["simulated"]),
            board["names"])
    lines.extend(rows[key] for key in sorted(rows))
    lines.append("")
    for key, what in (("a", "Board (a)"), ("b", "Board (b), at the MCP endpoint alone,"), ("d", "Board (d)"),
                      ("f", "Board (f), given only an OTA URL,"), ("g", "Board (g), over MQTT from the OTA URL,")):
        smallest = figures[key]["smallest"]
        lines.append("%s against the stock board's heap: completes in %dK; target: in %dK (%d bytes): %s"
                     % (what, smallest // 1024, TARGET // 1024, STOCK_HEAP, "met" if smallest <= TARGET else "MISSED"))
    smallest = figures["a"]["smallest"]
    lines.append("Board (a) with 16 KB of the stock heap to spare: completes in %dK; target: in %dK: %s"
                 % (smallest // 1024, TARGET_SPARE // 1024, "met" if smallest <= TARGET_SPARE else "MISSED"))
    lines.append("The host board's whole session against it: %dK: %s" % (
        host // 1024, "met" if host <= TARGET else "MISSED"))
    return lines


def print_stock(micropython, one_area=None):
    """Print the table (or, without the binary, what it needs); with `one_area` (the
    measuring form in one area, --hardware-frozen), its column too. Returns whether it ran."""
    if not micropython:
        print("\n".join(HOW_TO_BUILD))
        return True  # a table that needs a binary of one's own, like the frozen columns
    print("The stock plain ESP32 (two heap areas of about 56 KB), each board as the .mpy files make deploy")
    print("stages, the simulated hardware frozen in %s:" % micropython)
    try:
        if heap.word_bits(micropython) != 32 or not has_frozen_hardware(micropython):
            print("%s is not a 32-bit build with the simulated hardware frozen in" % micropython)
            print("\n".join(HOW_TO_BUILD))
            return False
        figures = measure(micropython, one_area)
    except (generic.GenericFailed, BoardFailed, deploy.DeployError, OSError, ValueError,
            subprocess.TimeoutExpired) as e:
        print("the stock bench did not run:\n%s" % e)
        return False
    print()
    print("\n".join(table(figures)))
    print()
    print("Session: hello (none at the MCP endpoint), initialize, every tools/list page, a call of each part's")
    print("tool and self.get_device_status, the server closing the link (1001), the board back, a call again.")
    print("Smallest heap: -X heapsize in two areas (MICROPY_GC_SPLIT_HEAP, two heaps), bisected to 1 KB; a size")
    print("counts only when the session completed twice in a row at it. It moves by about 2 KB from run to")
    print("run with where the collector finds room. Heap in use: heap_used of self.get_system_info after")
    print("onboarding at -X heapsize=%dK; the simulated hardware's share (its modules and the state the" % (GENEROUS // 1024))
    print("board's start-up leaves in them, C and silicon on a board) is measured in a run of its own. Names")
    print("interned: micropython.qstr_info()'s n_qstr then (the names the build holds in flash not counted).")
    print("One area: the same bisection with %s (no split heap; - without --hardware-frozen)." % (one_area or "-"))
    return True
