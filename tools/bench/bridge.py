"""The bridge's figures (part of make bench; alone: python -m tools.bench.bridge).

1. One tools/call (self.get_device_status) through the bridge over streamable HTTP
   (MCP 2026-07-28, a keep-alive HTTP client) against the floor: the same call straight
   to a simulated device over its WebSocket, from a xiaozhi server in this process.
   Two simulated devices run the real firmware, one behind each.
2. Load: N clients calling tools on M simulated devices through one bridge for S
   seconds (default 20 clients, 4 devices, 10 s; --load-seconds 30 for the long run):
   calls, errors, p50/p99 latency, and the bridge's resident memory per device (RSS
   with the devices online minus RSS before any connected, divided by M).

Figures, not a test: nothing here asserts on time.
"""

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import httpx2 as httpx

from ..bridge.naming import tool_name
from ..hub.xiaozhi import XiaozhiServer
from ..paths import ROOT
from ..childprocess import stop_process
from ..sim.board import SimBoard, config_for

TOKEN = "bench-token"
VERSION = "2026-07-28"
TOOL = "self.get_device_status"
FAST_RECONNECT = {"backoff_min": 0.1, "backoff_max": 0.5}


def free_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Sims:
    """Simulated devices (the real firmware under CPython: tools.sim.board.SimBoard)."""

    def __init__(self, state_root):
        self.state_root = state_root
        self.boards = []
        self.log = open(os.path.join(state_root, "devices.log"), "w")

    def start(self, url, device_id):
        state = os.path.join(self.state_root, device_id.replace(":", ""))
        config = config_for(url=url, token=TOKEN, device_id=device_id, **FAST_RECONNECT)
        self.boards.append(SimBoard(config, root=state, log=self.log).start())

    def stop(self):
        for board in self.boards:
            board.stop()
        self.log.close()


class BridgeProcess:
    def __init__(self, devices):
        self.ws_port, self.http_port = free_port(), free_port()
        self.url = "http://127.0.0.1:%d/mcp" % self.http_port
        self.device_url = "ws://127.0.0.1:%d/xiaozhi/v1/" % self.ws_port
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tools.bridge", "--port", str(self.ws_port), "--token", TOKEN,
             "--host", "127.0.0.1", "--http", str(self.http_port), "--expect", str(devices)],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        stop_process(self.process)


def request(method, params, request_id):
    params = dict(params)
    params["_meta"] = {"io.modelcontextprotocol/protocolVersion": VERSION,
                       "io.modelcontextprotocol/clientCapabilities": {},
                       "io.modelcontextprotocol/clientInfo": {"name": "umcp-bench", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


class RawClient:
    """A minimal MCP 2026-07-28 client over streamable HTTP: one keep-alive connection."""

    def __init__(self, url):
        self.url = url
        self.http = httpx.AsyncClient(timeout=60)
        self.ids = itertools.count(1)

    async def call(self, method, params, name=None):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": VERSION, "Mcp-Method": method}
        if name is not None:
            headers["Mcp-Name"] = name
        response = await self.http.post(self.url, content=json.dumps(request(method, params, next(self.ids))),
                                        headers=headers)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            text = [line[5:] for line in text.splitlines() if line.startswith("data:")][-1]
        message = json.loads(text)
        if "error" in message:
            raise RuntimeError("%s: %s" % (method, message["error"]))
        return message["result"]

    async def call_tool(self, name, arguments=None):
        result = await self.call("tools/call", {"name": name, "arguments": arguments or {}}, name)
        if result.get("isError"):
            raise RuntimeError("%s: %s" % (name, result["content"]))
        return result

    async def close(self):
        await self.http.aclose()


async def online(client, count, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            result = await client.call_tool("bridge__list_devices")
            devices = [d for d in result["structuredContent"]["devices"] if d["online"]]
            if len(devices) >= count:
                return [d["alias"] for d in devices]
        except (httpx.HTTPError, RuntimeError, ValueError):
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError("%d devices did not come online within %d s" % (count, timeout))


async def timed(action, count):
    times = []
    for _ in range(count):
        start = time.perf_counter()
        await action()
        times.append((time.perf_counter() - start) * 1000)
    return times


def pct(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def ratio(calls, out):
    """tools/call through the bridge (HTTP) / straight to the device (WebSocket)."""
    with tempfile.TemporaryDirectory(prefix="umcp-bench-bridge-") as tmp:
        sims = Sims(tmp)
        ready = asyncio.Event()
        floor_device = {}

        async def onboard(device):
            await device.initialize()
            floor_device["device"] = device
            ready.set()

        server = XiaozhiServer(TOKEN, on_device=onboard, on_notification=lambda d, p: None)
        port = await server.start()
        bridge = BridgeProcess(1)
        client = RawClient(bridge.url)
        try:
            sims.start("ws://127.0.0.1:%d/xiaozhi/v1/" % port, "be:0c:00:00:00:01")
            sims.start(bridge.device_url, "be:0c:00:00:00:02")
            await asyncio.wait_for(ready.wait(), 60)
            alias = (await online(client, 1))[0]
            device = floor_device["device"]
            for _ in range(20):  # warm both paths
                await device.call_tool(TOOL, {})
                await client.call_tool(tool_name(alias, TOOL))
            floor = await timed(lambda: device.call_tool(TOOL, {}), calls)
            through = await timed(lambda: client.call_tool(tool_name(alias, TOOL)), calls)
            own = await timed(lambda: client.call_tool("bridge__list_devices"), calls)
        finally:
            await client.close()
            bridge.stop()
            await server.close()
            sims.stop()
    f, t = statistics.median(floor), statistics.median(through)
    out("bridge: one tools/call (%s), %d calls each, median (p99)" % (TOOL, calls))
    out("  straight to the device over its WebSocket (floor)   %7.2f ms (%.2f)" % (f, pct(floor, 99)))
    out("  through the bridge, streamable HTTP, 2026-07-28      %7.2f ms (%.2f)" % (t, pct(through, 99)))
    out("  bridge / floor                                       %7.2fx   (target <= 1.3)" % (t / f))
    out("  of which the SDK's HTTP request alone: bridge__list_devices, no device, %.2f ms (%.2f)"
        % (statistics.median(own), pct(own, 99)))
    return t / f


async def load(clients, devices, seconds, out):
    """`clients` clients calling tools on `devices` devices through one bridge."""
    with tempfile.TemporaryDirectory(prefix="umcp-bench-load-") as tmp:
        sims = Sims(tmp)
        bridge = BridgeProcess(devices)
        probe = RawClient(bridge.url)
        workers = [RawClient(bridge.url) for _ in range(clients)]
        latencies, errors = [], []
        try:
            await online(probe, 0)  # the bridge answers
            rss_before = rss_kb(bridge.process.pid)
            for n in range(devices):
                sims.start(bridge.device_url, "10:ad:00:00:00:%02x" % (n + 1))
            aliases = await online(probe, devices)
            rss_online = rss_kb(bridge.process.pid)
            deadline = time.monotonic() + seconds

            async def worker(index, client):
                for n in itertools.count(index):
                    if time.monotonic() >= deadline:
                        return
                    alias = aliases[n % len(aliases)]
                    name, args = (("self.audio_speaker.set_volume", {"volume": n % 101}) if n % 2
                                  else (TOOL, {}))
                    start = time.perf_counter()
                    try:
                        await client.call_tool(tool_name(alias, name), args)
                        latencies.append((time.perf_counter() - start) * 1000)
                    except Exception as error:  # counted, and the run goes on
                        errors.append(repr(error))

            started = time.monotonic()
            await asyncio.gather(*(worker(i, c) for i, c in enumerate(workers)))
            elapsed = time.monotonic() - started
            rss_after = rss_kb(bridge.process.pid)
            still_up = bridge.process.poll() is None
        finally:
            for client in workers + [probe]:
                await client.close()
            bridge.stop()
            sims.stop()
    out("bridge: %d clients calling tools on %d simulated devices through one bridge for %.0f s"
        % (clients, devices, seconds))
    out("  calls %d (%.0f/s), errors %d%s" % (len(latencies), len(latencies) / elapsed, len(errors),
                                             (": " + errors[0]) if errors else ""))
    if latencies:
        out("  latency p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (
            pct(latencies, 50), pct(latencies, 99), max(latencies)))
    out("  bridge RSS: %.1f MB with no device, %.1f MB with %d online (%.0f KB per device), %.1f MB after the run%s"
        % (rss_before / 1024, rss_online / 1024, devices, (rss_online - rss_before) / devices,
           rss_after / 1024, "" if still_up else "; THE BRIDGE DIED"))
    return not errors and still_up


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench.bridge", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return parser.parse_args(argv)


def add_arguments(parser):
    parser.add_argument("--calls", type=int, default=200, help="calls per path for the ratio (default 200)")
    parser.add_argument("--load-clients", type=int, default=20)
    parser.add_argument("--load-devices", type=int, default=4)
    parser.add_argument("--load-seconds", type=float, default=10.0,
                        help="length of the load run (default 10; the issue's figure is 30)")


def run(args, out=print):
    async def both():
        await ratio(args.calls, out)
        return await load(args.load_clients, args.load_devices, args.load_seconds, out)
    return asyncio.run(both())


def main(argv=None):
    return 0 if run(parse_args(argv)) else 1


if __name__ == "__main__":
    sys.exit(main())
