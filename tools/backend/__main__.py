"""python3 -m tools.backend --port PORT [--token TOKEN] [--host HOST] ..."""

import argparse
import asyncio
import functools
import json
import sys

from ..paths import module_prog
from .backend import Backend
from .console import HELP, Console, stdin_lines
from ..hub.front import LOOPBACK, devices_token
from ..hub.vision import OpenAIVision


def parse_args(argv=None, prog=module_prog("backend")):
    parser = argparse.ArgumentParser(prog=prog, description="A local xiaozhi-compatible backend for umcp devices: "
                                     "they connect over WebSocket (or MQTT); its console and web console drive them.")
    parser.add_argument("--port", type=int, default=8000, help="WebSocket port (default 8000)")
    parser.add_argument("--token", help="token devices must present (default on the network: a fresh one, "
                                        "printed for their config.json; on 127.0.0.1: none)")
    parser.add_argument("--no-token", action="store_true",
                        help="serve devices on the network without a token: anyone who reaches the port may "
                             "attach a device or offer tools at the MCP endpoint (a trusted network only)")
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default all)")
    parser.add_argument("--http-port", type=int, default=8003,
                        help="vision/OTA HTTP port (default 8003, 0 picks a free one)")
    parser.add_argument("--public-host", help="host name devices use to reach us (default: LAN address)")
    parser.add_argument("--ota-dir", help="serve the firmware images in this folder at /ota/<name>")
    parser.add_argument("--console-host", default="127.0.0.1", choices=["127.0.0.1", "0.0.0.0"],
                        help="who may open the web console at http://HOST:HTTP-PORT/: 127.0.0.1 (default) "
                             "this machine only; 0.0.0.0 any machine that has the console's token")
    parser.add_argument("--console-token", help="the token the web console asks of other machines "
                                                "(default: --token, else one made up and printed)")
    parser.add_argument("--no-console", action="store_true", help="serve no web console")
    OpenAIVision.add_arguments(parser)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for a device's answer")
    parser.add_argument("--trace", action="store_true", help="print every MCP message")
    # devices over MQTT, the OTA check and activation (docs/mqtt.md)
    parser.add_argument("--mqtt", nargs="?", const="embedded", metavar="URL",
                        help="accept devices over MQTT too: alone, an embedded broker (amqtt, --mqtt-port); "
                             "or mqtt://[user:password@]host:port of a broker of yours. The OTA check then "
                             "hands out MQTT credentials per device")
    parser.add_argument("--mqtt-port", type=int, default=1883, help="embedded broker port (default 1883, 0: free)")
    parser.add_argument("--mqtt-passwd", metavar="FILE",
                        help="a mosquitto password_file the backend keeps in step with the credentials it issues")
    parser.add_argument("--mqtt-pidfile", metavar="FILE", help="mosquitto's pid_file: SIGHUP it after --mqtt-passwd changes")
    parser.add_argument("--activation", action="store_true",
                        help="devices must be activated: the OTA check hands out a code, `activate CODE` confirms it")
    parser.add_argument("--activation-keys", metavar="FILE",
                        help='JSON {"<serial number>": "<hex HMAC key>"}: devices with a serial number sign the challenge')
    parser.add_argument("--state", metavar="FILE",
                        help="remember activations and the MQTT secret (issued credentials stay valid) across restarts")
    parser.add_argument("--timezone-offset", type=int, default=0, help="minutes, in the OTA answer's server_time")
    args = parser.parse_args(argv)
    if args.no_token and args.token:
        parser.error("--no-token and --token: keep one of them")
    args.token, args.token_made = devices_token(args.host, args.token, args.no_token)
    return args


async def main(args):
    out = functools.partial(print, flush=True)
    model = OpenAIVision.from_args(args)
    web = None
    if not args.no_console:
        web = {"remote": args.console_host == "0.0.0.0", "token": args.console_token or args.token}
    keys = None
    if args.activation_keys:
        with open(args.activation_keys) as source:
            keys = {serial: bytes.fromhex(key) for serial, key in json.load(source).items()}
    backend = Backend(args.token, args.host, args.port, args.http_port, args.public_host, model,
                      args.ota_dir, out=out, trace=args.trace, request_timeout=args.timeout, web=web,
                      mqtt=args.mqtt, mqtt_port=args.mqtt_port, mqtt_passwd=args.mqtt_passwd,
                      mqtt_pidfile=args.mqtt_pidfile, activation=args.activation or bool(keys),
                      activation_keys=keys, timezone_offset=args.timezone_offset, state_path=args.state)
    await backend.start()
    if args.token_made:
        out("backend: no --token given: devices must present the token %s (in their config.json: "
            "\"token\": \"%s\"); --no-token serves them without one" % (args.token, args.token))
    elif not args.token and args.host not in LOOPBACK:
        out("backend: warning: --no-token: anyone who reaches port %d may attach a device or offer tools "
            "at the MCP endpoint" % backend.port)
    out(HELP)
    console = Console(backend, out)
    try:
        async for line in stdin_lines():
            if not await console.execute(line):
                return
        out("backend: console closed (end of input); serving until interrupted")
        await asyncio.Event().wait()
    finally:
        await backend.close()


def run(argv=None, prog=module_prog("backend")):
    """The command: `python -m tools.backend ...`, `umcp backend ...`."""
    try:
        asyncio.run(main(parse_args(argv, prog)))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(run())
