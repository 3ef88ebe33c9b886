"""MCP over the board's serial line: the REPL's stdin and stdout, on the USB cable, with
the board's own output (log lines, a maker's print()) on the same line. What
`umcp bridge --serial PORT` talks to; umcpfw.mcpserial starts it through the raw REPL.
One Session of the application's server, as every transport; loaded only while the
session runs, on CPython and MicroPython.

On the line (SerialLink.PROTOCOL 1; docs/bridge.md, "A board on the USB cable"): the
board writes records, RS (0x1E), one compact JSON text, LF (RFC 7464): the hello, each
JSON-RPC message at once (no await between its pieces, so no log line lands inside it),
a goodbye. The host writes RS, the length in ASCII digits, LF, the message, LF, at most
WINDOW bytes before the board's ACK (0x06): a board's stdin reads as many bytes as asked
and drops what overflows its small buffer while code runs. Length 0 is a probe (ACKed,
nothing served); Ctrl-C (0x03) interrupts the board, the host's way to end the session.
"""

import asyncio
import gc

from umcp.compat import const, dumps, get_logger, piece_utf8

PROTOCOL = const(1)
# Message bytes the host may send before the board's ACK: with the head (RS, 7 digits,
# LF) and the closing LF, 250 bytes in flight at most, within an ESP32's 260.
WINDOW = const(240)
_RS = const(0x1E)
_LF = const(0x0A)
_MAX_DIGITS = const(7)
_HEAD_KEEP = const(192)  # the first bytes of a message it cannot hold: where its id is
_SKIP = const(64)  # the scratch a message it cannot hold is read through

_log = get_logger("serial")


class SerialLink:
    """The server's tools over a serial line, as a link of the application: run() serves
    until the line ends (EOF; on a board Ctrl-C ends it first); `connected` is set from the
    hello to stop() or the end.

    `reader`: `await reader.readinto(view)` -> bytes read, 0 at the end (MicroPython's
    asyncio.StreamReader over sys.stdin.buffer); `writer`: `write(bytes-like)`, and
    `flush()` where it buffers (sys.stdout.buffer). `hello`: what the hello record says
    beside the transport's own keys (the firmware's version, the device id, the board).
    `received`: messages served; `noise`: bytes skipped outside any frame."""

    def __init__(self, server, reader, writer, hello=None, max_message=None):
        self.reader = reader
        self.writer = writer
        self.hello = hello
        self.max_message = max_message or server.max_message or 32768
        self.mcp = server.session(self._send, max_message=self.max_message)
        self.connected = asyncio.Event()
        self.received = 0
        self.noise = 0
        self._one = bytearray(1)
        self._head_started = False  # an RS was read where a closing LF was due

    async def run(self):
        """The hello, then each message the host sends, served, until the line ends."""
        hello = {"type": "hello", "transport": "serial", "protocol": PROTOCOL, "window": WINDOW,
                 "max_message": self.max_message}
        if self.hello:
            hello.update(self.hello)
        self._send((dumps(hello),))
        hello = None
        self.connected.set()
        try:
            while True:
                length = await self._head()
                if length is None:
                    return
                if not await self._message(length):
                    return
        finally:
            self.connected.clear()
            self.mcp.close()

    async def stop(self):
        """Say goodbye on the line: the board is going (the application stops it before a
        reset), and the host stops sending. run() reads on until the line ends: stdin
        cannot be closed, and a reset on another task must not find the loop ended."""
        if self.connected.is_set():
            self.connected.clear()
            try:
                self._send(('{"type":"goodbye"}',))
            except Exception:  # a line that is gone: nothing to say goodbye on
                pass

    def _send(self, pieces):
        """One record: RS, the message's pieces as they are (never joined), LF. Written with
        no await in between: nothing else the board prints can land inside it."""
        write = self.writer.write
        write(b"\x1e")
        for piece in pieces:
            write(piece_utf8(piece))
        write(b"\n")
        self._flush()

    def _ack(self):
        self.writer.write(b"\x06")
        self._flush()

    def _flush(self):
        flush = getattr(self.writer, "flush", None)
        if flush is not None:
            flush()

    async def _byte(self):
        """The next byte on the line, or None at its end."""
        if not await self.reader.readinto(self._one):
            return None
        return self._one[0]

    async def _head(self):
        """The length of the next frame (its RS and digits read), or None at the end of the
        line. Bytes outside a frame are skipped (counted in noise, logged once a burst)."""
        skipped = 0
        while True:
            if self._head_started:
                self._head_started = False
            else:
                byte = await self._byte()
                if byte is None:
                    return None
                if byte != _RS:
                    if not skipped:
                        _log.warning("bytes outside a frame, skipped up to the next one")
                    skipped += 1
                    self.noise += 1
                    continue
            length = digits = 0
            while True:
                byte = await self._byte()
                if byte is None:
                    return None
                if byte == _LF and digits:
                    return length
                if byte == _RS:
                    self._head_started = True
                    break
                if not 0x30 <= byte <= 0x39 or digits == _MAX_DIGITS:
                    _log.warning("a frame head without its length, skipped")
                    self.noise += 1
                    break
                length = length * 10 + byte - 0x30
                digits += 1

    async def _message(self, length):
        """Read one message of `length` bytes window by window, then serve it (a probe, of
        length 0, only ACKed). False at the end of the line."""
        data = reason = None
        if length > self.max_message:
            reason = "a message of %d bytes, over the limit of %d" % (length, self.max_message)
        else:
            try:
                data = bytearray(length)
            except MemoryError:
                gc.collect()
                reason = "no heap for a message of %d bytes" % length
        head = data
        if data is None:  # read through, its head kept for the id (where there is heap)
            try:
                head = bytearray(min(length, _HEAD_KEEP))
            except MemoryError:
                head = bytearray(0)
        ended = await self._read(length, data, head)
        if ended is None:
            return False
        if length == 0 and ended:
            return True  # a probe
        if not ended and reason is None:
            reason = "a message not closed by LF where its length said"
        if reason is not None:  # refuse() logs it
            data = None
            await self.mcp.refuse(head, reason)
            return True
        head = None
        self.received += 1
        await self.mcp.receive(data)
        return True

    async def _read(self, length, data, head):
        """The message's bytes into `data` (or, without it, its first ones into `head` and
        the rest skipped), an ACK after each window; whether the closing LF followed
        (None: the line ended)."""
        done = 0
        scratch = None
        while True:
            end = min(length, done + WINDOW)
            while done < end:
                if data is not None:
                    view = memoryview(data)[done:end]
                elif done < len(head):
                    view = memoryview(head)[done:min(end, len(head))]
                else:
                    if scratch is None:
                        try:
                            scratch = bytearray(_SKIP)
                        except MemoryError:
                            scratch = self._one
                    view = memoryview(scratch)[:min(len(scratch), end - done)]
                got = await self.reader.readinto(view)
                if not got:
                    return None
                done += got
            view = None
            if done == length:
                byte = await self._byte()
                if byte is None:
                    return None
                self._head_started = byte == _RS
                self._ack()
                return byte == _LF
            self._ack()
