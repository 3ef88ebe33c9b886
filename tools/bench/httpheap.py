"""The heap the board's MCP endpoint takes (make bench's HTTP rows): run inside MicroPython
with lib/ on the module path (tools/bench/link.py starts it):
  httpheap.py PORT
The endpoint runs as the firmware runs it: umcpfw.mcphttp's service listens from boot,
makes the endpoint (mcplink.http on unet.httpd) at the first connection and drops it
once idle.
Prints one JSON line: bytes kept by the service listening, nothing loaded yet
("listening"); by the service with the endpoint's code loaded and made, no connection
open ("resident", listening included); per open kept-alive connection ("connection");
allocated per tools/call request with the collector off (an upper bound of the garbage
each leaves): over HTTP ("request", this process's own minimal client included) and, the
floor, the same request's body handed to a Session in memory ("floor": what any
transport pays); and kept once the client left and the idle endpoint was dropped
("after_idle", listening included: the names its code interned stay).
"""
import asyncio
import gc
import json
import sys

import unet.conn  # noqa: F401 (the firmware has it loaded: its link uses it)
from asyncio import open_connection  # noqa: F401 (so asyncio.stream: the firmware's link loaded it)
from umcp import INTEGER, McpServer, Property

CALLS = 20
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "self_audio_speaker_set_volume", "arguments": {"volume": 42},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()


def set_volume(args):
    return True


def request(port):
    head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nAuthorization: Bearer bench-token\r\n"
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
            "Mcp-Name: self_audio_speaker_set_volume\r\nContent-Length: %d\r\n\r\n" % (port, len(BODY)))
    return head.encode() + BODY


async def main(port):
    server = McpServer(name="bench", version="1")
    server.add_tool("self.audio_speaker.set_volume", "Set the volume of the audio speaker.",
                    [Property("volume", INTEGER, minimum=0, maximum=100)], set_volume)
    answered = []

    async def keep(pieces):
        answered.append(len(pieces))

    session = server.session(keep)
    data = request(port)
    gc.collect()
    base = gc.mem_alloc()
    from umcpfw.mcphttp import McpHttpService

    def make():  # as umcpfw.mcphttp.endpoint_maker's: the code loads at the first connection
        from mcplink.http import McpHttp

        return McpHttp(server, "bench-token", port, "127.0.0.1")

    service = McpHttpService(make, "127.0.0.1", port)  # dropped when idle, as the firmware's
    serving = asyncio.create_task(service.run())
    while not service.listening:
        await asyncio.sleep_ms(10)
    gc.collect()
    listening = gc.mem_alloc() - base

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    buf = bytearray(1024)
    view = memoryview(buf)
    size = [0]  # the answer's length, learnt from the first one

    async def one():
        writer.write(data)
        await writer.drain()
        got = 0
        while not size[0] or got < size[0]:
            count = await reader.readinto(view[got:])
            if not count:
                raise OSError("the endpoint hung up")
            got += count
            if not size[0] and b"\r\n\r\n" in bytes(buf[:got]):
                head, _, rest = bytes(buf[:got]).partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                size[0] = len(head) + 4 + length
        if not buf.startswith(b"HTTP/1.1 200"):
            raise OSError("unexpected answer %r" % bytes(buf[:80]))

    for _ in range(3):  # warm up: the first request's one-off costs
        await one()
    gc.collect()
    with_connection = gc.mem_alloc() - base
    gc.disable()
    before = gc.mem_alloc()
    for _ in range(CALLS):
        await one()
    per_request = (gc.mem_alloc() - before) // CALLS
    gc.enable()
    writer.close()
    await writer.wait_closed()
    while service.endpoint.httpd.connections:  # the endpoint sees the client go
        await asyncio.sleep_ms(10)
    gc.collect()
    resident = gc.mem_alloc() - base
    connection = with_connection - resident
    waited = 0
    while service.endpoint is not None:  # dropped IDLE_S after the last connection (2 s)
        await asyncio.sleep_ms(50)
        waited += 50
        if waited > 10000:
            raise OSError("the idle endpoint was not dropped")
    gc.collect()
    after_idle = gc.mem_alloc() - base

    for _ in range(3):
        await session.handle(BODY)
        await asyncio.sleep(0)
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    for _ in range(CALLS):
        await session.handle(BODY)
        await asyncio.sleep(0)  # the call's own task answers
    floor = (gc.mem_alloc() - before) // CALLS
    gc.enable()
    await service.stop()
    serving.cancel()
    print(json.dumps({"listening": listening, "resident": resident, "connection": connection,
                      "request": per_request, "floor": floor, "after_idle": after_idle,
                      "made": service.made, "calls": CALLS, "answered": len(answered)}))


asyncio.run(main(int(sys.argv[1])))
