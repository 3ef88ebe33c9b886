"""The generic board's heap beside the host board's, and what each part type costs: make
bench's "generic" table.

Both boards are staged as `make deploy` stages them (.mpy files; the simulated hardware
compiled beside them, its share measured apart and left out, as tools/bench/firmware.py
does), booted in the MicroPython unix port against the local backend on loopback, and run
through a session: onboarding (initialize, every tools/list page), then a call of every
tool the board offers the model, then a reconnection and a call. The heap in use is read
from inside (self.get_system_info collects first) after onboarding ("after boot") and after
the session; then the smallest -X heapsize that completes the whole session is bisected.
The generic board carries ten parts, one of each type but the OLED and the LCD: tools/sim/demo.py's
GENERIC_PARTS; then the same ten and the OLED as the status screen ("status": true: the
view umcpfw.statusview draws on it), through the same session.

What the parts cost, each in a fresh interpreter once the simulated chips are soldered on:
the parts package and each of its modules (the types that are alike share one: output,
sensor), counted once whatever the number of parts; then each part type's part and tools,
and a sensor's resource. Beside them, the SPI colour LCD (a 320x240 panel, the ESP32-S3-BOX-3's
and the CoreS3's size) as the status screen: its module (with parts.screen and the driver),
a part with its tools (its line and strip buffers among them), and the status view on it.
"""

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import tempfile

from ..backend import Backend
from . import firmware as bench_firmware
from ..board import deploy
from ..mpy import micropython_env
from ..sim.demo import CALLS, GENERIC_CALLS, GENERIC_PARTS, DemoFailed, stop_process, wait_ready
from ..sim.launcher import STAGED_HWSIM, compile_hwsim

HEAPSIZE = 512 * 1024
TARGET_KB = 12  # the ten parts and the status screen over the host board (issue 19)
RUN_TIMEOUT = 12.0
BOOT = "bench_boot.py"
# The simulated chips are soldered on before main.py runs (tools/sim/device.py does it so).
# Each get_device_status also prints the interned names' (qstrs') pools to the log, for
# the table: MicroPython's pools double, so passing a pool's end costs KBs at once.
BOOT_SCRIPT = """import json
import hwsim
with open("config.json") as f:
    hwsim.solder(json.load(f).get("parts"))
import boards
import micropython
_status = boards.Board.status
def status(board):
    micropython.qstr_info()
    return _status(board)
boards.Board.status = status
import main
main.run()
"""
QSTR_LINE = "qstr pool: "
TEN_PARTS = [entry for entry in GENERIC_PARTS if entry["type"] != "oled"]
STATUS_SCREEN = dict([entry for entry in GENERIC_PARTS if entry["type"] == "oled"][0], status=True)
_TEN_PARTS_CALLS = [(name, arguments) for _, name, arguments in GENERIC_CALLS if not name.startswith("self.panel.")]
BOARDS = {
    # name in the table: (board, config.json's extra keys, the session's calls)
    "host": ("host", {}, [(name, arguments) for _, name, arguments in CALLS]),
    "generic": ("generic", {"parts": TEN_PARTS}, _TEN_PARTS_CALLS),
    # The same session: what differs is the OLED part and the view drawing on it.
    "generic-status": ("generic", {"parts": TEN_PARTS + [STATUS_SCREEN]}, _TEN_PARTS_CALLS),
}
# The simulated hardware's share: its modules and what the board's start-up leaves in them.
SIMULATED_SCRIPT = """import gc, json
gc.collect()
base = gc.mem_alloc()
import hwsim, machine, esp32, network, camera, neopixel, dht, onewire, ds18x20, simoled, simhistory
gc.collect()
modules = gc.mem_alloc()
import boards, %(board_module)s
parts = %(parts)s
# A first start-up loads every firmware module the board needs (not the hardware's share).
hwsim.solder(parts)
board = %(board_module)s.create({"parts": parts}, None)
board = None
hwsim.reset()
gc.collect()
before = gc.mem_alloc()
hwsim.solder(parts)
board = %(board_module)s.create({"parts": parts}, None)
board = None
gc.collect()
print(modules - base, gc.mem_alloc() - before)
"""
# One part type's cost: everything it needs loaded first (the core, a board, a server, the
# parts package, the module of its type, the simulated chip) and a first part of the type
# made (what any boot leaves, such as the names of parts.check and parts.setup, interned
# for good); then a part made on a board of its own and its tools registered with a server
# of its own (with the simulated Pin, PWM, ADC... objects it made, a few bytes of C on a
# board: an upper bound); then its resource.
PART_SCRIPT = """import gc
import hwsim, machine, dht, onewire, ds18x20, neopixel, simoled
from umcp import McpServer
import umcp.tool, umcp.schema, umcp.resource
from boards import Board, add_parts
import parts
entry = %(entry)s
hwsim.solder([entry])
__import__("parts." + %(module)r)
first = Board("generic")
add_parts(first, {"parts": [entry]})
first.register_tools(McpServer("bench", "1"))
server = McpServer("bench", "1")
board = Board("generic")
gc.collect()
before = gc.mem_alloc()
add_parts(board, {"parts": [entry]})
board.register_tools(server)
gc.collect()
after = gc.mem_alloc()
board._part_resources(server) if [p for p in board.parts if p.poll_ms] else None
gc.collect()
print(after - before, gc.mem_alloc() - after)
"""
# A module of the parts package: its bytecode and what it makes at import.
MODULE_SCRIPT = """import gc
import hwsim, machine, dht, onewire, ds18x20, neopixel, simoled
from umcp import McpServer
import umcp.tool, umcp.schema
from boards import Board
import parts
gc.collect()
before = gc.mem_alloc()
__import__("parts.%(module)s")
gc.collect()
print(gc.mem_alloc() - before)
"""
# Which runtime module holds each type, as parts.setup says.
MODULES_SCRIPT = """import hwsim, machine
from parts.setup import module_of
print(" ".join([module_of(kind) for kind in %r]))
"""
# The status view's cost: its module, and the view on an OLED part (the generic board's
# display then, for the theme tool: umcpfw.boot sets it so), once everything a boot with a
# status screen has loaded before it is there.
VIEW_SCRIPT = """import gc, asyncio
import hwsim, machine, simoled
from umcp import McpServer
import umcp.tool, umcp.schema
from boards import Board, add_parts
import parts, parts.oled
entry = %(entry)r
hwsim.solder([entry])
board = Board("generic")
add_parts(board, {"parts": [entry]})
class App:
    pass
app = App()
app.board = board
app.settings = {}
asyncio.Event()  # asyncio loads its Event class at the first use; a boot has used it long before
gc.collect()
before = gc.mem_alloc()
import umcpfw.statusview
gc.collect()
module = gc.mem_alloc()
part = board.parts[0]
board.display = part
view = umcpfw.statusview.StatusView(part, app)
part.on_release = view.changed
gc.collect()
print(module - before, gc.mem_alloc() - module)
"""
# The LCD's module, with the simulated SPI loaded first (a board has machine.SPI in C).
MODULE_LCD_SCRIPT = MODULE_SCRIPT.replace("simoled\n", "simoled, simspi, simlcd\n")
# The LCD: the view on it, as on the OLED (the runtime module loaded first).
VIEW_LCD_SCRIPT = VIEW_SCRIPT.replace("import parts, parts.oled", "import parts, parts.lcd")
LCD_STATUS_SCREEN = {"type": "lcd", "name": "tft", "sck": 18, "mosi": 23, "dc": 16, "cs": 5, "rst": 17,
                     "bl": 4, "width": 320, "height": 240, "status": True}
# The driver's buffers, allocated once (what a part's figure holds of them).
BUFFERS_SCRIPT = """import hwsim
from boards import Board, add_parts
entry = %(entry)r
hwsim.solder([entry])
board = Board("generic")
add_parts(board, {"parts": [entry]})
lcd = board.parts[0].display
print(len(lcd._strip_buf) + (lcd.width + 7) // 8 * 8 + 4 + 4)
"""
PACKAGE_SCRIPT = """import gc
import hwsim, machine
from umcp import McpServer
import umcp.tool, umcp.schema
from boards import Board
gc.collect()
before = gc.mem_alloc()
import parts
gc.collect()
print(gc.mem_alloc() - before)
"""


class GenericFailed(Exception):
    pass


def stage(board, stage_dir):
    """`board` staged as make deploy stages it, the simulated hardware compiled beside it,
    and the boot script that solders the parts' chips on before main.py."""
    config = {"wifi": {"ssid": "simnet", "password": ""}, "url": "", "token": "", "board": board}
    deploy.stage(deploy.ROOT, board, stage_dir, config, deploy.mpy_cross_command(), lambda line: None)
    compile_hwsim(os.path.join(stage_dir, STAGED_HWSIM))
    with open(os.path.join(stage_dir, BOOT), "w") as sink:
        sink.write(BOOT_SCRIPT)
    return stage_dir


# The module path, relative to a copy of the stage as the working directory: module file
# names (each kept as a qstr on the heap for good) are then as long as a board's
# ("lib/parts/sensor.mpy"), not a temporary directory's (tools/bench/firmware.py does so).
DEVICE_PATH = ("lib", STAGED_HWSIM)


async def run_board(micropython, name, stage_dir, heapsize):
    """One boot of BOARDS[name] with `heapsize` bytes of heap through the session; returns
    {"boot": heap in use after onboarding, "session": after the session, "tools": count}."""
    board, extra, calls = BOARDS[name]
    token = secrets.token_hex(8)
    said = []
    backend = Backend(token, host="127.0.0.1", out=said.append, request_timeout=RUN_TIMEOUT)
    await backend.start()
    with tempfile.TemporaryDirectory(prefix="umcp-bench-generic-") as cwd, \
            open(os.path.join(cwd, "device.log"), "w+") as log:
        root = bench_firmware.board_root(stage_dir, cwd)  # a copy of the stage: the board's files
        config = {"wifi": {"ssid": "simnet", "password": ""}, "board": board, "token": token,
                  "url": "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port}
        config.update(bench_firmware.LINK_CONFIG)
        config.update(extra)
        with open(os.path.join(root, "config.json"), "w") as sink:
            json.dump(config, sink)
        process = subprocess.Popen([micropython, "-X", "heapsize=%d" % heapsize, BOOT],
                                   cwd=root, env=micropython_env(DEVICE_PATH),
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            figures = await asyncio.wait_for(_session(backend, process, calls), RUN_TIMEOUT)
            log.seek(0)
            pools = [_qstr_pools(line) for line in log.read().splitlines() if line.startswith(QSTR_LINE)]
            if pools:  # as the heap was read: after boot, after the session
                figures["qstrs_boot"], figures["qstrs_session"] = pools[0], pools[-1]
            return figures
        except (DemoFailed, asyncio.TimeoutError) as error:
            log.seek(0)
            raise GenericFailed("%s\n%s\n%s" % (error or "timed out", "\n".join(said[-20:]), log.read()[-3000:])) from None
        finally:
            stop_process(process)
            await backend.close()


async def _session(backend, process, calls):
    device = await wait_ready(backend, process)
    figures = {"tools": len(device.tools), "boot": await _heap(backend, device)}
    for name, arguments in calls:
        result = await backend.call(device, name, arguments)
        if result is None or result.get("isError"):
            raise DemoFailed("%s failed: %s" % (name, result))
    await device.connection.close(1001, "bench: reconnect")
    device = await wait_ready(backend, process)
    await backend.call(device, "self.get_device_status", {})
    figures["session"] = await _heap(backend, device)
    return figures


def _qstr_pools(line):
    """(pools, names, bytes) from a line micropython.qstr_info() printed."""
    said = dict(item.strip().split("=") for item in line[len(QSTR_LINE):].split(","))
    return int(said["n_pool"]), int(said["n_qstr"]), int(said["n_total_bytes"])


async def _heap(backend, device):
    await backend.call(device, "self.get_device_status")  # the qstr pools, in the log
    result = await backend.call(device, "self.get_system_info")
    if result is None or result.get("isError"):
        raise DemoFailed("self.get_system_info failed")
    return json.loads(result["content"][0]["text"])["heap_used"]


async def smallest_heapsize(micropython, name, stage_dir, works=HEAPSIZE, fails=0,
                            step=bench_firmware.HEAPSIZE_STEP):
    """The smallest heap (a multiple of `step`) that completes the session, bisected
    between `fails` and `works`."""
    while works - fails > step:
        middle = (fails + works) // 2 // step * step
        try:
            await run_board(micropython, name, stage_dir, middle)
            works = middle
        except GenericFailed:
            fails = middle
    return works


async def _smallest(micropython, name, stage_dir):
    """smallest_heapsize() to 4 KB, then on down to bench_firmware.FINE_STEP (512 B): the
    target's 12 KB is too near for 4 KB steps to tell."""
    coarse = await smallest_heapsize(micropython, name, stage_dir)
    return await smallest_heapsize(micropython, name, stage_dir, coarse, coarse - bench_firmware.HEAPSIZE_STEP,
                                   bench_firmware.FINE_STEP)


def _micropython(micropython, script, stage_dir, kind=int):
    done = subprocess.run([micropython, "-c", script], cwd=stage_dir, env=micropython_env(DEVICE_PATH),
                          capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if done.returncode != 0:
        raise GenericFailed(done.stdout + done.stderr)
    return [kind(word) for word in done.stdout.split()]


def simulated(micropython, name, stage_dir):
    """The simulated hardware's heap in this board's runs: modules, and state."""
    board, extra, _ = BOARDS[name]
    parts = extra.get("parts", [])
    modules, state = _micropython(micropython, SIMULATED_SCRIPT % {"board_module": "boards." + board,
                                                                  "parts": repr(parts)}, stage_dir)
    return modules + state


def measure_board(micropython, name):
    stage_dir = tempfile.mkdtemp(prefix="umcp-bench-generic-stage-")
    try:
        stage(BOARDS[name][0], stage_dir)
        figures = asyncio.run(run_board(micropython, name, stage_dir, HEAPSIZE))
        figures["smallest"] = asyncio.run(_smallest(micropython, name, stage_dir))
        figures["simulated"] = simulated(micropython, name, stage_dir)
        return figures
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def measure_types(micropython):
    """The parts package's own bytes, {module: (its types, bytes)}, {type: (the part and
    its tools' bytes, its resource's bytes)} and the status view's (module, view) bytes."""
    stage_dir = tempfile.mkdtemp(prefix="umcp-bench-parts-")
    try:
        stage("generic", stage_dir)
        path = stage_dir
        package = _micropython(micropython, PACKAGE_SCRIPT, path, int)[0]
        kinds = [entry["type"] for entry in GENERIC_PARTS]
        module_of = dict(zip(kinds, _micropython(micropython, MODULES_SCRIPT % kinds, path, str)))
        modules = {}
        for kind in kinds:
            modules.setdefault(module_of[kind], [[], 0])[0].append(kind)
        for module, held in modules.items():
            held[1] = _micropython(micropython, MODULE_SCRIPT % {"module": module}, path, int)[0]
        costs = {}
        for entry in GENERIC_PARTS:
            script = PART_SCRIPT % {"entry": repr(entry), "module": module_of[entry["type"]]}
            costs[entry["type"]] = (module_of[entry["type"]],) + tuple(_micropython(micropython, script, path, int))
        view = tuple(_micropython(micropython, VIEW_SCRIPT % {"entry": STATUS_SCREEN}, path, int))
        return package, modules, costs, view
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def measure_lcd(micropython):
    """The LCD status screen's bytes: (its runtime module with what it imports, a part and
    its tools, of which its buffers, the status view's module, the view on it)."""
    stage_dir = tempfile.mkdtemp(prefix="umcp-bench-lcd-")
    try:
        stage("generic", stage_dir)
        path = stage_dir
        module = _micropython(micropython, MODULE_LCD_SCRIPT % {"module": "lcd"}, path, int)[0]
        part = _micropython(micropython, PART_SCRIPT % {"entry": repr(LCD_STATUS_SCREEN), "module": "lcd"},
                            path, int)[0]
        buffers = _micropython(micropython, BUFFERS_SCRIPT % {"entry": LCD_STATUS_SCREEN}, path, int)[0]
        view = _micropython(micropython, VIEW_LCD_SCRIPT % {"entry": LCD_STATUS_SCREEN}, path, int)
        return {"module": module, "part": part, "buffers": buffers, "view_module": view[0], "view": view[1]}
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def lcd_table(lcd):
    total = lcd["module"] + lcd["part"] + lcd["view_module"] + lcd["view"]
    return ["| the SPI LCD (320x240) as the status screen | bytes |", "|---|---|",
            "| parts.lcd (with parts.screen and drivers.st7789) | %d B |" % lcd["module"],
            "| a part and its tools | %d B |" % lcd["part"],
            "| of which its line and strip buffers, allocated once | %d B |" % lcd["buffers"],
            "| umcpfw.statusview | %d B |" % lcd["view_module"],
            "| the view on the panel (the generic board's display too) | %d B |" % lcd["view"],
            "| all resident | %.1f KB |" % (total / 1024)]


def measure(micropython):
    return {"bits": bench_firmware.word_bits(micropython), "micropython": micropython,
            "boards": dict((board, measure_board(micropython, board)) for board in BOARDS),
            "types": measure_types(micropython), "lcd": measure_lcd(micropython)}


def table(figures):
    host = figures["boards"]["host"]
    others = [figures["boards"][name] for name in ("generic", "generic-status")]
    lines = ["| | host board | generic board, ten parts | difference | ten parts and the status screen "
             "| difference |", "|---|---|---|---|---|---|"]

    def row(title, key, simulated=True, size="%d KB"):
        a = host[key] - (host["simulated"] if simulated else 0)
        cells = [size % (a // 1024 if size == "%d KB" else a / 1024)]
        for board in others:
            b = board[key] - (board["simulated"] if simulated else 0)
            cells += [size % (b // 1024 if size == "%d KB" else b / 1024), "%+.1f KB" % ((b - a) / 1024)]
        lines.append("| %s | %s |" % (title, " | ".join(cells)))

    lines.append("| tools offered to the model | %d | %d | | %d | |" % (host["tools"], others[0]["tools"],
                                                                     others[1]["tools"]))
    row("heap in use after boot (the firmware's own)", "boot")
    row("heap in use after the session (the firmware's own)", "session")
    for when, key in (("after boot", "qstrs_boot"), ("after the session", "qstrs_session")):
        if key in host and all(key in board for board in others):
            a_pools, a_names, a_bytes = host[key]
            cells = ["%d in %d: %.1f KB" % (a_names, a_pools, a_bytes / 1024)]
            for board in others:
                b_pools, b_names, b_bytes = board[key]
                cells += ["%d in %d: %.1f KB" % (b_names, b_pools, b_bytes / 1024), "%+.1f KB" % ((b_bytes - a_bytes) / 1024)]
            lines.append("| of the heap in use %s: names interned (qstrs), in pools | %s |" % (when, " | ".join(cells)))
    row("smallest heap for the session (simulated hardware included)", "smallest", False, "%.1f KB")
    lines.append("| simulated hardware in those figures (left out above) | %.1f KB | %.1f KB | | %.1f KB | |"
                 % (host["simulated"] / 1024, others[0]["simulated"] / 1024, others[1]["simulated"] / 1024))
    # Issue 19's target: the ten parts and the screen at most 12 KB over the host board,
    # the firmware's own (the simulated hardware left out of both, as above).
    screen = others[1]
    over = [(screen[key] - screen["simulated"] - host[key] + host["simulated"]) / 1024
            for key in ("boot", "smallest")]
    lines += ["", "Ten parts and the status screen over the host board, the firmware's own: %+.1f KB after "
              "boot, %+.1f KB to the smallest heap (target: at most %d KB: %s)"
              % (over[0], over[1], TARGET_KB, "met" if max(over) <= TARGET_KB else "MISSED")]
    package, modules, costs, view = figures["types"]
    lines += ["", "| code (resident once, whatever the number of parts) | the types it holds | bytes |",
              "|---|---|---|", "| the parts package (parts/__init__) | all | %d B |" % package]
    total = package
    for module, (kinds, size) in modules.items():
        lines.append("| parts.%s | %s | %d B |" % (module, ", ".join(kinds), size))
        total += size
    lines += ["", "| part type | a part and its tools (simulated objects it made included) | its resource "
              "(at the first resources/*) | one part alone: with its module and the package |", "|---|---|---|---|"]
    for kind, (module, part, resource) in costs.items():
        alone = package + modules[module][1] + part
        lines.append("| %s | %d B |%s| %.1f KB |" % (kind, part, " %d B " % resource if resource > 32 else " ",
                                                      alone / 1024))
        total += part
    lines.append("| all %d types, one part each (their code once) | %.1f KB | | |" % (len(costs), total / 1024))
    lines += ["", "| the status screen (an OLED part with \"status\": true), beyond the OLED part | bytes |", "|---|---|",
              "| umcpfw.statusview (loaded only on a board with a status screen) | %d B |" % view[0],
              "| the view on the panel (the generic board's display too, for the theme tool) | %d B |"
              % view[1]]
    return lines


def print_generic(micropython):
    """Print the table; returns whether it ran."""
    print("The generic board (ten parts, one of each type but the OLED and the LCD; then with the OLED as the status "
          "screen too) beside the host board, as .mpy files (make deploy) on %s:" % micropython)
    try:
        figures = measure(micropython)
    except (GenericFailed, deploy.DeployError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        print("the generic board bench did not run:\n%s" % e)
        return False
    if figures["bits"] != 32:
        print("(a %d-bit build: objects are larger than an ESP32's; UMCP_MICROPYTHON picks a 32-bit one)"
              % figures["bits"])
    print()
    print("\n".join(table(figures)))
    print()
    print("\n".join(lcd_table(figures["lcd"])))
    print()
    print("Sessions: the host board's make sim calls (volume, status, a photo); the generic board's")
    print("make sim-generic calls (one per part, the OLED's apart; the same with the status screen),")
    print("then a reconnection and a call.")
    print("The firmware's own heap leaves out the simulated hardware (its .mpy modules and state:")
    print("a board has them in C and silicon). The parts' code is resident once (the package, and")
    print("the module of each kind in use); a part's own cost is its objects and its tools (tools")
    print("of one type share their parameter lists); a sensor's resource is registered at a")
    print("client's first resources/* request and costs the second column then. Interned names")
    print("(qstrs) stay for good, in pools that double: a firmware that passes a pool's end pays")
    print("for the next pool at once (the 7th holds names 1261 to 2540, about 9 KB on 32 bits).")
    return True


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.bench.generic", description=__doc__.split("\n")[0])
    parser.add_argument("--micropython", default=bench_firmware.default_micropython(),
                        help="the unix port to measure with (default: UMCP_MICROPYTHON, else make setup's)")
    return 0 if print_generic(parser.parse_args(argv).micropython) else 1


if __name__ == "__main__":
    import sys

    sys.exit(main())
