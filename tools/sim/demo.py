"""umcp sim (make sim): the local backend and a simulated board on loopback, one real
session printed in readable form: connection, hello, initialize, every tools/list page,
a few tool calls (a photo answered by the vision endpoint among them), and the same board
as a tool provider at the backend's MCP endpoint. In a terminal (or with --serve) both
keep running and the web console's URL is printed; otherwise both stop, exit status 0
when every step worked.

--board NAME (`umcp boards`) and --config FILE (a maker's config.json; its Wi-Fi, server
and token are the simulator's): that board's session, a call of each of its parts' tools
with arguments made from each tool's schema. --mcp-http PORT: the board also serves MCP
over HTTP at http://127.0.0.1:PORT/mcp (--auth none: no token, as Home Assistant
connects). A board or config.json that cannot be used is said in one line (status 1).
docs/simulator.md has the rest."""

import argparse
import asyncio
import functools
import json
import os
import secrets
import sys
import tempfile

from ..backend import Backend
from ..hub.endpoint import at_endpoint
from ..paths import module_prog
from .board import BoardFailed, SimBoard, check_runtime_options, config_for, write_inputs
from .calls import CALLS, GENERIC_CALLS, GENERIC_INPUTS, GENERIC_PARTS

# Small, so the transcript shows tools/list paging (the link's frames; an answer at the
# board's HTTP endpoint, --mcp-http, lists every tool on one page whatever it is).
PAGE_LIMIT = 2000
# config.json's ways to reach a server or to be reached: the simulator's own, not --config's
# (mcp_http comes from --mcp-http, bound to loopback).
SIMULATOR_KEYS = ("wifi", "url", "token", "ota_url", "mcp_endpoint", "mcp_http", "board")
SAMPLE_TEXT = "Hello from umcp"


class BadInput(Exception):
    """A --board or --config the simulator cannot use: the one line that says why."""


def parse_args(argv=None, prog=module_prog("sim.demo")):
    parser = argparse.ArgumentParser(prog=prog, description="The local backend and a simulated board on loopback: "
                                     "one real session, printed.")
    parser.add_argument("--max-payload", type=int, default=PAGE_LIMIT,
                        help="device tools/list page limit of its link's frames (default %d)" % PAGE_LIMIT)
    parser.add_argument("--micropython", metavar="BIN", help="run the device under this MicroPython unix port")
    parser.add_argument("--mpy", action="store_true", help="with --micropython: run the .mpy files deploy copies to a board")
    parser.add_argument("--mqtt", action="store_true",
                        help="as a xiaozhi fleet does it: the device has only the backend's "
                             "OTA URL, checks in there and connects over MQTT through the embedded broker")
    parser.add_argument("--generic", action="store_true",
                        help="the generic board with a part of each type but the SPI LCD")
    parser.add_argument("--board", metavar="NAME",
                        help="the board to simulate, any of lib/boards (umcp boards lists them; default "
                             "config.json's \"board\", else host)")
    parser.add_argument("--config", metavar="FILE",
                        help="a config.json for the board: its parts and settings (its Wi-Fi, server and "
                             "token are the simulator's)")
    parser.add_argument("--mcp-http", type=int, metavar="PORT",
                        help="the board also serves MCP over HTTP at http://127.0.0.1:PORT/mcp, as "
                             "config.json's mcp_http does")
    parser.add_argument("--auth", choices=("token", "none"),
                        help="with --mcp-http: none, no token (as Home Assistant connects); token (the "
                             "default): one made up and printed")
    parser.add_argument("--http-port", type=int, default=0, help="the web console's port (default: a free one)")
    parser.add_argument("--serve", action=argparse.BooleanOptionalAction, default=None,
                        help="keep the device and the web console running after the session "
                             "(default: when stdin is a terminal)")
    args = parser.parse_args(argv)
    check_runtime_options(parser, args)
    if args.auth and args.mcp_http is None:
        parser.error("--auth needs --mcp-http")
    if args.generic and (args.board or args.config):
        parser.error("--generic is --board generic with a part of each type: give one or the other")
    if args.serve is None:
        args.serve = sys.stdin is not None and sys.stdin.isatty()
    return args


def board_names():
    """The boards of lib/boards."""
    from ..board.boards import boards

    return [name for name, _ in boards()]


def maker_config(args):
    """(the board, the keys of --config's config.json) for the options; raises BadInput with
    the one line to say."""
    keys = {}
    if args.config:
        try:
            with open(args.config, encoding="utf-8") as source:
                keys = json.load(source)
        except OSError as e:
            raise BadInput("--config: cannot read %s: %s" % (args.config, e.strerror or e))
        except ValueError as e:
            raise BadInput("--config: %s is not JSON: %s" % (args.config, e))
        if not isinstance(keys, dict):
            raise BadInput("--config: %s holds %s, not a JSON object like {\"board\": \"generic\", "
                           "\"parts\": [...]}" % (args.config, json_kind(keys)))
    board = args.board or ("generic" if args.generic else keys.get("board") or "host")
    known = board_names()
    if board not in known:
        raise BadInput("no board %r; boards: %s" % (board, ", ".join(known)))
    if "parts" in keys:
        from .. import devicelib  # noqa: F401 (lib/ on sys.path: the parts' check)
        from parts import PartError, check

        if not isinstance(keys["parts"], list):
            raise BadInput('--config: %s: "parts" must be a list of parts, not %s'
                           % (args.config, json_kind(keys["parts"])))
        try:
            check.entries(keys["parts"], keys.get("chip"))
        except PartError as e:
            raise BadInput("--config: %s: %s" % (args.config, e))
    return board, keys


def json_kind(value):
    """What a JSON value is, in words ("an array", "a string")."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return {list: "an array", str: "a string", dict: "an object"}.get(type(value), "a number")


def sample_arguments(schema):
    """Arguments for a tool from its input schema: each required property given a value in
    its range (an enum's first, a default, the middle of a number's range), or None when one
    cannot be made up."""
    arguments = {}
    properties = (schema or {}).get("properties") or {}
    for name in (schema or {}).get("required") or ():
        spec = properties.get(name) or {}
        kind = spec.get("type")
        if "enum" in spec:
            arguments[name] = spec["enum"][0]
        elif "default" in spec:
            arguments[name] = spec["default"]
        elif kind in ("integer", "number"):
            low, high = spec.get("minimum", 0), spec.get("maximum", spec.get("minimum", 0) + 100)
            arguments[name] = (low + high) // 2 if kind == "integer" else (low + high) / 2
        elif kind == "string":
            arguments[name] = SAMPLE_TEXT
        elif kind == "boolean":
            arguments[name] = True
        else:
            return None
    return arguments


def part_calls(tools, parts):
    """(title, tool, arguments) for each tool of each part in `parts` (config.json's), in
    the device's order, then the device status."""
    calls = []
    for part in parts:
        prefix = "self.%s." % part.get("name")
        for tool in tools:
            name = tool.get("name") or ""
            if name.startswith(prefix):
                arguments = sample_arguments(tool.get("inputSchema"))
                if arguments is not None:
                    calls.append(("%s (%s): %s" % (part.get("name"), part.get("type"), name[len(prefix):]),
                                  name, arguments))
    return calls + [("read the device status", "self.get_device_status", {})]


def mcp_http_config(args):
    """config.json's mcp_http for --mcp-http and --auth (bound to loopback), and the line
    that says where clients connect."""
    url = "http://127.0.0.1:%d/mcp" % args.mcp_http
    if args.auth == "none":
        return ({"port": args.mcp_http, "bind": "127.0.0.1", "auth": "none"},
                "demo: the board also serves MCP at %s, no token (--auth none, as Home Assistant "
                "connects)" % url)
    token = secrets.token_hex(8)
    return ({"port": args.mcp_http, "bind": "127.0.0.1", "token": token},
            "demo: the board also serves MCP at %s, header Authorization: Bearer %s" % (url, token))


async def session(args, out):
    token = secrets.token_hex(8)
    mqtt = {"mqtt": "embedded", "mqtt_port": 0} if args.mqtt else {}
    held = HeldLines(out)
    backend = Backend(token, host="127.0.0.1", http_port=args.http_port, out=held, web={}, **mqtt)
    await backend.start()
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
    calls = CALLS if args.board_name == "host" else None  # None: the parts' tools, once listed
    endpoint_call = ("set the volume", "self.audio_speaker.set_volume", {"volume": 45})
    config = config_for(args.board_name, url, token, max_payload=args.max_payload)
    generic = args.board_name == "generic" and not args.config  # make sim-generic's parts
    if generic:
        endpoint_call = ("turn the lamp off", "self.lamp.turn_off", {})
        config.update(parts=GENERIC_PARTS)
        calls = GENERIC_CALLS
    config.update((key, value) for key, value in args.board_keys.items() if key not in SIMULATOR_KEYS)
    own = [key for key in SIMULATOR_KEYS if key in args.board_keys and key not in ("board", "mcp_http")]
    if own:
        out("demo: config.json's %s: the simulator's own here (its backend on loopback)" % ", ".join(own))
    if "mcp_http" in args.board_keys and args.mcp_http is None:
        out("demo: config.json's mcp_http is left out: --mcp-http PORT (and --auth none) serves MCP over "
            "HTTP on 127.0.0.1")
    if args.mcp_http is not None:
        config["mcp_http"], said = mcp_http_config(args)
        out(said)
    if args.mqtt:  # config.json gets only the OTA URL: the OTA check says where to connect
        del config["url"], config["token"]
        config["ota_url"] = backend.ota_url
        held.release()
        out("demo: starting the simulated device with only the OTA URL %s (page limit %d bytes)"
            % (backend.ota_url, args.max_payload))
    else:
        config["mcp_endpoint"] = backend.endpoint_url
        out("demo: starting the simulated device (page limit %d bytes), also a tool provider at "
            "the backend's MCP endpoint" % args.max_payload)
    runtime = "cpython" if not args.micropython else "mpy" if args.mpy else "micropython"
    failures = 0
    with tempfile.TemporaryDirectory(prefix="umcp-demo-") as state_dir, \
            open(os.path.join(state_dir, "device.log"), "w+") as device_log:
        if args.board_name == "generic":
            write_inputs(state_dir, GENERIC_INPUTS)
        try:
            with SimBoard(config, runtime, args.micropython, root=state_dir, log=device_log,
                          say=functools.partial(logged, device_log)) as board:
                device = await board.ready(backend, over_xiaozhi)
                if calls is None:
                    calls = part_calls(device.tools, config.get("parts") or [])
                    if calls[0][1] in {tool.get("name") for tool in device.tools}:
                        endpoint_call = calls[0]
                    else:
                        endpoint_call = ("read the device status", "self.get_device_status", {})
                failures += await call_tools(backend, device, out, calls)
                if not args.mqtt:
                    failures += await through_the_endpoint(backend, board, device, held, out, endpoint_call)
                if args.serve and not failures:
                    await keep_serving(backend, board, out)
        except (DemoFailed, BoardFailed) as error:
            out("demo: %s" % error)
            failures += 1
        finally:
            await backend.close()
        if failures:
            device_log.flush()
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


async def through_the_endpoint(backend, board, device, held, out, call):
    """The board's session at the MCP endpoint (held back until now), then a call through
    it (what, tool, arguments) that the xiaozhi side sees; returns how many steps failed."""
    out("demo: the same board at the backend's MCP endpoint, as a xiaozhi assistant's "
        "endpoint client sees it (plain JSON-RPC: no envelope, no hello)")
    held.release()
    provider = await board.ready(backend, at_endpoint)
    what, name, arguments = call
    out("demo: %s through the MCP endpoint" % what)
    result = await backend.call(provider, name, arguments)
    out("demo: read the status over the xiaozhi link: the same board")
    status = await backend.call(device, "self.get_device_status")
    return (result is None or bool(result.get("isError"))) + (status is None or bool(status.get("isError")))


async def keep_serving(backend, board, out):
    """Until Ctrl-C (or the board ends): the console's URL to open."""
    out("demo: the device and the backend keep running: open the web console at %s "
        "(Ctrl-C to stop)" % backend.web.url)
    try:
        while board.running:
            await asyncio.sleep(0.5)
        out("demo: the simulated device exited with status %s" % board.returncode)
    except asyncio.CancelledError:
        out("demo: stopping")
        raise


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


def logged(log, line):
    log.write("[sim] %s\n" % line)
    log.flush()


def over_xiaozhi(device):
    return not at_endpoint(device)


def main(argv=None, prog=module_prog("sim.demo")):
    out = functools.partial(print, flush=True)
    args = parse_args(argv, prog)
    try:
        args.board_name, args.board_keys = maker_config(args)
    except BadInput as e:
        sys.stderr.write("sim: %s\n" % e)
        return 1
    try:
        return asyncio.run(session(args, out))
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
