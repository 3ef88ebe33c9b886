"""python -m tools.bench.fleet [--devices N] [--brokers embedded,mosquitto] (make bench)

A fleet of simulated devices to one local backend, over MQTT through the embedded amqtt
broker and through Debian's mosquitto (skipped, with a label, where it is absent), and
over WebSocket. This process runs the backend (tools.backend.Backend with --mqtt); a
child (tools/bench/fleetdevices.py) runs the fleet in one asyncio loop: each device
checks in at the OTA endpoint, then connects with what it got, umcp's real McpServer
behind the device's own link (MqttLink or XiaozhiLink).

Figures: connect-to-ready p50/p99 and when the last device was ready; tools/call round
trips (one call per device, 50 in flight) p50/p99 and failures; the backend's memory per
device. Beside them, floors measured in the same run through the same broker: bare
clients that only connect, and a bare echo of a message of a call's size. Targets:
docs/benchmarks.md, "Fleet".
"""

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

import psutil

from . import record
from .. import devicelib  # noqa: F401 (lib/ on sys.path: the floors' MQTT client is the device's)
from .fleetdevices import raise_file_limit, run_fleet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IN_FLIGHT = 50
READY_LIMIT = 120.0  # seconds: a run that takes longer is reported as incomplete


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class ReadyClock:
    """Backend output sink: when each device became ready (its `ready:` line)."""

    def __init__(self):
        self.ready = {}
        self.failures = []
        self.all_ready = asyncio.Event()
        self.expected = None

    def __call__(self, line):
        device, _, text = line.partition(": ")
        if text.startswith("ready: "):
            self.ready[device] = time.monotonic()
            if self.expected and len(self.ready) >= self.expected:
                self.all_ready.set()
        elif "failed" in text or "refused" in text:
            self.failures.append(line)


async def echo_floor(backend_login, size, count):
    """Round trips of a `size`-byte message through the broker to a bare echo client."""
    from unet.mqtt import MqttClient

    host, port, user, password = backend_login
    pending = {}
    echo = MqttClient("umcp-bench-echo", user, password, max_queue=IN_FLIGHT)  # never more in flight
    asker = MqttClient("umcp-bench-ask", user, password, on_message=lambda topic, payload: pending.pop(
        bytes(payload[:8])).set_result(time.monotonic()))
    await echo.connect(host, port)
    await asker.connect(host, port)
    await echo.subscribe("umcp/bench-floor/ping")
    await asker.subscribe("umcp/bench-floor/pong")

    async def echo_back():
        while True:
            await echo.publish("umcp/bench-floor/pong", (await echo.recv())[1])

    echoing = asyncio.create_task(echo_back())
    limit = asyncio.Semaphore(IN_FLIGHT)
    filler = b"x" * max(0, size - 8)

    async def one(index):
        async with limit:
            key = b"%08d" % index
            answer = asyncio.get_running_loop().create_future()
            pending[key] = answer
            start = time.monotonic()
            await asker.publish("umcp/bench-floor/ping", key + filler)
            return await asyncio.wait_for(answer, 30) - start

    times = await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)
    echoing.cancel()
    await echo.close()
    await asker.close()
    return [t for t in times if isinstance(t, float)]


async def websocket_echo_floor(size, count):
    """Round trips of a `size`-byte message to a bare WebSocket echo server on loopback."""
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import serve

    async def echo(connection):
        async for message in connection:
            await connection.send(message)

    pending = {}
    async with serve(echo, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with connect("ws://127.0.0.1:%d/" % port) as client:
            async def read():
                async for message in client:
                    pending.pop(message[:8]).set_result(time.monotonic())

            reader = asyncio.create_task(read())
            limit = asyncio.Semaphore(IN_FLIGHT)
            filler = "x" * max(0, size - 8)

            async def one(index):
                async with limit:
                    key = "%08d" % index
                    answer = asyncio.get_running_loop().create_future()
                    pending[key] = answer
                    start = time.monotonic()
                    await client.send(key + filler)
                    return await asyncio.wait_for(answer, 30) - start

            times = await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)
            reader.cancel()
    return [t for t in times if isinstance(t, float)]


async def one_run(kind, count, workdir, say):
    from ..backend import Backend
    from ..hub.mosquitto import Mosquitto
    from ..hub.broker import BACKEND_USER

    options = {}
    broker = None
    if kind == "websocket":
        options = {}
    elif kind == "mosquitto":
        broker = Mosquitto(workdir).start()
        options = dict(mqtt=broker.url, mqtt_passwd=broker.passwd, mqtt_pidfile=broker.pidfile)
    else:
        options = dict(mqtt="embedded")
    clock = ReadyClock()
    clock.expected = count
    backend = Backend(None, host="127.0.0.1", out=clock, **options)
    process = psutil.Process()
    figures = {"broker": {"embedded": "amqtt 0.12.1", "websocket": "none"}.get(kind) or
               "mosquitto %s" % mosquitto_version()}
    child = None
    try:
        await backend.start()
        gc.collect()
        rss_before = process.memory_info().rss
        child = subprocess.Popen([sys.executable, "-m", "tools.bench.fleet", "--child", backend.ota_url,
                                  "--devices", str(count)], cwd=ROOT, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        line = await asyncio.to_thread(child.stdout.readline)
        if not line:
            raise RuntimeError("the fleet process ended early (exit status %s)" % child.wait())
        report = json.loads(line)
        try:
            await asyncio.wait_for(clock.all_ready.wait(), READY_LIMIT)
        except asyncio.TimeoutError:
            pass
        starts = report["starts"]
        if kind == "websocket":
            name_of = {d: d for d in starts}
        else:
            name_of = {d: n for n, d in backend.credentials.devices.items()}
        latencies = [clock.ready[d] - starts[name_of[d]] for d in clock.ready if name_of.get(d) in starts]
        first_start = min(starts.values()) if starts else time.monotonic()
        figures.update(
            ready=len(clock.ready), failed_start=report["failed_count"], start_errors=report["failed"],
            ready_p50=percentile(latencies, 0.5), ready_p99=percentile(latencies, 0.99),
            all_ready_s=(max(clock.ready.values()) - first_start) if clock.ready else float("nan"),
            ota_s=report["ota_s"], session=report.get("session", "?"), floor_connect_p50=percentile(report["floor_connect"], 0.5),
            floor_connect_p99=percentile(report["floor_connect"], 0.99), floor_failed=report["floor_failed"],
            onboarding_failures=clock.failures[:3])
        gc.collect()
        rss_after = process.memory_info().rss
        figures["rss_per_device"] = (rss_after - rss_before) / max(1, len(clock.ready))

        # tools/call: one per device, IN_FLIGHT at a time
        devices = list(backend.devices.values())
        limit = asyncio.Semaphore(IN_FLIGHT)
        failed_calls = []

        async def call(index, device):
            async with limit:
                start = time.monotonic()
                try:
                    result = await device.call_tool("self.audio_speaker.set_volume", {"volume": index % 101},
                                                    timeout=30)
                    if result.get("isError"):
                        failed_calls.append("isError")
                        return None
                except Exception as error:
                    failed_calls.append(repr(error))
                    return None
                return time.monotonic() - start

        started = time.monotonic()
        times = [t for t in await asyncio.gather(*(call(i, d) for i, d in enumerate(devices))) if t is not None]
        figures.update(calls=len(devices), call_s=time.monotonic() - started, failed_calls=len(failed_calls),
                       call_errors=failed_calls[:3], call_p50=percentile(times, 0.5),
                       call_p99=percentile(times, 0.99))
        request = json.dumps({"session_id": "x" * 32, "type": "mcp", "payload": {
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "self.audio_speaker.set_volume", "arguments": {"volume": 50}}}})
        if kind == "websocket":
            floor = await websocket_echo_floor(len(request), len(devices) or 1)
        else:
            login = ("127.0.0.1", int(backend.mqtt_endpoint.rsplit(":", 1)[1]), BACKEND_USER,
                     backend.credentials.backend_password)
            floor = await echo_floor(login, len(request), len(devices) or 1)
        figures.update(floor_call_p50=percentile(floor, 0.5), floor_call_p99=percentile(floor, 0.99))
    finally:
        if child is not None:
            try:
                child.stdin.write("stop\n")
                child.stdin.flush()
                child.wait(30)
            except (OSError, subprocess.TimeoutExpired):
                child.kill()
                child.wait()
        await backend.close()
        if broker is not None:
            broker.stop()
    return figures


def mosquitto_version():
    from ..hub.mosquitto import MOSQUITTO

    try:
        text = subprocess.run([MOSQUITTO, "-h"], capture_output=True, text=True, timeout=10).stdout
        return text.split("version", 1)[1].split()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "?"


def _ms(value):
    return "%.1f ms" % (value * 1000)


def print_table(count, runs):
    print("Fleet: %d simulated devices to one backend on loopback, over MQTT through each broker and"
          " over WebSocket (target: all ready within 30 s, no failed call)" % count)
    print()
    rows = [
        ("broker", lambda f: f["broker"]),
        ("device session", lambda f: f["session"]),
        ("devices ready", lambda f: "%d of %d%s" % (f["ready"], count,
                                                   ", %d did not start" % f["failed_start"] if f["failed_start"] else "")),
        ("all ready after", lambda f: "%.1f s" % f["all_ready_s"]),
        ("connect-to-ready p50", lambda f: _ms(f["ready_p50"])),
        ("connect-to-ready p99", lambda f: _ms(f["ready_p99"])),
        ("  floor: bare connect p50", lambda f: _ms(f["floor_connect_p50"])),
        ("  floor: bare connect p99", lambda f: _ms(f["floor_connect_p99"])),
        ("tools/call p50 (%d in flight)" % IN_FLIGHT, lambda f: _ms(f["call_p50"])),
        ("tools/call p99", lambda f: _ms(f["call_p99"])),
        ("failed calls", lambda f: "%d of %d" % (f["failed_calls"], f["calls"])),
        ("  floor: bare echo round trip p50", lambda f: _ms(f["floor_call_p50"])),
        ("  floor: bare echo round trip p99", lambda f: _ms(f["floor_call_p99"])),
        ("backend memory per device (RSS)", lambda f: "%.1f KB" % (f["rss_per_device"] / 1024)),
        ("OTA checks of the fleet (HTTP)", lambda f: "%.1f s" % f["ota_s"]),
    ]
    titles = [title for title, _ in runs]
    width = max(len(r[0]) for r in rows) + 2
    columns = [max(len(t), 12) + 2 for t in titles]
    print("".ljust(width) + "".join(t.rjust(c) for t, c in zip(titles, columns)))
    for label, cell in rows:
        values = []
        for (_, figures), column in zip(runs, columns):
            if isinstance(figures, str):
                values.append("-".rjust(column))
                continue
            try:
                values.append(cell(figures).rjust(column))
            except (KeyError, TypeError, ValueError):
                values.append("?".rjust(column))
        print(label.ljust(width) + "".join(values))
    print()
    for title, figures in runs:
        if isinstance(figures, str):
            print("%s: %s" % (title, figures))
        else:
            for key in ("start_errors", "call_errors", "onboarding_failures"):
                if figures.get(key):
                    print("%s %s: %s" % (title, key.replace("_", " "), "; ".join(figures[key])))
    print("connect-to-ready: from a device's TCP connect to the backend holding its tools/list (MQTT:"
          " connect, subscribe, hello, initialize, tools/list; WebSocket: upgrade, hello, initialize,"
          " tools/list). Floors: bare clients that only connect (MQTT: and subscribe; WebSocket: the"
          " upgrade) and a bare echo of a message of a call's size (through the broker; WebSocket: a"
          " bare echo server). Memory: the backend process's RSS growth over the fleet / devices ready"
          " (the amqtt column includes the broker's sessions: it runs in the backend's process).")
    print("Devices: all in one child process, each umcp's McpServer behind the device's own link"
          " (XiaozhiLink over WebSocket, MqttLink over MQTT: the row 'device session'). Backend, broker"
          " and fleet share this machine's cores (%d) with whatever else runs." % (os.cpu_count() or 0))


async def run_in_this_process(kind, count):
    """One broker's run (in a process of its own, so the RSS is the backend's alone)."""
    raise_file_limit()
    with tempfile.TemporaryDirectory(prefix="umcp-fleet-") as workdir:
        try:
            figures = await one_run(kind, count, workdir, print)
        except FileNotFoundError as missing:
            figures = "skipped: %s" % missing
        except Exception as error:  # reported in the table
            figures = "did not run: %r" % error
    print(json.dumps(figures), flush=True)


def main_runs(args):
    facts = record.machine_facts() if args.record else None
    run = record.Record()
    with run.section("Fleet: %d simulated devices to one backend" % args.devices) as section:
        section.ran = _runs(args) == 0
    if args.record:
        command = "python -m tools.bench.fleet --devices %d --brokers %s" % (args.devices, args.brokers)
        print()
        text = record.render(command, facts, run.sections, guide=record.guide_link(args.record))
        print("written: %s" % record.write(args.record, text))
    return 0 if section.ran else 1


def _runs(args):
    runs = []
    for kind in args.brokers.split(","):
        title = {"embedded": "MQTT, amqtt", "mosquitto": "MQTT, mosquitto", "websocket": "WebSocket"}[kind]
        proc = subprocess.run([sys.executable, "-m", "tools.bench.fleet", "--run", kind, "--devices",
                               str(args.devices)], cwd=ROOT, capture_output=True, text=True,
                              timeout=READY_LIMIT + 240)
        lines = proc.stdout.strip().splitlines()
        try:
            figures = json.loads(lines[-1])
        except (IndexError, ValueError):
            figures = "did not run: %s" % (proc.stderr.strip()[-500:] or "exit status %d" % proc.returncode)
        runs.append((title, figures))
    print_table(args.devices, runs)
    return 0 if all(not isinstance(f, str) or f.startswith("skipped") for _, f in runs) else 1


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench.fleet", description=__doc__.split("\n")[0])
    parser.add_argument("--devices", type=int, default=int(os.environ.get("UMCP_FLEET", "1000")),
                        help="fleet size (default 1000, or UMCP_FLEET)")
    parser.add_argument("--brokers", default="embedded,mosquitto,websocket",
                        help="comma-separated runs: embedded (amqtt), mosquitto, websocket (no broker)")
    parser.add_argument("--record", metavar="FILE",
                        help="also write the table to this Markdown file, headed with the machine, date and "
                             "commit (make bench: docs/bench/fleet.md)")
    parser.add_argument("--child", metavar="OTA_URL", help=argparse.SUPPRESS)
    parser.add_argument("--run", choices=("embedded", "mosquitto", "websocket"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        asyncio.run(run_fleet(args.child, args.devices, sys.stdout))
        return 0
    if args.run:
        asyncio.run(run_in_this_process(args.run, args.devices))
        return 0
    return main_runs(args)


if __name__ == "__main__":
    sys.exit(main())
