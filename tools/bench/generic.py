"""make bench's "generic" table: the generic board's heap beside the host board's, and
what each part type costs.

Both boards are staged as `make deploy` stages them (.mpy files; the simulated hardware's
share measured apart and left out, as tools/bench/firmware.py does), booted in the
MicroPython unix port against the local backend on loopback, and run through a session:
onboarding, a call of every tool the board offers the model, a reconnection and a call.
The heap in use is read from inside after onboarding and after the session, and the
smallest -X heapsize that completes the session is bisected. The generic board carries
the example parts (tools/sim/generic.json), then the same with the OLED as the status screen.

Then, each in a fresh interpreter: the parts package and each of its modules, each part
type's part and tools, a sensor's resource, and the SPI colour LCD as the status screen.
What the table holds and why: docs/benchmarks.md, "The generic board and its parts".
"""

import asyncio
import json
import os
import shutil
import tempfile

from . import heap
from ..backend import Backend
from ..sim.board import BoardFailed, SimBoard, config_for, stage as stage_board
from ..sim.calls import CALLS, GENERIC_CALLS, GENERIC_PARTS
from ..sim.fullsession import LINK_CONFIG

HEAPSIZE = heap.HEAPSIZE
TARGET_KB = 12  # the ten parts and the status screen over the host board (issue 19)
RUN_TIMEOUT = 12.0
BOOT = "partsboot.py"  # tools/bench/scripts/: the parts' chips soldered on, then main.py
QSTR_LINE = "qstr pool: "
AT_OTA = "ota"  # run_board's `accept` for a board given only the backend's OTA URL
AT_OTA_MQTT = "ota-mqtt"  # the same, the OTA server handing out MQTT (an embedded broker)
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
LCD_STATUS_SCREEN = {"type": "lcd", "name": "tft", "sck": 18, "mosi": 23, "dc": 16, "cs": 5, "rst": 17,
                     "bl": 4, "width": 320, "height": 240, "status": True}
LCD_SIMULATED = ("simspi", "simlcd")  # the LCD module's simulated bus, loaded first (machine.SPI on a board)
GenericFailed = heap.BenchFailed


def stage(board, stage_dir, runtime="mpy"):
    """`board` staged as make deploy stages it (for "mpy" the simulated hardware compiled
    beside it), with the boot script that solders the parts' chips on before main.py."""
    stage_board(stage_dir, board, runtime)
    heap.add_script(stage_dir, BOOT)
    return stage_dir


async def run_board(micropython, name, stage_dir, heapsize, runtime="mpy", config=None, calls=None,
                    accept=None, qstr=True):
    """One boot of BOARDS[name] (or of `config` with `calls`, of the board at the endpoint
    accept() takes, or with `accept` AT_OTA, given only the OTA URL: the OTA server hands out
    the WebSocket, or MQTT with AT_OTA_MQTT) with `heapsize` bytes of heap through the session;
    returns {"boot":
    heap in use after onboarding, "session": after the session, "tools": count, and the
    qstr pools after each where `qstr`}. Raises GenericFailed."""
    if config is None:
        board, extra, calls = BOARDS[name]
        config = dict(config_for(board), **extra)
    token = secrets_token()
    said = []
    mqtt = {"mqtt": "embedded", "mqtt_port": 0} if accept == AT_OTA_MQTT else {}
    backend = Backend(token, host="127.0.0.1", out=said.append, request_timeout=RUN_TIMEOUT, **mqtt)
    await backend.start()
    config = dict(config, token=token, url="ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port, **LINK_CONFIG)
    if accept in (AT_OTA, AT_OTA_MQTT):  # as xiaozhi.me's boards: the OTA check says where to connect
        del config["url"], config["token"]
        config["ota_url"] = backend.ota_url
        accept = None
    elif accept is not None:  # at the backend's MCP endpoint only
        config.update(url="", token="", mcp_endpoint=backend.endpoint_url, mcp_endpoint_tools=["self."])
    entry = [BOOT, "qstr"] if qstr else [BOOT]
    board = SimBoard(config, runtime, micropython, heapsize, stage=stage_dir, entry=entry)
    try:
        with open(os.path.join(board.root, "device.log"), "w+", errors="replace") as log:
            board.log = log
            try:
                board.start()
                figures = await asyncio.wait_for(session(backend, board, calls, accept), RUN_TIMEOUT)
            except (BoardFailed, asyncio.TimeoutError) as error:
                board.stop()
                log.seek(0)
                raise GenericFailed("%s\n%s\n%s" % (error or "timed out", "\n".join(said[-20:]),
                                                     log.read()[-3000:])) from None
            board.stop()
            log.seek(0)
            pools = qstr_pools(log.read())
            if pools:  # as the heap was read: after boot, after the session
                figures["qstrs_boot"], figures["qstrs_session"] = pools[0], pools[-1]
            return figures
    finally:
        board.close()
        await backend.close()


def secrets_token():
    import secrets

    return secrets.token_hex(8)


async def session(backend, board, calls, accept=None):
    """The session a backend drives (the stock table's too): onboarding (hello, initialize,
    every tools/list page), the heap read, a call of each tool, the link closed by the
    server (1001), the board back, a call again, the heap read."""
    device = await board.ready(backend, accept)
    figures = {"tools": len(device.tools), "boot": await _heap(backend, device)}
    for name, arguments in calls:
        result = await backend.call(device, name, arguments)
        if result is None or result.get("isError"):
            raise BoardFailed("%s failed: %s" % (name, result))
    await device.connection.close(1001, "bench: reconnect")
    device = await board.ready(backend, accept)
    await backend.call(device, "self.get_device_status", {})
    figures["session"] = await _heap(backend, device)
    return figures


def qstr_pools(log):
    """[(pools, names, bytes)] of each line micropython.qstr_info() printed in `log` (a
    board's output, partsboot.py's "qstr"), in order."""
    found = []
    for line in log.splitlines():
        if line.startswith(QSTR_LINE):
            said = dict(item.strip().split("=") for item in line[len(QSTR_LINE):].split(","))
            found.append((int(said["n_pool"]), int(said["n_qstr"]), int(said["n_total_bytes"])))
    return found


async def _heap(backend, device):
    await backend.call(device, "self.get_device_status")  # the qstr pools, in the log
    result = await backend.call(device, "self.get_system_info")
    if result is None or result.get("isError"):
        raise BoardFailed("self.get_system_info failed")
    return json.loads(result["content"][0]["text"])["heap_used"]


async def _smallest(micropython, name, stage_dir):
    """The smallest heap to 4 KB, then on down to heap.FINE_STEP (512 B): the target's 12 KB
    is too near for 4 KB steps to tell."""
    async def attempt(size):
        await run_board(micropython, name, stage_dir, size)

    coarse, _ = await heap.smallest(attempt, failure=GenericFailed)
    fine, _ = await heap.smallest(attempt, coarse, coarse - heap.HEAPSIZE_STEP, heap.FINE_STEP, failure=GenericFailed)
    return fine


def _micropython(micropython, script, stage_dir, argument=None, kind=int):
    return heap.run_script(micropython, script, stage_dir, argument, kind=kind)


def simulated(micropython, name, stage_dir, config=None):
    """The simulated hardware's heap in this board's runs (BOARDS[name]'s, or `config`'s):
    modules, and state."""
    if config is None:
        board, extra, _ = BOARDS[name]
        config = dict(extra, board=board)
    modules, state = _micropython(micropython, "boardshare.py", stage_dir,
                                  ("boards." + config["board"], config.get("parts", [])))
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
        package = _micropython(micropython, "packagecost.py", path)[0]
        kinds = [entry["type"] for entry in GENERIC_PARTS]
        module_of = dict(zip(kinds, _micropython(micropython, "moduleof.py", path, kinds, str)))
        modules = {}
        for kind in kinds:
            modules.setdefault(module_of[kind], [[], 0])[0].append(kind)
        for module, held in modules.items():
            held[1] = _micropython(micropython, "modulecost.py", path, (module, ()))[0]
        costs = {}
        for entry in GENERIC_PARTS:
            module = module_of[entry["type"]]
            costs[entry["type"]] = (module,) + tuple(_micropython(micropython, "partcost.py", path, (entry, module)))
        view = tuple(_micropython(micropython, "viewcost.py", path, (STATUS_SCREEN, "oled")))
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
        module = _micropython(micropython, "modulecost.py", path, ("lcd", LCD_SIMULATED))[0]
        part = _micropython(micropython, "partcost.py", path, (LCD_STATUS_SCREEN, "lcd"))[0]
        buffers = _micropython(micropython, "lcdbuffers.py", path, LCD_STATUS_SCREEN)[0]
        view = _micropython(micropython, "viewcost.py", path, (LCD_STATUS_SCREEN, "lcd"))
        return {"module": module, "part": part, "buffers": buffers, "view_module": view[0], "view": view[1]}
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def measure(micropython):
    return {"bits": heap.word_bits(micropython), "micropython": micropython,
            "boards": dict((board, measure_board(micropython, board)) for board in BOARDS),
            "types": measure_types(micropython), "lcd": measure_lcd(micropython)}
