"""python3 -m tools.bridge --port PORT [--token TOKEN] [--http HTTP_PORT] [--alias ID=NAME ...]
                          [--serial PORT ...]

Serves every umcp device that connects, and every board on a --serial port, as one MCP
server, over stdio (for Claude Desktop,
the MCP Inspector, any SDK client) or, with --http, over streamable HTTP at
http://127.0.0.1:HTTP_PORT/mcp. Speaks MCP 2026-07-28 and 2024-11-05..2025-11-25. Logs go
to stderr: stdout belongs to the MCP stdio transport.

With --http-host the HTTP endpoint listens where other machines reach it (Home Assistant,
an MCP client on the LAN): then clients send --http-token as a Bearer token, or, with
--http-auth none on a trusted network, nothing. Host and Origin are checked either way
(DNS rebinding): this machine's names and addresses, and those --http-name adds."""

import argparse
import asyncio
import hmac
import signal
import socket
import sys

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from ..board.ports import SHORTCUTS, port_problem
from ..hub.front import LOOPBACK, devices_token, reachable_host
from ..hub.httpserver import HttpServer
from ..paths import module_prog
from ..hub.vision import OpenAIVision
from .bridge import Bridge
from .naming import parse_aliases


def parse_args(argv=None, prog=module_prog("bridge")):
    parser = argparse.ArgumentParser(prog=prog, description="Every umcp device that connects, and every board on a "
                                     "--serial port, as one MCP server over stdio or streamable HTTP.")
    parser.add_argument("--port", type=int, help="WebSocket port devices connect to (default 8000; with "
                                                   "--serial alone, a free one on 127.0.0.1)")
    parser.add_argument("--token", help="token devices must present (default on the network: a fresh one, "
                                        "printed for their config.json)")
    parser.add_argument("--no-token", action="store_true",
                        help="serve devices on the network without a token: anyone who reaches the port may "
                             "attach a device or offer tools at the MCP endpoint, and those tools reach your "
                             "assistant (a trusted network only)")
    parser.add_argument("--host", help="address to listen on for devices (default all, 0.0.0.0; with --serial "
                                       "and no other option for devices, 127.0.0.1: this machine only)")
    parser.add_argument("--http", type=int, metavar="HTTP_PORT",
                        help="serve streamable HTTP at http://127.0.0.1:HTTP_PORT/mcp instead of stdio")
    parser.add_argument("--http-host", default="127.0.0.1", metavar="ADDRESS",
                        help="where the HTTP endpoint listens (default 127.0.0.1: this machine only; "
                             "0.0.0.0: every interface), anything but loopback with --http-token or --http-auth none")
    parser.add_argument("--http-token", metavar="TOKEN", help="the Bearer token HTTP clients must send")
    parser.add_argument("--http-auth", choices=("token", "none"), default="token",
                        help="none: HTTP clients send no token (a trusted network; Home Assistant): anyone "
                             "who reaches the port can call every device's tools")
    parser.add_argument("--http-name", action="append", default=[], metavar="HOST",
                        help="another name or address clients reach this machine by (Host checks); repeatable")
    parser.add_argument("--alias", action="append", default=[], metavar="DEVICE_ID=NAME",
                        help="name a device's tools and resources NAME__* / umcp://NAME/... "
                             "(default: dev- and the last 3 bytes of its MAC); repeatable")
    parser.add_argument("--device-wait", type=float, default=10.0,
                        help="seconds a list waits for devices that connected but are still onboarding")
    parser.add_argument("--expect", type=int, default=0, metavar="N",
                        help="the first list waits (up to --device-wait) until N devices are online: "
                             "a client started with the bridge sees your devices' tools at once")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for a device's answer")
    parser.add_argument("--list-ttl", type=float, default=5.0,
                        help="seconds clients may cache tools/list and resources/list (every change is "
                             "also announced); default 5")
    parser.add_argument("--user-tools", action="store_true",
                        help="list the devices' user-only tools too (they are for their owner: you)")
    parser.add_argument("--device-http-port", type=int, default=0, metavar="PORT",
                        help="port of the devices' HTTP endpoints: the OTA check at /xiaozhi/ota/ "
                             "(put it in a board's ota_url) and the vision upload (default: a free one)")
    parser.add_argument("--mqtt", nargs="?", const="embedded", metavar="URL",
                        help="take devices over MQTT too: alone, an embedded broker (amqtt, --mqtt-port); "
                             "or mqtt://user:password@host:port for a broker of yours. Devices get their "
                             "credentials from the OTA check")
    parser.add_argument("--mqtt-port", type=int, default=1883, help="embedded broker port (default 1883, 0: free)")
    parser.add_argument("--serial", action="append", default=[], metavar="PORT",
                        help="a board on this serial port (/dev/ttyUSB0, COM3, socket://host:port), served "
                             "over its USB cable, no Wi-Fi: the bridge stops its main.py while it runs and "
                             "soft-resets it as it exits; repeatable")
    OpenAIVision.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        args.aliases = parse_aliases(args.alias)
    except ValueError as error:
        parser.error(str(error))
    if args.no_token and args.token:
        parser.error("--no-token and --token: keep one of them")
    if args.host is None:
        # A bridge started for serial boards alone serves no device on the network.
        asked = (args.port, args.token, args.no_token, args.mqtt, args.device_http_port)
        args.host = "127.0.0.1" if args.serial and not any(asked) else "0.0.0.0"
    if args.port is None:
        args.port = 0 if args.host in LOOPBACK and args.serial else 8000
    args.token, args.token_made = devices_token(args.host, args.token, args.no_token)
    if args.http_auth == "none" and args.http_token:
        parser.error("--http-auth none and --http-token: keep one of them")
    if args.http_host not in LOOPBACK and args.http_auth == "token" and not args.http_token:
        parser.error("--http-host %s: other machines reach the endpoint: give --http-token TOKEN, "
                     "or --http-auth none on a trusted network" % args.http_host)
    return args



def own_names(bind, extra=()):
    """The Host names clients may use for an endpoint listening on `bind`: loopback, this
    machine's name (and name.local), its addresses, and `extra`."""
    names = {"127.0.0.1", "localhost", "[::1]"} | set(extra)
    if bind not in LOOPBACK:
        hostname = socket.gethostname()
        names |= {hostname, hostname.split(".")[0], hostname.split(".")[0] + ".local"}
        if bind not in ("", "0.0.0.0"):
            names.add(bind)
        else:
            names.add(reachable_host(bind))
            try:
                names |= {info[4][0] for info in socket.getaddrinfo(hostname, None, socket.AF_INET)}
            except OSError:
                pass
    return sorted(names)


def transport_security(bind, extra=()):
    """The SDK's DNS-rebinding check (Host and Origin) for `bind`'s names."""
    names = own_names(bind, extra)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=[name + ":*" for name in names] + names,
                                     allowed_origins=["http://%s:*" % name for name in names])


class BearerCheck:
    """ASGI: every request needs Authorization: Bearer <token> (else 401, as the board's
    endpoint answers)."""

    def __init__(self, app, token):
        self.app = app
        self.expected = ("Bearer " + token).encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given[:7].title() + given[7:], self.expected):
                body = (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,'
                        b'"message":"Unauthorized: Authorization: Bearer <token> required"}}')
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="umcp"'),
                    (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def log(text):
    sys.stderr.write("[bridge] %s\n" % text)
    sys.stderr.flush()


async def serve_http(bridge, port, host="127.0.0.1", token=None, names=()):
    # stateful: legacy sessions keep their GET stream
    app = bridge.mcp.streamable_http_app(host=host, transport_security=transport_security(host, names))
    http = HttpServer(app if token is None else BearerCheck(app, token))
    port = await http.start(host, port)
    if token is None and host not in LOOPBACK:
        log("warning: no token (--http-auth none): anyone who reaches port %d can call every device's tools" % port)
    log("MCP clients connect to http://%s:%d/mcp" % (reachable_host(host), port))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):  # SIGHUP: its terminal closed
        if sig is not None:
            try:
                loop.add_signal_handler(sig, stop.set)
            except NotImplementedError:  # Windows' loop: Ctrl-C cancels asyncio.run's task instead
                pass
    try:
        await stop.wait()
    finally:
        bridge.close_listeners()
        await http.close()


async def serve_stdio(bridge):
    # A client that ends the bridge with SIGTERM (after closing stdin, or instead) still
    # gets its boards left as they were: the task ends through bridge.close().
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP) if hasattr(signal, "SIGHUP") else ():
        loop.add_signal_handler(sig, main.cancel)
    async with stdio_server() as (read, write):
        relay_in, relay_out = anyio.create_memory_object_stream(0)
        async with anyio.create_task_group() as group:
            group.start_soon(_answer_unreadable_lines, read, write, relay_in)
            await bridge.mcp.run(relay_out, write, bridge.mcp.create_initialization_options())
            group.cancel_scope.cancel()


async def _answer_unreadable_lines(read, write, relay):
    """The SDK's stdio transport hands the server an exception for a line that is not a
    JSON-RPC message, and nothing answers it. JSON-RPC wants an error with a null id:
    -32700 for text that is not JSON, -32600 for JSON that is not a message."""
    async with relay:
        async for item in read:
            if not isinstance(item, Exception):
                await relay.send(item)
                continue
            errors = item.errors() if isinstance(item, ValidationError) else []
            not_json = any(error.get("type") == "json_invalid" for error in errors)
            error = types.ErrorData(code=types.PARSE_ERROR if not_json else types.INVALID_REQUEST,
                                    message="Parse error" if not_json else "Invalid Request")
            await write.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error)))


async def main(args):
    model = OpenAIVision.from_args(args)
    bridge = Bridge(args.token, args.host, args.port, args.device_wait, args.timeout, model, log,
                    user_tools=args.user_tools, aliases=args.aliases, list_ttl=args.list_ttl,
                    expect=args.expect, mqtt=args.mqtt, mqtt_port=args.mqtt_port,
                    device_http_port=args.device_http_port, serial=args.serial)
    await bridge.start()
    if args.token_made:
        log("no --token given: devices must present the token %s (in their config.json: \"token\": \"%s\"; "
            "tool providers connect to %s); --no-token serves them without one"
            % (args.token, args.token, bridge.front.endpoint_url))
    elif args.token is None and args.host not in LOOPBACK:
        log("warning: --no-token: anyone who reaches port %d may attach a device at %s or offer tools at the "
            "MCP endpoint, and those tools reach your assistant" % (bridge.port, bridge.front.websocket_url))
    try:
        if args.http is not None:
            await serve_http(bridge, args.http, args.http_host, args.http_token, args.http_name)
        else:
            await serve_stdio(bridge)
    finally:
        await bridge.close()


def run(argv=None, prog=module_prog("bridge")):
    """The command: `python -m tools.bridge ...`, `umcp bridge ...`. A --serial port that is
    not there is refused before anything starts: one line, exit status 1."""
    args = parse_args(argv, prog)
    for port in args.serial:
        if port == "auto" or port in SHORTCUTS:
            sys.stderr.write("bridge: --serial %s: name the port itself (/dev/ttyUSB0, /dev/ttyACM0, COM3) or a "
                             "pyserial URL; mpremote's auto and u0/a0/c0 are deploy's and repl's\n" % port)
            return 1
        problem = port_problem(port)
        if problem:
            sys.stderr.write("bridge: %s\n" % problem)
            return 1
    try:
        asyncio.run(main(args))
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, SIGTERM: closed already
        pass
    return 0


if __name__ == "__main__":
    sys.exit(run())
