"""RFC 6455 WebSocket client on asyncio streams, for CPython 3.11+ and MicroPython 1.24+.

Memory: a payload is read once into a buffer of its announced size (after the size
is checked against max_message). Sending never builds a masked copy of a whole message
(nor, on MicroPython, an encoded copy of a str: its UTF-8 bytes are read in place): each
frame goes through one buffer, header and masked payload together, so a
frame of up to FRAME_CHUNK payload bytes leaves in ONE writer.write() call (one TCP segment:
a header written apart from its payload waits for the peer's delayed ACK under Nagle's
algorithm, about 40 ms a frame). A longer frame streams in chunks, the header with the
first one. The end of a connection (close frames both ways, the closing handshake, a
failure's 1002/1007/1009) is unet.wsclose's, loaded as a connection ends."""

import asyncio
import os
import struct
import sys

from . import close_quietly, read_into
from umcp.compat import await_then_forget, const, piece_size, piece_utf8, ticks_diff, ticks_ms
from umcp.jsonin import refuse_invalid_utf8

_MICROPYTHON = sys.implementation.name == "micropython"

_OP_CONT = const(0)
_OP_TEXT = const(1)
_OP_BINARY = const(2)
_OP_CLOSE = const(8)
_OP_PING = const(9)
_OP_PONG = const(10)

CLOSE_NORMAL = const(1000)
CLOSE_PROTOCOL_ERROR = const(1002)
CLOSE_NO_STATUS = const(1005)
CLOSE_ABNORMAL = const(1006)
CLOSE_INVALID_DATA = const(1007)
CLOSE_TOO_BIG = const(1009)

FRAME_CHUNK = const(1008)  # payload bytes per write; a multiple of 4 keeps the key aligned
_FRAME_BUF = const(1024)  # a header (14 bytes at most) and a chunk
# Where every outgoing frame is built and masked: one, allocated as this module is imported
# (at boot, before a long session fragments the heap), for every connection at once (the
# xiaozhi link beside MCP endpoint links). A chunk is built and handed to its writer
# without an await in between, and writer.write() keeps no reference to it (MicroPython's
# stream copies what it cannot send at once; CPython's transport gets a copy), so the
# buffer is free again at every await: connections never need it at the same time.
_FRAME = bytearray(_FRAME_BUF)
_MASK_STEP = const(64)  # bytes masked at a time (a multiple of 4)
_HEAD = const(192)  # bytes of a dropped message kept, for its id (an envelope's start)
_SKIP = const(64)  # bytes read at a time while reading a dropped message through
_UTF8_STEP = const(256)  # bytes of a text message checked at a time
_NO_HEAP = const("message too large for memory")


class ConnectionClosed(Exception):
    def __init__(self, code, reason=""):
        super().__init__("WebSocket closed: %d %s" % (code, reason))
        self.code = code
        self.reason = reason


class MessageDropped(Exception):
    """A message that could not be kept: `reason` "message too large for memory" (read
    through, the connection carries on) or "message too big" (over max_message; `fatal`:
    the next recv()/receive() closes with 1009). `head` holds its first bytes (at most
    _HEAD; a view valid until the next read), `length` its size so far, so that a caller
    can answer the request it held."""

    def __init__(self, head, length, reason, fatal=False):
        super().__init__(reason)
        self.head = head
        self.length = length
        self.reason = reason
        self.fatal = fatal


def _key_int(key):
    """The 4-byte key repeated over _MASK_STEP bytes, as one big-endian integer."""
    return int.from_bytes(key * (_MASK_STEP // 4), "big")


def _mask_into(buf, start, n, keys):
    """XOR buf[start:start + n] in place with the key stream (`keys`: a _key_int), which
    starts over at `start`. _MASK_STEP bytes at a time: the integers involved stay small,
    so a fragmented heap serves them (whole-chunk integers were 2 KB temporaries each)."""
    view = memoryview(buf)
    end = start + n
    while start < end:
        m = min(_MASK_STEP, end - start)
        view[start:start + m] = (int.from_bytes(view[start:start + m], "big")
                                 ^ (keys >> 8 * (_MASK_STEP - m))).to_bytes(m, "big")
        start += m


def frame_header(opcode, length, key, fin=True):
    """Header of a masked client frame carrying `length` payload bytes."""
    b0 = (0x80 if fin else 0) | opcode
    if length < 126:
        head = struct.pack("!BB", b0, 0x80 | length)
    elif length < 0x10000:
        head = struct.pack("!BBH", b0, 0xFE, length)
    else:
        head = struct.pack("!BBQ", b0, 0xFF, length)
    return head + key


async def connect(url, headers=None, max_message=32768, ca=None, timeout=10):
    """Open a WebSocket to a ws:// or wss:// URL (or its parts: unet.url.parse_url()'s);
    `headers` is a dict of extra headers.

    Raises conn.HttpError when the server refuses the upgrade (e.g. 401). The handshake's
    code (unet.wshandshake) is loaded for it and dropped again."""
    reader, writer = await await_then_forget("unet.wshandshake", "open_stream", url, headers, ca,
                                             timeout)
    return WebSocket(reader, writer, max_message)


class WebSocket:
    def __init__(self, reader, writer, max_message):
        self.reader = reader
        self._writer = writer
        self.max_message = max_message
        self.last_rx_ms = ticks_ms()
        self._send_lock = asyncio.Lock()  # frames from concurrent tasks never interleave
        # The first bytes of a message dropped for want of heap (and room to read the rest
        # through): allocated with the connection, as that is when the heap has room.
        self._head = bytearray(_HEAD + _SKIP)
        self._failing = None  # (code, reason): the next receive() fails the connection so
        self._close_sent = False
        self._closed = None  # (code, reason) once the connection is over
        self._done = asyncio.Event()
        self._reading = False

    @property
    def closed(self):
        return self._closed is not None

    async def recv(self):
        """Next message: str (text) or bytearray (binary). Answers pings on the way.

        Raises ConnectionClosed when the connection ends for whatever reason (1009 at once
        for a message over max_message), MessageDropped for one the heap could not hold
        (the connection carries on). Cancelling a recv() abandons the connection (a frame
        may be half read)."""
        text, payload = await self.receive(False)
        if not text:
            return payload
        try:
            return str(payload, "utf-8")
        except MemoryError:  # the text's copy: the bytes are all there, the stream in step
            raise MessageDropped(memoryview(payload)[:_HEAD], len(payload), _NO_HEAP)

    async def receive(self, offer=True):
        """Next message as (text, payload): `text` True for a text message, whose UTF-8 is
        checked (1007 if it is not) without a copy of it; `payload` a bytearray of its
        bytes. Nothing of the message's size is allocated but its payload.

        As recv(), but with `offer` a message over max_message first raises MessageDropped
        with its first bytes (`fatal`: the next receive() closes with 1009), so that a
        caller can answer what it could read of it."""
        opcode, payload = await self._next(offer)
        if opcode == _OP_BINARY:
            return False, payload
        try:
            _check_utf8(payload)
            return True, payload
        except UnicodeError:
            await self._fail(CLOSE_INVALID_DATA, "text message is not UTF-8")
        except MemoryError:
            raise MessageDropped(memoryview(payload)[:_HEAD], len(payload), _NO_HEAP)
        raise ConnectionClosed(self._closed[0], self._closed[1])

    async def _next(self, offer):
        """(opcode, payload) of the next message (see receive for `offer`)."""
        if self._closed is None:
            self._reading = True
            try:
                if self._failing is not None:
                    raise ConnectionClosed(self._failing[0], self._failing[1])
                return await self._read_message(offer)
            except ConnectionClosed as e:
                if self._closed is None:  # the peer broke the protocol: fail with e.code
                    await self._fail(e.code, e.reason)
            except (OSError, EOFError, MemoryError):  # reset, EOF without a close frame, or
                # the heap failed inside a frame: the stream is out of step, as if lost
                await self.finish(CLOSE_ABNORMAL, "connection lost")
            finally:
                self._reading = False
        raise ConnectionClosed(self._closed[0], self._closed[1])

    async def send(self, data):
        """str -> text message; bytes-like -> binary message; a list of pieces (str,
        bytes-like UTF-8 text, or listed entries: umcp.compat.piece_utf8) -> one text
        message made of them, never joined (an entry is serialized as it is written)."""
        if isinstance(data, str):
            await self._send_message(_OP_TEXT, (data,))  # (read in place: piece_utf8)
        elif isinstance(data, (list, tuple)):
            await self._send_message(_OP_TEXT, data)
        else:
            await self._send_message(_OP_BINARY, (data,))

    async def ping(self, data=b""):
        await self._send_message(_OP_PING, (data,))

    async def close(self, code=CLOSE_NORMAL, reason=""):
        """Closing handshake: send close, wait briefly for the peer's, hang up.
        `code` 1005 sends a close frame without a status; ValueError for a code that may
        not be sent (unet.wsclose's handshake)."""
        await self._end("close", code, reason)

    async def abort(self):
        """Hang up at once, without the closing handshake (for a peer that went silent).
        A task blocked in recv() gets ConnectionClosed(1006)."""
        await self.finish(CLOSE_ABNORMAL, "aborted", True)

    async def keep_alive(self, ping_interval, idle_timeout):
        """Ping every ping_interval seconds (0: never) and hang up after idle_timeout
        seconds without any frame from the peer (a half-open TCP connection, a peer that
        stopped reading: nothing else would ever tell). Run it as a task beside recv(),
        which then raises ConnectionClosed(1006, "nothing received for N ms"); it returns
        when the connection is over. Pings go out from a task of their own: a send stuck
        on a dead network (its buffers full) must not stall this watchdog."""
        idle_ms = int(idle_timeout * 1000)
        ping_ms = int(ping_interval * 1000) if ping_interval else 0
        step_s = min(ping_ms or idle_ms, idle_ms) / 4000
        last_ping = ticks_ms()
        pinging = None
        try:
            while self._closed is None:
                await asyncio.sleep(step_s)
                now = ticks_ms()
                if ticks_diff(now, self.last_rx_ms) >= idle_ms:
                    await self.finish(CLOSE_ABNORMAL, "nothing received for %d ms" % idle_ms, True)
                    return
                if ping_ms and ticks_diff(now, last_ping) >= ping_ms:
                    if pinging is None or pinging.done():
                        last_ping = now
                        pinging = asyncio.create_task(self._quiet_ping())
        finally:
            if pinging is not None:
                pinging.cancel()

    async def _quiet_ping(self):
        try:
            await self.ping()
        except ConnectionClosed:
            pass  # the task in recv() hears of it

    # -- receiving

    async def _read_message(self, offer=False):
        """(opcode, payload) of the next message. A message the heap cannot hold is read
        through and dropped (MessageDropped, its first bytes kept); one over max_message
        is refused before its payload is read (with `offer`, after its first bytes: see
        receive). Raises ConnectionClosed once the peer's close frame ended the connection,
        and while it is still open for a peer that broke the protocol: the code to fail
        it with (1002, 1007 for a close reason, 1009)."""
        message = None  # bytearray while a fragmented message is being reassembled
        message_op = _OP_CONT
        total = 0  # bytes of the message so far
        dropped = False  # it did not fit in the heap: its frames are read through
        kept = 0  # bytes of it kept in self._head (once dropped)
        while True:
            b0, b1 = await self.reader.readexactly(2)
            self.last_rx_ms = ticks_ms()
            opcode = b0 & 0x0F
            fin = b0 & 0x80
            if b0 & 0x70:
                raise ConnectionClosed(CLOSE_PROTOCOL_ERROR, "reserved bits set")
            if b1 & 0x80:
                raise ConnectionClosed(CLOSE_PROTOCOL_ERROR, "masked frame from server")
            length = b1 & 0x7F
            if length == 126:
                length = struct.unpack("!H", await self.reader.readexactly(2))[0]
            elif length == 127:
                length = struct.unpack("!Q", await self.reader.readexactly(8))[0]
            if opcode >= _OP_CLOSE:
                if opcode > _OP_PONG:  # 0xB to 0xF: reserved (RFC 6455 5.2)
                    raise ConnectionClosed(CLOSE_PROTOCOL_ERROR, "unknown opcode %d" % opcode)
                if not fin or length > 125:
                    raise ConnectionClosed(CLOSE_PROTOCOL_ERROR, "bad control frame")
                data = await self.reader.readexactly(length)
                if opcode == _OP_PING:
                    if not self._close_sent:
                        await self._send_frame(_OP_PONG, (data,))
                elif opcode == _OP_CLOSE:  # unet.wsclose reads it and answers
                    code, reason = await await_then_forget("unet.wsclose", "closed_by_peer", self,
                                                           data)
                    raise ConnectionClosed(code, reason)  # (a malformed one: still open)
                continue
            if opcode == _OP_CONT:
                if message is None and not dropped:
                    raise ConnectionClosed(CLOSE_PROTOCOL_ERROR, "continuation without a message")
            elif opcode in (_OP_TEXT, _OP_BINARY):
                if message is not None or dropped:
                    raise ConnectionClosed(CLOSE_PROTOCOL_ERROR, "new message inside a fragmented one")
                message_op = opcode
            else:
                raise ConnectionClosed(CLOSE_PROTOCOL_ERROR, "unknown opcode %d" % opcode)
            total += length
            # Checked before reading: an oversized frame is never allocated.
            if total > self.max_message:
                if not offer:
                    raise ConnectionClosed(CLOSE_TOO_BIG, "message too big")
                kept = await self._keep_head(message, kept, length, False)
                self._failing = (CLOSE_TOO_BIG, "message too big")
                raise MessageDropped(memoryview(self._head)[:kept], total, "message too big", True)
            payload = None
            if not dropped:
                try:  # (MicroPython collects before it gives up)
                    payload = bytearray(length)
                except MemoryError:  # no room for it: it is dropped, the connection carries on
                    pass
            if payload is None:
                kept = await self._keep_head(message, kept, length, True)
                message = None
                dropped = True
            else:
                await read_into(self.reader, memoryview(payload))
                if message is None:
                    message = payload
                else:
                    try:
                        message.extend(payload)
                    except MemoryError:
                        payload = None
                        kept = await self._keep_head(message, kept, 0, True)
                        message = None
                        dropped = True
                payload = None
            if fin:
                if dropped:
                    raise MessageDropped(memoryview(self._head)[:kept], total, _NO_HEAP)
                return message_op, message

    async def _keep_head(self, message, kept, length, skip):
        """Copy into self._head what it still lacks of a message's first _HEAD bytes: from
        `message` (what was read of it), then from the frame payload still on the stream
        (`length` bytes), whose rest is read and dropped when `skip`. Returns how many bytes
        are kept. Allocates only views."""
        head = memoryview(self._head)
        if message is not None and kept < _HEAD:
            m = min(_HEAD - kept, len(message))
            head[kept:kept + m] = memoryview(message)[:m]
            kept += m
        m = min(_HEAD - kept, length)
        if m:
            await read_into(self.reader, head[kept:kept + m])
            kept += m
            length -= m
        if skip:
            scratch = head[_HEAD:]
            while length:
                m = min(length, len(scratch))
                await read_into(self.reader, scratch[:m])
                length -= m
        return kept

    async def wait_close(self):
        """Wait for the peer's close frame once ours is out (unet.wsclose's closing
        handshake): the task in receive() reads it if there is one; else messages are read
        here, and dropped, until it comes or the connection fails."""
        if self._reading:
            await self._done.wait()
            return
        try:
            while True:
                try:
                    await self._read_message()  # discarded: we are closing
                except MessageDropped:
                    pass
        except (ConnectionClosed, OSError, EOFError, MemoryError):
            pass

    async def _fail(self, code, reason):
        await self._end("fail", code, reason)

    async def _end(self, how, code, reason):
        """Close the connection (`how` "close") or fail it ("fail") with `code` and
        `reason`: unet.wsclose's, loaded for it and forgotten after. Without the heap to
        load it, the connection is hung up at once, as when a closing handshake fails."""
        try:
            await await_then_forget("unet.wsclose", how, self, code, reason)
        except MemoryError:
            await self.finish(code, reason, True)

    def _over(self, code, reason):
        """The connection is over (the first reason given stays): sends and receives end."""
        if self._closed is None:
            self._closed = (code, reason)
        self._done.set()

    async def finish(self, code, reason, abort=False):
        """The connection is over with `code` and `reason` (the first given stays): close
        its stream (`abort`: at once, its unsent data dropped)."""
        self._over(code, reason)
        await close_quietly(self._writer, abort)

    # -- sending

    async def send_close(self, payload):
        """Send our close frame with `payload` (unet.wsclose's), unless one went out
        already or the connection is over: from then on no message is sent."""
        if self._close_sent or self._closed is not None:
            return
        self._close_sent = True
        try:
            await self._send_frame(_OP_CLOSE, (payload,))
        except OSError:  # the peer is gone already
            pass

    async def _send_message(self, opcode, pieces):
        if self._closed is not None:
            raise ConnectionClosed(self._closed[0], self._closed[1])
        if self._close_sent:
            raise ConnectionClosed(CLOSE_NORMAL, "closing")
        try:
            await self._send_frame(opcode, pieces)
        except OSError:
            await self.finish(CLOSE_ABNORMAL, "connection lost")
            raise ConnectionClosed(CLOSE_ABNORMAL, "connection lost")

    async def _send_frame(self, opcode, pieces):
        key = os.urandom(4)
        length = 0
        for piece in pieces:
            length += piece_size(piece)
        head = frame_header(opcode, length, key)
        # Pieces are copied into the frame buffer behind the header and masked a whole
        # write at a time: many small pieces (a tools/list page) cost no more than one big
        # one, and the frame leaves in one write when it fits. Chunks start at payload
        # offsets that are multiples of 4, so one repeated key serves them all. Nothing in
        # the buffer outlives an await: the header goes out with the first chunk, and each
        # chunk is built afresh after a drain (another connection may have used it).
        keys = _key_int(key)
        buf = _FRAME
        writer = self._writer
        # A MemoryError before the first write leaves the stream as it was: it goes to the
        # caller, who may send something shorter. After it, half a frame is out: the
        # connection is lost (OSError: _send_message hangs up).
        writing = False
        async with self._send_lock:
            try:
                start = len(head)  # the header's bytes at the front of the first write only
                buf[0:start] = head
                filled = 0
                for piece in pieces:
                    view = memoryview(piece_utf8(piece))
                    taken = 0
                    while taken < len(view):
                        n = min(FRAME_CHUNK - filled, len(view) - taken)
                        buf[start + filled : start + filled + n] = view[taken : taken + n]
                        filled += n
                        taken += n
                        if filled == FRAME_CHUNK:
                            out = _out(buf, start, filled, keys)
                            writing = True
                            writer.write(out)
                            await writer.drain()
                            start = filled = 0
                if start or filled:
                    out = _out(buf, start, filled, keys)
                    writing = True
                    writer.write(out)
                out = None
                await writer.drain()
            except MemoryError:
                if writing:
                    raise OSError("out of memory inside a frame")
                raise
            except asyncio.CancelledError:
                # Cancelled inside a frame (its writer's task was): the rest can never
                # follow, and the peer would read the next frame as this one's payload.
                if writing:
                    self._over(CLOSE_ABNORMAL, "a frame was cut short")
                    writer.close()  # no await here: the task is being cancelled
                raise


def _out(buf, start, filled, keys):
    """The bytes of one write: the buffer's header and payload, the payload masked in
    place. MicroPython's stream writes what it can at once and copies only the rest, so
    the buffer is handed out as it is; CPython's transport may keep what it has not sent
    yet, so it gets a copy."""
    _mask_into(buf, start, filled, keys)
    view = memoryview(buf)[:start + filled]
    return view if _MICROPYTHON else bytes(view)


def _check_utf8(payload):
    """Raise UnicodeError unless `payload` is UTF-8, checked _UTF8_STEP bytes at a time
    (each piece ends on a character boundary): no copy of the whole message is made."""
    view = memoryview(payload)
    n = len(payload)
    start = 0
    wide = False  # a piece held more than ASCII: its lead bytes are checked
    while start < n:
        end = min(start + _UTF8_STEP, n)
        while end < n and end > start and payload[end] & 0xC0 == 0x80:
            end -= 1  # a character goes on: end before it
        if end == start:  # continuation bytes all along: not UTF-8
            end = min(start + _UTF8_STEP, n)
        wide = len(str(view[start:end], "utf-8")) != end - start or wide
        start = end
    if wide:
        refuse_invalid_utf8(payload)

