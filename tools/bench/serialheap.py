"""The heap a link keeps on the board while it serves a client (make bench's serial rows):
run inside MicroPython with the .mpy files make deploy stages on the module path
(tools/bench/serial.py starts it):
  serialheap.py serial        MCP over stdin and stdout: the serial session (mcplink.serial)
  serialheap.py xiaozhi URL   the xiaozhi link over WebSocket to URL (xiaozhi.link, unet.ws)
  serialheap.py entry         the serial session's entry, umcpfw.mcpserial, loaded beside
                               umcpfw.app (which the firmware holds anyway): prints its bytes
The server has the tool the host calls (set_volume) and self.bench.heap, which answers
the bytes in use after a collection less `base`: measured before the link's module was
imported, once a session in memory had made the core load (and drop again) what it loads
at a client's first requests. The host sends initialize, tools/list, the call, then asks.
"""
import asyncio
import gc
import json
import sys

from umcp import INTEGER, McpServer, Property, PropertyList

_BASE = [0]


def set_volume(args):
    return True


def heap(args):
    gc.collect()
    return {"used": gc.mem_alloc() - _BASE[0], "free": gc.mem_free()}


def server():
    server = McpServer(name="bench", version="1")
    server.add_tool("self.audio_speaker.set_volume", "Set the volume of the audio speaker.",
                    PropertyList([Property("volume", INTEGER, minimum=0, maximum=100)]), set_volume)
    server.add_tool("self.bench.heap", "The heap the link keeps.", PropertyList([]), heap)
    return server


async def warm(server):
    """What the core loads at a client's first requests, loaded (and dropped) in memory."""
    session = server.session(lambda pieces: None)
    for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "self.audio_speaker.set_volume", "arguments": {"volume": 1}}}):
        await session.handle(message)
        for _ in range(5):
            await asyncio.sleep(0)
    session.close()


async def main(kind, url=None):
    srv = server()
    await warm(srv)
    if kind == "entry":
        import umcpfw.app  # noqa: F401 (resident in the firmware)

        gc.collect()
        before = gc.mem_alloc()
        import umcpfw.mcpserial  # noqa: F401

        gc.collect()
        print(json.dumps({"entry": gc.mem_alloc() - before}))
        return
    gc.collect()
    _BASE[0] = gc.mem_alloc()
    if kind == "serial":
        from mcplink.serial import SerialLink

        await SerialLink(srv, asyncio.StreamReader(sys.stdin.buffer), sys.stdout.buffer).run()
    else:
        from xiaozhi.link import XiaozhiLink

        await XiaozhiLink(srv, url, "bench-token", "aa:bb:cc:dd:ee:ff", "bench-client", ping_interval=0,
                          idle_timeout=600, backoff_min=0.05, backoff_max=0.2).run()


asyncio.run(main(*sys.argv[1:]))
