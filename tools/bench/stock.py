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
hardware's share of it (generic.simulated) and the firmware's own.
"""

import asyncio
import os
import shutil
import subprocess
import tempfile

from . import generic, heap
from ..board import deploy
from ..hub.endpoint import at_endpoint
from ..sim.board import BoardFailed, config_for, has_frozen_hardware

STOCK_HEAP = 111936  # the stock image's heap on an ESP32 without PSRAM: two areas of ~56 KB
TARGET = 112 * 1024  # board (a) completes in -X heapsize=112K
GENEROUS = 256 * 1024  # the run whose heap in use is reported
STEP = 1024
LOWEST = 32 * 1024  # below any board's need: the bisection's floor
REPEAT = 2  # a size passes only when it passed this many times in a row
RUNTIME = "mpy-frozen-hardware"  # the .mpy files beside the simulated hardware frozen in
RELAY = {"type": "relay", "name": "lamp", "pin": 2}
DHT22 = {"type": "dht", "name": "room", "pin": 27}
BUTTON = {"type": "button", "name": "door", "pin": 0}
STATUS_SCREEN = {"type": "oled", "name": "panel", "sda": 21, "scl": 22, "status": True}
THREE_CALLS = [("self.lamp.turn_on", {}), ("self.room.read", {}), ("self.get_device_status", {})]
BOARDS = [
    # (key, what it is, parts, the session's calls, the link: None xiaozhi, else the endpoint's)
    ("a", "a relay, a DHT22, a button; xiaozhi WebSocket link", [RELAY, DHT22, BUTTON], THREE_CALLS, None),
    ("b", "the same, only an MCP endpoint URL", [RELAY, DHT22, BUTTON], THREE_CALLS, at_endpoint),
    ("c", "(a) and an SSD1306 status screen", [RELAY, DHT22, BUTTON, STATUS_SCREEN], THREE_CALLS, None),
    ("d", "ten parts (the generic table's) and the status screen", generic.TEN_PARTS + [STATUS_SCREEN],
     generic.BOARDS["generic"][2], None),
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


async def _run(micropython, stage_dir, heapsize, parts, calls, accept):
    return await generic.run_board(micropython, None, stage_dir, heapsize, RUNTIME, board_config(parts), calls,
                                   accept, qstr=False)


def measure_board(micropython, stage_dir, parts, calls, accept):
    """{"in_use": heap in use after onboarding at GENEROUS, "simulated": the simulated
    hardware's share of it, "smallest": the smallest heap (bytes), "runs": bisection runs}."""
    figures = asyncio.run(_run(micropython, stage_dir, GENEROUS, parts, calls, accept))

    async def attempt(size):
        await _run(micropython, stage_dir, size, parts, calls, accept)

    smallest, runs = asyncio.run(heap.smallest(attempt, GENEROUS, LOWEST, STEP, REPEAT, generic.GenericFailed))
    return {"in_use": figures["boot"], "tools": figures["tools"], "smallest": smallest, "runs": runs,
            "simulated": generic.simulated(micropython, None, stage_dir, board_config(parts))}


def measure(micropython):
    """Every board's figures, {key: figures}; raises generic.GenericFailed, BoardFailed or
    deploy.DeployError."""
    stage_dir = tempfile.mkdtemp(prefix="umcp-bench-stock-")
    try:
        generic.stage("generic", stage_dir, RUNTIME)
        return dict((key, measure_board(micropython, stage_dir, parts, calls, accept))
                    for key, _, parts, calls, accept in BOARDS)
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def _kb(value):
    return "%.1f KB" % (value / 1024)


def table(figures):
    lines = ["| board (generic, \"chip\": \"esp32\") | tools | smallest heap, two areas | heap in use after "
             "onboarding | of which simulated hardware | the firmware's own |", "|---|---|---|---|---|---|"]
    for key, what, _, _, _ in BOARDS:
        board = figures[key]
        lines.append("| (%s) %s | %d | %dK (%d runs) | %s | %s | %s |" % (
            key, what, board["tools"], board["smallest"] // 1024, board["runs"], _kb(board["in_use"]),
            _kb(board["simulated"]), _kb(board["in_use"] - board["simulated"])))
    a = figures["a"]["smallest"]
    lines += ["", "Board (a) against the stock board's heap: it completes the session in %dK, the stock image "
              "has %dK (%d bytes; target: it completes in 112K: %s)"
              % (a // 1024, TARGET // 1024, STOCK_HEAP, "met" if a <= TARGET else "MISSED")]
    return lines


def print_stock(micropython):
    """Print the table (or, without the binary, what it needs); returns whether it ran."""
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
        figures = measure(micropython)
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
    print("board's start-up leaves in them, C and silicon on a board) is measured in a run of its own.")
    return True
