"""The simulator's child process: boots firmware/main.py on the host board, on CPython and
on the MicroPython unix port (tools.sim.board.SimBoard starts it with the device's
sys.path and the board's folder as its working directory).

Around the unchanged firmware it does what the board itself would do across a reset:
- the simulated flash (both OTA partitions and the boot choice) is kept in hwsim-flash.json,
  so an image installed with set_boot() is the one running after machine.reset();
- when the firmware stops, one JSON line recording what the drivers did during that boot
  is appended to hwsim.jsonl, for tests to read;
- the chips config.json's "parts" name are soldered on (hwsim.solder), and inputs come from
  hwsim-inputs.json as tests write it (siminputs.py);
- the radio's surroundings come from hwsim-network.json, read at each boot and again
  whenever it changed. docs/simulator.md, "The simulated hardware", has these files.
"""
import sys

sys.path.pop(0)  # this folder (tools/sim/): the device's own path follows
# The board's "" (its / : main.py, config.json, a maker's app.py) is the state directory.
sys.path.insert(0, "")

import binascii
import errno
import json

import esp32
import machine
import network

import main

FLASH_FILE = "hwsim-flash.json"
RECORD_FILE = "hwsim.jsonl"
INPUT_FILE = "hwsim-inputs.json"
NETWORK_FILE = "hwsim-network.json"
_BLOCK = 4096
_LABELS = ("ota_0", "ota_1")


def _label(which):
    return esp32.Partition(which).info()[4]


def load_flash():
    """Put back the flash of the previous boot, then boot what the bootloader would."""
    try:
        with open(FLASH_FILE) as f:
            saved = json.load(f)
    except OSError as e:
        if e.args[0] == errno.ENOENT:
            return  # first power-on: fresh flash
        raise
    for label in _LABELS:
        image = binascii.unhexlify(saved["partitions"].get(label, ""))
        if image:
            esp32.Partition(label).writeblocks(0, image)
    if saved["boot"] != _label(esp32.Partition.RUNNING):
        esp32.Partition(saved["boot"]).set_boot()
        esp32.sim_boot()
    if saved["marked_valid"]:
        esp32.Partition.mark_app_valid_cancel_rollback()
    # What this boot does starts from here: restoring is not the firmware's doing.
    esp32.sim_set_boot_calls().clear()
    for label in _LABELS:
        esp32.sim_partition(label).writes.clear()


def save_flash():
    """hwsim-flash.json, written a block at a time: a reset comes when the firmware's heap
    is busy, and one hex string of a whole image may not fit in it."""
    with open(FLASH_FILE, "w") as f:
        f.write('{"boot": %s, "marked_valid": %s, "partitions": {'
                % (json.dumps(_label(esp32.Partition.BOOT)),
                   json.dumps(esp32.sim_marked_valid())))
        separator = ""
        for label in _LABELS:
            flash = esp32.sim_partition(label)
            if not flash.blocks:
                continue
            f.write('%s"%s": "' % (separator, label))
            separator = ", "
            for block in range(max(flash.blocks) + 1):
                f.write(binascii.hexlify(flash.read(block * _BLOCK, _BLOCK)).decode())
            f.write('"')  # each partition's hex string ends here, not only the last one
        f.write("}}")


# The real boards' modules, whose own chips (codec, PMIC, panel) hwsim solders on.
_REAL_BOARDS = ("esp32_s3_box3", "m5stack_cores3", "esp32s3_cam")


def solder():
    """The simulated chips for config.json's parts and for a real board module's own
    peripherals, and the inputs file; the hwsim module when there are any (the host board
    without parts loads none of it), else None."""
    try:
        with open("config.json") as f:
            config = json.load(f)
        parts, board = config.get("parts"), config.get("board")
    except (OSError, ValueError, AttributeError):
        return None  # the firmware says what is wrong with it
    if not parts and board not in _REAL_BOARDS:
        return None
    import hwsim
    import siminputs

    if board in _REAL_BOARDS:
        hwsim.solder_board(getattr(__import__("boards." + board), board))  # its PINS
    hwsim.solder(parts)
    siminputs.watch(INPUT_FILE)
    return hwsim


def surroundings():
    """The networks around the board, as hwsim-network.json says (none: every network
    answers, and a scan finds nothing): read at the start, and again whenever the file
    changed when the firmware looks at its station, so a test can take the board's network
    away and bring it back while it runs."""
    network.sim_watch(_look_around)
    _look_around()


_around = {"text": None}


def _look_around():
    try:
        with open(NETWORK_FILE) as f:
            text = f.read()
    except OSError:
        text = "{}"
    if text == _around["text"]:
        return
    try:
        around = json.loads(text)
    except ValueError:
        return  # being written: applied at a later look
    _around["text"] = text
    network.sim_unreachable(around.get("unreachable", ()))
    network.sim_scan(around.get("scan", ()))


def record(reason, parts=None):
    """One line about this boot: the codec's register writes, backlight duties, LED frames,
    and the OTA partitions' story (each the last entries hwsim kept: its records are bounded)."""
    try:
        from boards.host import PINS  # the host board's parts (staged .mpy: other boards apart)
    except ImportError:
        PINS = {}
    codec = machine.sim_i2c_device(0, PINS["es8311_addr"]) if PINS else None
    pwm = machine.sim_pwm(PINS["backlight"]) if PINS else None
    neopixel = sys.modules.get("neopixel")  # imported by the host board's strip, if any
    strip = neopixel.sim_strip(PINS["led_strip"]) if PINS and neopixel else None
    line = {
        "reason": reason,
        "es8311_writes": list(codec.writes) if codec else [],
        "backlight_duty_u16": list(pwm.history) if pwm else [],
        "led_frames": list(strip.frames) if strip else [],
        "running": _label(esp32.Partition.RUNNING),
        "boot": _label(esp32.Partition.BOOT),
        "set_boot_calls": list(esp32.sim_set_boot_calls()),
        "written_blocks": dict((label, list(esp32.sim_partition(label).writes)) for label in _LABELS),
        "marked_valid": esp32.sim_marked_valid(),
        "hostname": network.hostname(),
        "wifi": {"connects": [list(c) for c in network.sim_connects()],
                 "access_point": network.sim_access_point()},
    }
    if parts is not None:
        line["hwsim"] = parts.snapshot()
    with open(RECORD_FILE, "a") as f:
        f.write(json.dumps(line) + "\n")


def quiet_reset_reports():
    """machine.reset() ends the firmware from inside the task that asked for it, by design;
    CPython's asyncio would also report that task's 'exception never retrieved'. Noise."""
    try:
        import logging
    except ImportError:
        return  # MicroPython's asyncio makes no such report
    if not hasattr(logging.Logger, "addFilter"):
        return

    def not_a_reset(record):
        return not (record.exc_info and isinstance(record.exc_info[1], machine.ResetRequested))

    logging.getLogger("asyncio").addFilter(not_a_reset)


def break_is_interrupt():
    """The simulator's stop is this process's KeyboardInterrupt: Ctrl-C, even where the
    process that started it ignored SIGINT (CPython then keeps ignoring it, and the board
    would be killed unrecorded), and on Windows Ctrl-Break (a Ctrl-C cannot reach a process
    group of its own)."""
    try:
        import signal
    except ImportError:
        return  # MicroPython: its own handler makes Ctrl-C the KeyboardInterrupt
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "SIGBREAK"):
        signal.signal(signal.SIGBREAK, signal.default_int_handler)


def write_tool_facts(path):
    """`device.py --tools PATH`: the firmware's start up to its tools (umcpfw.boot, on the
    simulated hardware, without a catalogue), then what tools/board/catalogue.py writes a
    catalogue from, as JSON lines in PATH: what the catalogue is for, a tools/list page's
    texts and the server's page limit, then each tool's name, flags, entry texts (with and
    without what 2025-06-18 adds), callback target and parameter table. Runs nothing else
    (CPython only)."""
    from umcp.catalogue import STRUCTURED, USER_ONLY
    from umcp.listing import entry_json
    from umcp.paging import MORE_END, MORE_HEAD, PAGE_END
    from umcp.rpc import FRAME_OPEN
    from umcp.server import TOOLS_OPEN
    from umcpfw.app import Application
    from umcpfw.boot import read_config

    config = read_config("config.json")
    parts = config.get("parts")  # (the board's start drops it from the config)
    app = Application(config)
    lines = [{"version": app.version, "board": config["board"], "parts": parts,
              "features": app.board.features()},
             {"frame_open": FRAME_OPEN, "open": TOOLS_OPEN, "end": PAGE_END, "more_head": MORE_HEAD,
              "more_end": MORE_END, "page_limit": app.server.page_limit}]
    for tool in app.server.tools:
        lines.append({"name": tool.name,
                      "flags": (USER_ONLY if tool.user_only else 0)
                      | (STRUCTURED if tool.output_schema is not None else 0),
                      "plain": entry_json(tool, False, False), "full": entry_json(tool, False, True),
                      "target": _target(tool, app), "rows": [prop.row() for prop in tool.properties]})
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


def _target(tool, app):
    """How the firmware finds a tool's callback again (umcpfw.commontools.CommonTools.callback)."""
    from umcp.compat import OnDemand

    callback = tool.callback
    if isinstance(callback, OnDemand) and callback.owner is app.tools:
        return ["load", callback.module, callback.function]
    owner, method = getattr(callback, "__self__", None), getattr(callback, "__name__", "")
    if owner is not None and not method.startswith("_") and getattr(owner, method, None) == callback:
        if owner is app.tools:
            return ["tools", method]
        if owner is app.board:
            return ["board", method]
        if any(part is owner for part in app.board.parts):
            return ["part", owner.name, method]
    raise ValueError("tool %s: its callback is no public method of the common tools, the board or "
                     "a part, nor loaded for its call: a catalogue cannot name it" % tool.name)


def run():
    if sys.argv[1:2] == ["--tools"]:
        solder()
        write_tool_facts(sys.argv[2])
        return
    break_is_interrupt()
    quiet_reset_reports()
    load_flash()
    surroundings()
    parts = solder()
    reason = "exit"
    started = True
    try:
        started = main.run()
    except KeyboardInterrupt:
        reason = "stop"  # the simulator is shutting down
    except machine.ResetRequested:
        # machine.reset() already let the simulated bootloader choose the next image.
        save_flash()
        record("reset", parts)
        raise
    save_flash()
    record(reason if started is not False else "config", parts)
    if started is False:
        sys.exit(1)  # config.json is unusable (the firmware said why): tools.sim says so


run()
