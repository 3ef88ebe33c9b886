"""make sim: the local backend and the simulated device on loopback, one real session.

Starts tools.backend in this process (with its web console) and tools.sim (the unchanged
firmware on the host board) as a child, prints what goes over the wire in readable form
(connection, hello, initialize, every tools/list page, a few tool calls including a photo
answered by the vision endpoint). The board is also a tool provider at the backend's MCP
endpoint, as a xiaozhi assistant's endpoint has it: that session is told after the first
one, and a call through it shows on the xiaozhi side. Then, in a terminal (or with
--serve), both keep running and the web console's URL is printed to open; otherwise
(--no-serve, or no terminal on stdin, as in CI) both stop. Exit status 0 when every step
worked.
"""

import argparse
import asyncio
import contextlib
import functools
import json
import os
import secrets
import subprocess
import sys
import tempfile

from ..backend import Backend
from ..hub.endpoint import TRANSPORT as ENDPOINT
from ..paths import ROOT, module_command  # noqa: F401 (ROOT: the folder the tests start children in)
from .launcher import interrupt, own_process_group

READY_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
PAGE_LIMIT = 2000  # small, so the transcript shows tools/list paging

# (what the call shows, tool name, arguments)
CALLS = [
    ("set the volume", "self.audio_speaker.set_volume", {"volume": 30}),
    ("read the device status", "self.get_device_status", {}),
    ("take a photo; the vision endpoint answers", "self.camera.take_photo",
     {"question": "What do you see?"}),
]
# make sim-generic: the generic board with a part of each type but the SPI LCD, as a maker's config.json
# lists them (docs/boards.md), and a call to each.
GENERIC_PARTS = [
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
    {"type": "oled", "name": "panel", "sda": 21, "scl": 22},
]
# What the generic board's sensors read in the demo (tools/sim/hwsim/siminputs.py's file in
# the device's folder): the light sensor at about a third of its range, the battery at 3.9 V
# through its 2:1 divider (1.95 V on the pin of a 3.3 V ADC): about 67 %.
GENERIC_INPUTS = {"adc": {"34": 21000, "35": 38725}}
INPUT_FILE = "hwsim-inputs.json"  # in the state directory, where tools/sim/device.py reads it
GENERIC_CALLS = [
    ("turn on the lamp (a relay)", "self.lamp.turn_on", {}),
    ("run the fan at 40 %", "self.fan.set_level", {"level": 40}),
    ("light the strip", "self.leds.set_color", {"red": 255, "green": 80, "blue": 0}),
    ("turn the servo to 90 degrees", "self.arm.set_angle", {"angle": 90}),
    ("beep", "self.beeper.beep", {"frequency": 880, "duration_ms": 100}),
    ("read the light sensor", "self.light.read", {}),
    ("read the room's temperature and humidity (DHT22)", "self.room.read", {}),
    ("read the water temperature (DS18B20)", "self.water.read", {}),
    ("read the battery", "self.battery.get_level", {}),
    ("write on the OLED", "self.panel.show_text", {"text": "Hello from umcp"}),
    ("read the device status", "self.get_device_status", {}),
]


def parse_args(argv=None, prog="python3 -m tools.sim.demo"):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--max-payload", type=int, default=PAGE_LIMIT, help="device tools/list page limit")
    parser.add_argument("--micropython", metavar="BIN", help="run the device under this MicroPython unix port")
    parser.add_argument("--mpy", action="store_true", help="with --micropython: run the .mpy files make deploy copies")
    parser.add_argument("--mqtt", action="store_true",
                        help="as a xiaozhi fleet does it (make sim-mqtt): the device has only the backend's "
                             "OTA URL, checks in there and connects over MQTT through the embedded broker")
    parser.add_argument("--generic", action="store_true",
                        help="the generic board with a part of each type but the SPI LCD (make sim-generic)")
    parser.add_argument("--http-port", type=int, default=0, help="the web console's port (default: a free one)")
    parser.add_argument("--serve", action=argparse.BooleanOptionalAction, default=None,
                        help="keep the device and the web console running after the session "
                             "(default: when stdin is a terminal)")
    args = parser.parse_args(argv)
    if args.serve is None:
        args.serve = sys.stdin is not None and sys.stdin.isatty()
    return args


def sim_command(url, token, state_dir, max_payload=None, micropython=None, extra=()):
    """The command line that runs the simulated device against `url` (`extra`: more options;
    url None: `extra` says where, e.g. --ota-url)."""
    command = module_command("sim")[0] + ["--state-dir", state_dir]
    if url is not None:
        command += ["--url", url, "--token", token]
    command += list(extra)
    if max_payload:
        command += ["--max-payload", str(max_payload)]
    if micropython:
        command += ["--micropython", micropython]
    return command


@contextlib.contextmanager
def simulated_device(url, token, state_dir, log, max_payload=None, micropython=None, extra=()):
    """tools.sim as a child process writing to `log`; stopped on exit."""
    sim = subprocess.Popen(sim_command(url, token, state_dir, max_payload, micropython, extra),
                           cwd=module_command("sim")[1], stdin=subprocess.DEVNULL, stdout=log,
                           stderr=subprocess.STDOUT, **windows_process_group())
    try:
        yield sim
    finally:
        stop_process(sim)


def windows_process_group():
    """On Windows, Popen's arguments for a process group of its own, which stop_process can
    send Ctrl-Break to (terminate() there ends the simulator without its child)."""
    return own_process_group() if os.name == "nt" else {}


def stop_process(process):
    """SIGTERM (Windows: Ctrl-Break, see windows_process_group), then SIGKILL if it has
    not ended within STOP_TIMEOUT."""
    if process.poll() is None:
        if os.name == "nt":
            interrupt(process)
        else:
            process.terminate()
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def session(args, out):
    token = secrets.token_hex(8)
    mqtt = {"mqtt": "embedded", "mqtt_port": 0} if args.mqtt else {}
    held = HeldLines(out)
    backend = Backend(token, host="127.0.0.1", http_port=args.http_port, out=held, web={}, **mqtt)
    await backend.start()
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
    extra = ["--mpy"] if args.mpy else []
    calls = CALLS
    endpoint_call = ("set the volume", "self.audio_speaker.set_volume", {"volume": 45})
    if args.generic:
        endpoint_call = ("turn the lamp off", "self.lamp.turn_off", {})
        extra += ["--board", "generic", "--extra-config", json.dumps({"parts": GENERIC_PARTS})]
        calls = GENERIC_CALLS
    if args.mqtt:  # config.json gets only the OTA URL: the OTA check says where to connect
        url = token = None
        extra += ["--ota-url", backend.ota_url]
        held.release()
        out("demo: starting the simulated device with only the OTA URL %s (page limit %d bytes)"
            % (backend.ota_url, args.max_payload))
    else:
        extra += ["--mcp-endpoint", backend.endpoint_url]
        out("demo: starting the simulated device (page limit %d bytes), also a tool provider at "
            "the backend's MCP endpoint" % args.max_payload)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="umcp-demo-") as state_dir, \
            open(os.path.join(state_dir, "device.log"), "w+") as device_log:
        if args.generic:
            with open(os.path.join(state_dir, INPUT_FILE), "w") as inputs:
                json.dump(GENERIC_INPUTS, inputs)
        try:
            with simulated_device(url, token, state_dir, device_log, args.max_payload, args.micropython,
                                  extra) as sim:
                device = await wait_ready(backend, sim, over_xiaozhi)
                failures += await call_tools(backend, device, out, calls)
                if not args.mqtt:
                    failures += await through_the_endpoint(backend, sim, device, held, out, endpoint_call)
                if args.serve and not failures:
                    await keep_serving(backend, sim, out)
        except DemoFailed as error:
            out("demo: %s" % error)
            failures += 1
        finally:
            await backend.close()
        if failures:
            device_log.seek(0)
            out("demo: device log follows\n" + device_log.read())
    out("demo: %s" % ("done" if not failures else "%d step(s) failed" % failures))
    return 0 if not failures else 1


async def call_tools(backend, device, out, calls=CALLS):
    """Make the calls (title, tool, arguments); returns how many failed."""
    failures = 0
    names = {tool.get("name") for tool in device.tools}
    for title, name, arguments in calls:
        out("demo: %s" % title)
        if name not in names:
            out("demo: the device offers no %s" % name)
            failures += 1
            continue
        result = await backend.call(device, name, arguments)
        failures += result is None or bool(result.get("isError"))
    return failures


async def through_the_endpoint(backend, sim, device, held, out, call):
    """The board's session at the MCP endpoint (held back until now), then a call through
    it (what, tool, arguments) that the xiaozhi side sees; returns how many steps failed."""
    out("demo: the same board at the backend's MCP endpoint, as a xiaozhi assistant's "
        "endpoint client sees it (plain JSON-RPC: no envelope, no hello)")
    held.release()
    provider = await wait_ready(backend, sim, at_endpoint)
    what, name, arguments = call
    out("demo: %s through the MCP endpoint" % what)
    result = await backend.call(provider, name, arguments)
    out("demo: read the status over the xiaozhi link: the same board")
    status = await backend.call(device, "self.get_device_status")
    return (result is None or bool(result.get("isError"))) + (status is None or bool(status.get("isError")))


async def keep_serving(backend, sim, out):
    """Until Ctrl-C (or the device's process ends): the console's URL to open."""
    out("demo: the device and the backend keep running: open the web console at %s "
        "(Ctrl-C to stop)" % backend.web.url)
    try:
        while sim.poll() is None:
            await asyncio.sleep(0.5)
        out("demo: the simulated device exited with status %s" % sim.returncode)
    except asyncio.CancelledError:
        out("demo: stopping")
        raise


async def wait_ready(backend, sim, accept=None):
    """The first device ready (of those accept(device) takes), unless the simulator exits."""
    ready = asyncio.create_task(backend.wait_ready(READY_TIMEOUT, accept))
    exited = asyncio.create_task(asyncio.to_thread(sim.wait))
    await asyncio.wait([ready, exited], return_when=asyncio.FIRST_COMPLETED)
    if ready.done() and not ready.cancelled() and ready.exception() is None:
        return ready.result()
    ready.cancel()
    if exited.done():
        raise DemoFailed("the simulated device exited with status %s" % sim.returncode)
    raise DemoFailed("the device did not finish onboarding within %d s" % READY_TIMEOUT)


class DemoFailed(Exception):
    pass


class HeldLines:
    """The transcript's printer: lines of the board's endpoint session (they start with
    "endpoint:") wait until release(), so the two sessions are told one after the other."""

    def __init__(self, out, prefix="endpoint:"):
        self.out = out
        self.prefix = prefix
        self.held = []
        self.holding = True

    def __call__(self, line):
        if self.holding and line.startswith(self.prefix):
            self.held.append(line)
        else:
            self.out(line)

    def release(self):
        self.holding = False
        for line in self.held:
            self.out(line)
        self.held = []


def over_xiaozhi(device):
    return getattr(device, "transport", None) != ENDPOINT


def at_endpoint(device):
    return getattr(device, "transport", None) == ENDPOINT


def main(argv=None, prog="python3 -m tools.sim.demo"):
    out = functools.partial(print, flush=True)
    try:
        return asyncio.run(session(parse_args(argv, prog), out))
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
