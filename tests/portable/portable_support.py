# Helpers shared by the portable test cases (and the host OTA tests); MicroPython-compatible.

import asyncio
import json

from umcp import McpServer
from umcp.compat import join_pieces


def raises(exc, fn, *args):
    """True if fn(*args) raises `exc` (MicroPython has no pytest.raises)."""
    try:
        fn(*args)
    except exc:
        return True
    return False


class ChunkStream:
    """An async iterator of chunks, as unet.http.get_stream gives; with `fail_at`, the
    connection drops once that many bytes went out."""

    def __init__(self, data, chunk=1000, fail_at=None):
        self.data = data
        self.chunk = chunk
        self.fail_at = fail_at
        self.pos = 0

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.fail_at is not None and self.pos >= self.fail_at:
            raise OSError(104, "connection reset")
        if self.pos >= len(self.data):
            raise StopAsyncIteration
        piece = self.data[self.pos:self.pos + self.chunk]
        self.pos += len(piece)
        return piece


def esp_image(size=None, chip_id=0x0009, hash_appended=True, segments=None, seed=7):
    """A valid ESP32 application image as esptool's elf2image lays it out: the 24-byte
    header (magic 0xE9, segment count, chip id, hash_appended), segments (8-byte header
    and data), zero padding so that the checksum byte ends a 16-byte row, the checksum
    (0xEF XOR every data byte), then with hash_appended the SHA-256 of all before it.
    size: total bytes (3 segments, then as many 0xFF bytes after the image as a size that
    is not a multiple of 16 needs, as a signature block would be); segments: lengths."""
    import hashlib
    import struct

    trailing = 0
    if segments is None:
        size = size or 4096
        fixed = 24 + 3 * 8 + 1 + (32 if hash_appended else 0)
        trailing = (size - fixed - 15) % 16  # then the data ends where the checksum goes
        body = max(size - fixed - trailing, 3)
        third = body // 3
        segments = [third, third, body - 2 * third]
    header = bytearray(24)
    header[0] = 0xE9
    header[1] = len(segments)
    header[2], header[3] = 2, 0x20  # DIO, 40 MHz / 4 MB: any values do
    struct.pack_into("<I", header, 4, 0x40080000)
    header[12] = chip_id & 0xFF
    header[13] = chip_id >> 8
    header[23] = 1 if hash_appended else 0
    out = bytearray(header)
    checksum = 0xEF
    address = 0x3F400020
    for n, length in enumerate(segments):
        data = bytearray(length)
        for i in range(length):
            data[i] = (i * seed + n * 31 + i // 251) & 0xFF
            checksum ^= data[i]
        out += struct.pack("<II", address, length)
        out += data
        address += length + 0x1000
    out += bytes(15 - len(out) % 16)
    out.append(checksum)
    if hash_appended:
        out += hashlib.sha256(bytes(out)).digest()
    return bytes(out) + b"\xff" * trailing


# -- MCP server cases: a call, waiting for tasks, a tool that waits

async def settle(condition):
    """Let other tasks run until `condition()` holds; bounded, so a bug fails fast."""
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0)
    assert condition(), "condition never held"


def call(name, arguments=None, id=1, meta=None):
    params = {"name": name, "arguments": arguments or {}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


class Gate:
    """A coroutine tool that blocks until released, recording what happened to it:
    `calls` (its arguments), `entered` (an Event), `cancelled`."""

    def __init__(self, value="done"):
        self.value = value
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.calls = []
        self.cancelled = False

    async def __call__(self, args):
        self.calls.append(args)
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return self.value


# Under CPython, tests/test_portable_on_cpython.py sets CHECKER to the SDK's checks
# (tests/support/mcpwire.py's SdkChecker): every Wire then checks each message its server
# sends as McpWire does, and keeps what failed in FAILURES for the case to fail on.
CHECKER = None
FAILURES = []


class Wire:
    """Collects what a server sends to one client: the default session of a server made
    here (its page limit `page_limit`, 8000 if None), or, given `server`, a session of its
    own with that page limit, `max_message` (None: the server's) and `offered` (None: every
    tool)."""

    def __init__(self, page_limit=None, overhead=0, server=None, max_message=None, offered=None):
        self.frames = []
        self.pieces = []  # as the server handed them to the transport, a list per message
        self.checker = CHECKER() if CHECKER is not None else None
        if server is None:
            self.server = McpServer(name="dev", version="9", page_limit=page_limit or 8000)
            self.server.set_sender(self._send, overhead)
            self.session = self.server.default
        else:
            self.server = server
            self.session = server.session(self._send, overhead, page_limit, max_message, offered)
        self.overhead = overhead

    async def _send(self, pieces):
        self.pieces.append(pieces)
        self.frames.append(join_pieces(pieces))
        if self.checker is not None:
            try:
                self.checker.sent(json.loads(self.frames[-1]))
            except Exception as e:  # the server survives a failing sender: the case fails on it
                FAILURES.append((self.frames[-1], e))

    def messages(self):
        return [json.loads(frame) for frame in self.frames]

    def methods(self):
        """The methods of the notifications it was sent, in order."""
        return [message["method"] for message in self.messages() if "method" in message]

    async def feed(self, message):
        """What the server sent while handling `message`, parsed."""
        before = len(self.frames)
        if self.checker is not None:
            self.checker.received(message)
        await self.session.handle(message if isinstance(message, (str, bytes, bytearray)) else json.dumps(message))
        return [json.loads(frame) for frame in self.frames[before:]]

    async def request(self, method, params=None, id=1, version=None, log_level=None):
        """The one message the server answers a request with. `version`: the request in
        revision 2026-07-28's form, naming that revision (and `log_level`) in its _meta."""
        message = {"jsonrpc": "2.0", "id": id, "method": method}
        if version is not None:
            params = dict(params or {})
            params["_meta"] = {"io.modelcontextprotocol/protocolVersion": version,
                               "io.modelcontextprotocol/clientCapabilities": {}}
            if log_level is not None:
                params["_meta"]["io.modelcontextprotocol/logLevel"] = log_level
        if params is not None:
            message["params"] = params
        sent = await self.feed(message)
        assert len(sent) == 1, sent
        return sent[0]

    async def initialize(self, version="2025-11-25"):
        return await self.request("initialize", {"protocolVersion": version, "capabilities": {}}, id=0)

    async def response(self, id):
        """The response to a tools/call, once its task has run."""
        await settle(lambda: self.find(id) is not None)
        return self.find(id)

    def find(self, id):
        """The response with this id (and its type), or None."""
        for message in self.messages():
            if "method" not in message and message.get("id") == id and type(message.get("id")) is type(id):
                return message
        return None


try:
    from micropython import heap_lock, heap_unlock
except ImportError:  # CPython
    heap_lock = None


class Fault:
    """The next call of `owner.name` (a module's function, or an object's method: then the
    object's own attribute is set) fails for want of heap, after `skip` calls that do not
    and only for a call whose arguments `when(args)` accepts. Under MicroPython the heap is
    locked around the real call, so that a real allocation inside it fails, as on a board
    whose heap ran out right there; under CPython the call raises MemoryError. `fired`
    counts the failures; undo() puts the original back."""

    def __init__(self, owner, name, skip=0, when=None):
        self.owner = owner
        self.name = name
        self.real = getattr(owner, name)
        self.skip = skip
        self.when = when
        self.armed = True
        self.fired = 0
        setattr(owner, name, self._call)

    def _call(self, *args):
        if self.armed and (self.when is None or self.when(args)):
            if self.skip:
                self.skip -= 1
            else:
                self.armed = False
                self.fired += 1
                if heap_lock is None:
                    raise MemoryError("injected: no heap in %s" % self.name)
                heap_lock()
                try:
                    return self.real(*args)
                finally:
                    heap_unlock()
        return self.real(*args)

    def undo(self):
        setattr(self.owner, self.name, self.real)


async def until(condition, seconds=5):
    """Let the loop run until `condition()` holds (a sensor's read may take 750 ms)."""
    for _ in range(int(seconds * 100)):
        if condition():
            return
        await asyncio.sleep(0.01)
    assert condition(), "condition never held"


def generic_board(parts):
    """A generic board with `parts`, their simulated chips soldered on afresh."""
    import hwsim
    from boards import Board
    from boards.setup import add_parts

    hwsim.reset()
    hwsim.solder(parts)
    board = Board("generic")
    add_parts(board, {"parts": parts})
    return board


class ToolClient:
    """A client of a fresh server with a board's tools: calls and what the server sent it."""

    def __init__(self, board, name="parts"):
        self.server = McpServer(name, "1")
        self.sent = []
        self.server.set_sender(lambda pieces: self.sent.append(json.loads(join_pieces(pieces))))
        board.register_tools(self.server)
        board.serve_parts(self.server)
        self.ids = 0

    async def request(self, method, params=None):
        self.ids += 1
        ident = self.ids
        await self.server.handle({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}})
        await until(lambda: [m for m in self.sent if m.get("id") == ident])
        return [m for m in self.sent if m.get("id") == ident][0]

    async def call(self, name, arguments=None):
        """The tool's answer: its JSON, or "error: <text>" for a tool error."""
        reply = await self.request("tools/call", {"name": name, "arguments": arguments or {}})
        result = reply["result"]
        text = result["content"][0]["text"]
        if result.get("isError"):
            return "error: " + text
        return json.loads(text)

    def notifications(self, method):
        return [m["params"] for m in self.sent if m.get("method") == method]
