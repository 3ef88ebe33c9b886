"""make bench's measurements, run inside each interpreter: CPython, the MicroPython
unix port and the WebAssembly build (tools/bench/report.py starts them and prints the
table). Prints one JSON line of results. Needs lib/ on the module path.

(a) the time to build a full tools/list page (~40 realistic tools registered, the
    first page filled up to the 8000-byte frame limit) against the floor, a bare
    json.dumps of the same page; (b) the heap that building it took; (c) the time
    of one tools/call dispatch of a trivial tool, until its response is sent.
A board loads the listing's code (umcp.paging, umcp.listing, umcp.names) for each page
and drops it after; here it stays (umcp.compat.FORGET), so that (a) and (b) are the
page's own: the firmware's heap table counts the code where a board has it.
"""
import asyncio
import gc
import json
import sys
import time

import umcp.compat
from umcp import BOOLEAN, INTEGER, STRING, McpServer, Property
from umcp.compat import join_pieces

umcp.compat.FORGET = False

try:
    import tracemalloc  # CPython
except ImportError:
    tracemalloc = None

try:
    _ticks_us, _ticks_diff = time.ticks_us, time.ticks_diff  # MicroPython
except AttributeError:
    def _ticks_us():
        return time.perf_counter_ns() // 1000

    def _ticks_diff(a, b):
        return a - b

# The xiaozhi envelope around each payload: {"session_id":"<uuid>","type":"mcp","payload":...}
ENVELOPE_BYTES = len('{"session_id":"0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0","type":"mcp","payload":}')
# Each figure is the mean over enough runs to last this long: the WebAssembly
# build's clock only ticks in milliseconds.
TIMING_US = 200000

# (name pattern, description, properties): shapes of real board tools, one per device unit.
_KINDS = (
    ("self.light_%d.set", "Switch light %d on or off and set its brightness and colour temperature. "
     "Use when the user asks for more or less light in that room.",
     lambda: [Property("on", BOOLEAN, description="true turns the light on"),
              Property("brightness", INTEGER, 80, 0, 100, "percent of full brightness"),
              Property("kelvin", INTEGER, 4000, 2700, 6500, "colour temperature in kelvin")]),
    ("self.fan_%d.set_speed", "Set the speed of fan %d. Speed 0 stops it; the oscillate flag "
     "makes it sweep the room.",
     lambda: [Property("speed", INTEGER, minimum=0, maximum=5, description="0 (off) to 5 (full)"),
              Property("oscillate", BOOLEAN, False, description="sweep from side to side")]),
    ("self.sensor_%d.read", "Read the latest temperature and humidity from sensor %d, "
     "averaged over the given number of samples.",
     lambda: [Property("samples", INTEGER, 1, 1, 16, "readings to average"),
              Property("unit", STRING, "celsius", description="celsius or fahrenheit")]),
    ("self.relay_%d.pulse", "Close relay %d for the given time, then open it again: "
     "for door strikes, bells and garage door openers.",
     lambda: [Property("milliseconds", INTEGER, 500, 50, 10000, "how long to keep it closed"),
              Property("confirm", BOOLEAN, description="must be true: the user confirmed the action"),
              Property("reason", STRING, "", description="why, for the event log")]),
)


def register_tools(server, count=40):
    """Register `count` board tools plus bench.noop; return how many tools there are."""
    for i in range(count):
        pattern, description, properties = _KINDS[i % len(_KINDS)]
        unit = i // len(_KINDS) + 1
        server.add_tool(pattern % unit, description % unit, properties(), lambda args: True)
    server.add_tool("bench.noop", "Does nothing; for timing a dispatch.", [], lambda args: True)
    return count + 1


class Capture:
    """The server's sender: keeps the last frame's pieces, as a streaming transport
    hands them to its socket, and signals their arrival."""

    def __init__(self):
        self.pieces = None
        self.arrived = asyncio.Event()

    async def send(self, pieces):
        self.pieces = pieces
        self.arrived.set()

    @property
    def text(self):
        return join_pieces(self.pieces)


async def time_us(action):
    """Mean microseconds of one `await action()` (collections included, as on a device)."""
    runs = 1
    while True:
        start = _ticks_us()
        for _ in range(runs):
            await action()
        elapsed = _ticks_diff(_ticks_us(), start)
        if elapsed >= TIMING_US:
            return elapsed / runs
        runs *= 2


async def heap_bytes(action):
    """Heap that one `await action()` took.

    CPython: tracemalloc's peak. MicroPython has no peak counter, so the collector
    is switched off for the run and everything allocated is counted: an upper
    bound of the peak, and what a device needs free for it to run without a GC.
    """
    if tracemalloc is not None:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        await action()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak - base
    gc.collect()
    gc.disable()
    base = gc.mem_alloc()
    await action()
    used = gc.mem_alloc() - base
    gc.enable()
    return used


async def main():
    server = McpServer(name="bench", version="1")
    capture = Capture()
    server.set_sender(capture.send, ENVELOPE_BYTES)
    registered = register_tools(server)
    await server.handle({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2024-11-05", "capabilities": {}}})

    list_request = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

    async def build_page():
        await server.handle(list_request)

    await build_page()
    page = json.loads(capture.text)
    if "tools" not in page.get("result", {}):
        raise RuntimeError("tools/list failed: " + capture.text)

    async def dump_page():
        json.dumps(page, separators=(",", ":"))

    call_request = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "bench.noop", "arguments": {}}}

    async def dispatch_call():
        capture.arrived.clear()
        await server.handle(call_request)
        await capture.arrived.wait()  # the call runs on a task: wait for its response

    impl = sys.implementation
    results = {
        "interpreter": "%s %s" % (impl.name, ".".join(str(n) for n in impl.version[:3])),
        "frame_bytes": len(capture.text.encode()) + ENVELOPE_BYTES,
        "page_limit": server.page_limit,
        "tools_on_page": len(page["result"]["tools"]),
        "tools_registered": registered,
        "list_us": await time_us(build_page),
        "floor_us": await time_us(dump_page),
        "list_heap": await heap_bytes(build_page),
        "floor_heap": await heap_bytes(dump_page),
        "call_us": await time_us(dispatch_call),
    }
    print(json.dumps(results))


if __name__ == "__main__":
    asyncio.run(main())
