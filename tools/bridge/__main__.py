"""python3 -m tools.bridge --port PORT [--token TOKEN] [--http HTTP_PORT] [--alias ID=NAME ...]
                          [--serial PORT ...]

Serves every umcp device that connects, and every board on a --serial port, as one MCP
server, over stdio (for Claude Desktop, the MCP Inspector, any SDK client) or, with --http,
over streamable HTTP at http://127.0.0.1:HTTP_PORT/mcp. Speaks MCP 2026-07-28 and
2024-11-05..2025-11-25. Logs go to stderr: stdout belongs to the MCP stdio transport."""

import argparse
import asyncio
import signal
import sys

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from tools.hub.httpserver import HttpServer
from tools.hub.vision import OpenAIVision
from tools.bridge.bridge import Bridge
from tools.bridge.naming import parse_aliases


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tools.bridge", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8000, help="WebSocket port devices connect to")
    parser.add_argument("--token", help="token devices must present")
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on for devices (default all)")
    parser.add_argument("--http", type=int, metavar="HTTP_PORT",
                        help="serve streamable HTTP at http://127.0.0.1:HTTP_PORT/mcp instead of stdio")
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
    return args


def log(text):
    sys.stderr.write("[bridge] %s\n" % text)
    sys.stderr.flush()


async def serve_http(bridge, port):
    app = bridge.mcp.streamable_http_app(host="127.0.0.1")  # stateful: legacy sessions keep their GET stream
    http = HttpServer(app)
    port = await http.start("127.0.0.1", port)
    log("MCP clients connect to http://127.0.0.1:%d/mcp" % port)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # SIGHUP: its terminal closed
        loop.add_signal_handler(sig, stop.set)
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
    try:
        if args.http is not None:
            await serve_http(bridge, args.http)
        else:
            await serve_stdio(bridge)
    finally:
        await bridge.close()


if __name__ == "__main__":
    try:
        asyncio.run(main(parse_args()))
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, SIGTERM: closed already
        pass
