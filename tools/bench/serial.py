"""make bench's serial table: a board on its serial line through the bridge (alone:
python -m tools.bench.serial [--micropython PATH] [--calls N]).

1. Round trips on a pty board (tools/sim/ptyboard.py), the firmware staged as `make
   deploy ROMFS=1` stages it and taken by the bridge with --serial: one tools/call
   through the bridge over streamable HTTP, against the same call to the simulated host
   board over WebSocket, beside the floor of the serial line alone. A pty is no UART: the
   ratio is a figure, not a target.
2. Heap, in the unix port given, from the .mpy files (tools/bench/serialheap.py): what
   the serial session keeps while it serves a client, beside what the xiaozhi link over
   WebSocket keeps, and the session's entry module. Before the bridge starts it, the
   session takes no heap (.importlinter, contract serial-on-demand).

What each figure is: docs/benchmarks.md, "A board on its serial line". Nothing asserts
on them.
"""

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import serial as pyserial

from .bridge import RawClient, free_port, online, pct
from ..hub.serialline import RecordReader
from ..hub.xiaozhi import XiaozhiServer
from ..mpy import ROOT, micropython_env
from ..childprocess import stop_process
from ..sim.board import SimBoard, config_for
from ..sim.ptyboard import PtyBoard

CALLS = 100
WARMUP = 10
HEAP_SCRIPT = os.path.join(ROOT, "tools", "bench", "serialheap.py")
TOOL = "self.get_device_status"
# A server that is not there (a closed port on loopback): the board serves the bridge alone.
CONFIG = {"board": "generic", "wifi": {"ssid": "bench-net", "password": "not-a-real-one"},
          "url": "ws://127.0.0.1:9/xiaozhi/v1/", "token": "bench", "wifi_setup_after": None}
# The serial line's floor, on the board: a frame read as the serial session reads one (its
# length's digits a byte at a time, then its bytes in one read) and written back at once,
# by MicroPython's asyncio; no JSON, no MCP, no window.
ECHO = b"""import sys, asyncio
r = asyncio.StreamReader(sys.stdin.buffer)
out = sys.stdout.buffer
one = bytearray(1)
buf = bytearray(4096)
async def main():
    while True:
        n = 0
        while True:
            await r.readinto(one)
            if one[0] == 10:
                break
            n = n * 10 + one[0] - 48
        got = 0
        while got < n:
            got += await r.readinto(memoryview(buf)[got:n])
        out.write(memoryview(buf)[:n])
asyncio.run(main())
"""


def default_micropython():
    return os.environ.get("UMCP_MICROPYTHON") or os.path.join(ROOT, ".venv", "bin", "micropython")


def run(command, **options):
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, **options)
    if done.returncode != 0:
        raise RuntimeError("%s: status %d\n%s%s" % (" ".join(command[:4]), done.returncode, done.stdout[-2000:],
                                                     done.stderr[-2000:]))
    return done.stdout


def prepare_board(folder):
    """A pty board with the firmware as make deploy ROMFS=1 puts it there: its PtyBoard."""
    board = PtyBoard(os.path.join(folder, "flash"), "bench")
    board.start()
    config = os.path.join(folder, "config.json")
    with open(config, "w") as f:
        json.dump(CONFIG, f)
    run([sys.executable, "-m", "tools.board.deploy", "--port", board.pty, "--board", "generic", "--romfs",
         "--config", config, "--build-dir", os.path.join(folder, "stage")], cwd=ROOT)
    time.sleep(0.5)  # mpremote's reset returns before the board has reset
    return board


def line_floor(pty, size, count):
    """Round trips of a `size`-byte frame through MicroPython on the board (ms each)."""
    port = pyserial.Serial(pty, 115200, timeout=0.2, exclusive=True)
    try:
        def until(ending, timeout=10):
            data, deadline = b"", time.monotonic() + timeout
            while not data.endswith(ending):
                if time.monotonic() > deadline:
                    raise RuntimeError("the board did not answer: %r" % data[-200:])
                data += port.read(port.in_waiting or 1)
            return data

        port.write(b"\r\x03")
        time.sleep(0.2)
        port.reset_input_buffer()
        port.write(b"\r\x01")
        until(b"raw REPL; CTRL-B to exit\r\n>")
        port.write(ECHO + b"\x04")
        until(b"OK")
        frame = b"%d\n" % size + b"x" * (size - 1) + b"\n"
        times = []
        for n in range(count + WARMUP):
            started = time.perf_counter()
            port.write(frame)
            until(b"\n")
            if n >= WARMUP:
                times.append((time.perf_counter() - started) * 1000)
        port.write(b"\x03")
        until(b">")
        port.write(b"\r\x02")  # the friendly REPL, for the bridge's Ctrl-C
        return times
    finally:
        port.close()


async def round_trips(micropython, calls, out):
    with tempfile.TemporaryDirectory(prefix="umcp-bench-serial-") as folder:
        board = prepare_board(folder)
        sim = bridge = client = None
        bridge_log = open(os.path.join(folder, "bridge.log"), "w")
        sim_log = open(os.path.join(folder, "sim.log"), "w")
        try:
            ws_port, http_port = free_port(), free_port()
            bridge = subprocess.Popen([sys.executable, "-m", "tools.bridge", "--port", str(ws_port), "--token",
                                       "bench-token", "--host", "127.0.0.1", "--http", str(http_port),
                                       "--serial", board.pty], cwd=ROOT, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=bridge_log)
            sim = SimBoard(config_for(url="ws://127.0.0.1:%d/xiaozhi/v1/" % ws_port, token="bench-token",
                                      device_id="be:5e:00:00:00:01"), "micropython", os.path.abspath(micropython),
                           root=os.path.join(folder, "sim"), log=sim_log).start()
            client = RawClient("http://127.0.0.1:%d/mcp" % http_port)
            aliases = await online(client, 2, timeout=90)
            over_serial = next(a for a in aliases if a == "dev-123456")  # the simulated radio's MAC
            over_ws = next(a for a in aliases if a != over_serial)
            request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                  "params": {"name": TOOL, "arguments": {}}})
            answer = (await client.call_tool(over_serial + "__get_device_status"))["content"][0]["text"]
            for _ in range(WARMUP):
                await client.call_tool(over_serial + "__get_device_status")
                await client.call_tool(over_ws + "__get_device_status")
            serial_ms, ws_ms = [], []
            for _ in range(calls):  # in turns: both see the same machine
                for alias, times in ((over_serial, serial_ms), (over_ws, ws_ms)):
                    started = time.perf_counter()
                    await client.call_tool(alias + "__get_device_status")
                    times.append((time.perf_counter() - started) * 1000)
        finally:
            if client is not None:
                await client.close()
            if sim is not None:
                sim.stop()
            if bridge is not None:
                stop_process(bridge)
            bridge_log.close()
            sim_log.close()
        # The floor once the bridge has let the board go (it soft-resets it into main.py).
        time.sleep(1)
        size = len(request) + len(answer) // 2  # the line both ways: about the call's bytes
        floor = line_floor(board.pty, size, calls)
        board.stop()
    s, w, f = statistics.median(serial_ms), statistics.median(ws_ms), statistics.median(floor)
    out("serial: one tools/call (%s) through the bridge over streamable HTTP (2026-07-28), %d calls"
        % (TOOL, calls))
    out("each, median (p90)")
    out("  the pty board over its serial line (--serial)              %8.2f ms (%.2f)" % (s, pct(serial_ms, 90)))
    out("  a board over WebSocket to the same bridge (MicroPython unix) %6.2f ms (%.2f)" % (w, pct(ws_ms, 90)))
    out("  serial / WebSocket                                         %8.2fx   (a figure: a pty is no UART)"
        % (s / w))
    out("  floor: %d bytes to the pty board and back, read as the session reads a frame, no MCP" % size)
    out("                                                             %8.2f ms (%.2f)" % (f, pct(floor, 90)))
    return True


def heap(micropython, out):
    """The heap figures (tools/bench/serialheap.py), the .mpy files as make deploy stages them."""
    from .heap import stage_form

    stage = tempfile.mkdtemp(prefix="umcp-bench-serial-heap-")
    try:
        stage_form("mpy_board", stage)  # the .mpy files alone
        env = micropython_env([os.path.join(stage, "lib")])
        command = [os.path.abspath(micropython), HEAP_SCRIPT]
        serial_used = serial_heap(command, env)
        xiaozhi_used = asyncio.run(xiaozhi_heap(command, env))
        entry = json.loads(run(command + ["entry"], env=env).strip().splitlines()[-1])["entry"]
        bits = run([os.path.abspath(micropython), "-c", "import sys; print(32 if sys.maxsize < 2**32 else 64)"])
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    out("")
    out("Heap each link keeps while it serves a client (initialize, tools/list, a call), the .mpy files")
    out("as make deploy copies them, %s (%s-bit):" % (os.path.abspath(micropython), bits.strip()))
    out("  the serial session (mcplink.serial: its code, the link, its Session)        %6.1f KB"
        % (serial_used / 1024))
    out("  its entry (umcpfw.mcpserial, beside umcpfw.app that the firmware holds)     %6.1f KB" % (entry / 1024))
    out("  the xiaozhi link over WebSocket (xiaozhi.link, unet.ws, the connection)      %6.1f KB"
        % (xiaozhi_used / 1024))
    out("  serial session with its entry / xiaozhi link                                %6.2fx"
        % ((serial_used + entry) / xiaozhi_used))
    out("Before the bridge starts it the serial session takes nothing: the firmware never imports it.")
    return True


def serial_heap(command, env):
    """The serial session's bytes, read through its own line (stdin and stdout pipes)."""
    process = subprocess.Popen(command + ["serial"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    reader, pending = RecordReader(), []

    def record():
        while not pending:
            data = os.read(process.stdout.fileno(), 65536)
            if not data:
                raise RuntimeError("the serial session ended: %s" % process.stderr.read().decode())
            pending.extend(event for event in reader.feed(data) if event[0] in ("record", "ack"))
        return pending.pop(0)

    def ask(message):
        body = json.dumps(message).encode()  # within one window: one ACK
        process.stdin.write(b"\x1e%d\n" % len(body) + body + b"\n")
        process.stdin.flush()
        while True:
            event = record()
            if event[0] == "record" and event[1].get("id") == message["id"]:
                return event[1]

    try:
        assert record()[1]["type"] == "hello"
        ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
        ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "self.audio_speaker.set_volume", "arguments": {"volume": 5}}})
        answer = ask({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                      "params": {"name": "self.bench.heap", "arguments": {}}})
        return json.loads(answer["result"]["content"][0]["text"])["used"]
    finally:
        process.stdin.close()
        process.wait(10)


async def xiaozhi_heap(command, env):
    """The xiaozhi link's bytes, asked over the link itself."""
    answered = asyncio.get_running_loop().create_future()

    async def onboard(device):
        try:
            await device.initialize()
            await device.list_tools()
            await device.call_tool("self.audio_speaker.set_volume", {"volume": 5})
            answered.set_result(await device.call_tool("self.bench.heap", {}))
        except Exception as e:
            answered.set_exception(e)

    server = XiaozhiServer("bench-token", on_device=onboard, on_notification=lambda d, p: None)
    port = await server.start("127.0.0.1", 0)
    process = subprocess.Popen(command + ["xiaozhi", "ws://127.0.0.1:%d/xiaozhi/v1/" % port], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        result = await asyncio.wait_for(answered, 60)
    finally:
        process.kill()
        process.wait()
        await server.close()
    return json.loads(result["content"][0]["text"])["used"]


def print_serial(micropython, calls=CALLS):
    out = lambda line: print(line, flush=True)  # noqa: E731
    try:
        ok = asyncio.run(round_trips(micropython, calls, out))
    except (RuntimeError, OSError, ValueError, StopIteration, subprocess.SubprocessError) as e:
        out("serial: the round trips were not measured:\n%s" % e)
        ok = False
    try:
        return heap(micropython, out) and ok
    except (RuntimeError, OSError, ValueError, KeyError, AssertionError, asyncio.TimeoutError,
            subprocess.SubprocessError) as e:
        out("serial: the heap was not measured:\n%s" % e)
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench.serial", description=__doc__.split("\n")[0])
    parser.add_argument("--micropython", default=default_micropython())
    parser.add_argument("--calls", type=int, default=CALLS)
    args = parser.parse_args(argv)
    return 0 if print_serial(args.micropython, args.calls) else 1


if __name__ == "__main__":
    sys.exit(main())
