"""The serial line under a board's serial session (tools.hub.serialboard): the port opened
exclusively and read on a thread (SerialLine), what the board writes parsed into events
(RecordReader), and the connection a Device sends through (SerialConnection: a message as
mcplink.serial's frame, a window at a time, each ACKed). lib/mcplink/serial.py says what goes
over the line and why. Nothing here knows MicroPython's REPL; serialboard does."""

import asyncio
import json
import os
import re
import threading
import time

import serial
from websockets.exceptions import ConnectionClosed

from .xiaozhi import MAX_MESSAGE

BAUD = 115200  # MicroPython's REPL on a UART (a USB CDC port ignores it)
FRAME_S = 10.0  # a window of a frame, until the board's ACK
RS, ACK, EOT = b"\x1e", b"\x06", b"\x04"
_SPECIAL = re.compile(b"[\n\x04\x06]")


class SerialLinkClosed(ConnectionClosed):
    """The session on the serial line ended: a websockets ConnectionClosed, so Device
    treats it as a closed WebSocket (DeviceGone)."""

    def __init__(self, reason="the serial session ended"):
        super().__init__(None, None)
        self.why = reason

    def __str__(self):
        return self.why


class PortError(Exception):
    """The port cannot be used: `missing` (not there, or gone), else busy or broken."""

    def __init__(self, message, missing=False):
        super().__init__(message)
        self.missing = missing


class SerialLine:
    """An open port: bytes in from a reader thread (pyserial reads block), written from the
    loop. `until()` and `take()` read what arrived; `error` is set once the port failed."""

    def __init__(self, port, baudrate=BAUD):
        self.port = port
        self.baudrate = baudrate
        self.serial = None
        self.error = None
        self.last_rx = time.monotonic()
        self._buffer = bytearray()
        self._arrived = asyncio.Event()
        self._loop = None
        self._thread = None
        self._closing = False

    async def open(self):
        self._loop = asyncio.get_running_loop()
        self.serial = await asyncio.to_thread(open_port, self.port, self.baudrate)
        self._thread = threading.Thread(target=self._read, name="serial " + self.port, daemon=True)
        self._thread.start()

    def _read(self):
        port = self.serial
        while not self._closing:
            try:
                data = port.read(port.in_waiting or 1)
            except Exception as e:  # SerialException, OSError: unplugged, or closed by close()
                if not self._closing:
                    self._loop.call_soon_threadsafe(self._failed, e)
                return
            if data:
                self._loop.call_soon_threadsafe(self._feed, data)

    def _feed(self, data):
        self._buffer += data
        self.last_rx = time.monotonic()
        self._arrived.set()

    def _failed(self, error):
        self.error = error
        self._arrived.set()

    def wake(self):
        """Make a wait() return now (someone else learnt the session is over)."""
        self._arrived.set()

    async def wait(self, timeout=None):
        """Until something arrived (True), `timeout` passed or wake() (False), or the port
        failed (PortError). What arrived is taken before a failure is raised."""
        if not self._buffer:
            self._check()
            if not await self._arrival(timeout):
                return False
            if not self._buffer:
                self._check()
        return bool(self._buffer)

    async def _arrival(self, timeout):
        """Until the reader fed or failed, or wake() (True), or `timeout` passed (False)."""
        self._arrived.clear()
        try:
            await asyncio.wait_for(self._arrived.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    def _check(self):
        if self.error is not None:
            raise PortError("%s went away (%s)" % (self.port, self.error), missing=True)

    def take(self):
        """Everything that arrived, taken."""
        data = bytes(self._buffer)
        self._buffer.clear()
        return data

    async def until(self, ending, timeout):
        """What arrives up to and including `ending`, within `timeout` seconds; what
        follows stays. Raises asyncio.TimeoutError with what did arrive in `.seen`."""
        deadline = time.monotonic() + timeout
        while True:
            at = self._buffer.find(ending)
            if at >= 0:
                data = bytes(self._buffer[:at + len(ending)])
                del self._buffer[:at + len(ending)]
                return data
            left = deadline - time.monotonic()
            if left <= 0 or not await self.wait_more(left):
                error = asyncio.TimeoutError()
                error.seen = bytes(self._buffer)
                raise error

    async def wait_more(self, timeout):
        """Until more bytes arrive than there are now (True) or `timeout` (False)."""
        self._check()
        if not await self._arrival(timeout):
            return False
        self._check()
        return True

    async def write(self, data):
        self._check()
        try:
            await asyncio.to_thread(self.serial.write, data)
        except Exception as e:
            self._failed(e)
            self._check()

    def close(self):
        if self.serial is None:
            return
        self._closing = True
        port = self.serial
        try:
            if hasattr(port, "cancel_read"):
                port.cancel_read()
            # As mpremote leaves an ESP32: RTS, then DTR, low (Windows would otherwise
            # reset the board on close); a pty or a socket has neither.
            port.rts = False
            port.dtr = False
        except Exception:
            pass
        try:
            port.close()
        except Exception:
            pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(2)


def open_port(port, baudrate):
    """pyserial's port, opened exclusively (another program holding it: PortError)."""
    try:
        opened = serial.serial_for_url(port, baudrate=baudrate, timeout=0.2, exclusive=True, do_not_open=True)
        if os.name == "nt" and not port.startswith(("socket:", "rfc2217:")):
            # CP210x on Windows sets DTR and RTS at different times on the first open,
            # which resets an ESP32 (mpremote does the same).
            opened.dtr = opened.rts = False
            opened.open()
            opened.dtr = opened.rts = True
        else:
            opened.open()
        return opened
    except (serial.SerialException, OSError, ValueError) as e:
        text = str(e)
        if "exclusively lock" in text or "Access is denied" in text or "Device or resource busy" in text:
            raise PortError("%s is busy: another program has it open (mpremote, a terminal, another "
                            "bridge); close it, then start the bridge again" % port) from None
        if "No such file" in text or "FileNotFoundError" in text or "could not open port" in text \
                or "Connection refused" in text:
            raise PortError("%s is not there (is the board plugged in? `ls /dev/tty*` or the "
                            "Device Manager lists its port): %s" % (port, text), missing=True) from None
        raise PortError("%s cannot be opened: %s" % (port, text)) from None


class RecordReader:
    """What the board writes, parsed: feed(data) -> events in order: ("ack",) a window
    taken, ("record", object) a JSON text after RS, ("bad", text) a record that is not
    JSON, ("text", line) the board's own output, ("end", rest) the raw REPL's EOT: the
    program ended, and `rest`, what followed the EOT in the data, is its error output (the
    events stop there; the reader starts afresh)."""

    def __init__(self, limit=MAX_MESSAGE):
        self.limit = limit
        self._line = bytearray()
        self._over = False

    def feed(self, data):
        events = []
        start = 0
        for match in _SPECIAL.finditer(data):
            self._add(data[start:match.start()])
            start = match.end()
            special = match.group()
            if special == b"\n":
                events.extend(self._line_done())
            elif special == ACK:
                events.append(("ack",))
            else:
                if self._line:  # a line without its LF
                    events.extend(self._line_done())
                events.append(("end", data[start:]))
                return events
        self._add(data[start:])
        return events

    def pending(self):
        """What arrived of a line not ended yet, as text."""
        return bytes(self._line).decode("utf-8", "replace")

    def _add(self, piece):
        if self._over or not piece:
            return
        if len(self._line) + len(piece) > self.limit:
            self._over = True
            self._line.clear()
            return
        self._line += piece

    def _line_done(self):
        line = bytes(self._line).rstrip(b"\r")
        over, self._over = self._over, False
        self._line.clear()
        if over:
            return [("bad", "a line of more than %d bytes" % self.limit)]
        at = line.find(RS)
        if at < 0:
            return [("text", line.decode("utf-8", "replace"))] if line else []
        events = [("text", line[:at].decode("utf-8", "replace"))] if at else []
        body = line[at + 1:]
        try:
            events.append(("record", json.loads(body)))
        except ValueError:
            events.append(("bad", body[:80].decode("utf-8", "replace")))
        return events


class SerialConnection:
    """What Device needs of its connection over the serial line: send(text), close(). A
    message goes out as mcplink.serial's frame, a window at a time, each waiting for the
    board's ACK; frames never overlap."""

    def __init__(self, line, window):
        self.line = line
        self.window = window
        self.closed = False
        self.why = None
        self.sending = False
        self._lock = asyncio.Lock()
        self._owed = self._acks = 0
        self._acked = asyncio.Event()

    async def send(self, text):
        await self.frame(text.encode("utf-8"))

    async def frame(self, body, timeout=FRAME_S):
        """One frame (b"": a probe), every window ACKed within `timeout` seconds;
        SerialLinkClosed when the session ended or the board did not take it."""
        async with self._lock:
            if self.closed:
                raise SerialLinkClosed(self.why or "the serial session ended")
            self.sending = True
            try:
                done = 0
                head = b"\x1e%d\n" % len(body)
                while True:
                    end = min(len(body), done + self.window)
                    chunk = body[done:end]
                    if done == 0:
                        chunk = head + chunk
                    if end == len(body):
                        chunk += b"\n"
                    self._owed += 1
                    try:
                        await self.line.write(chunk)
                    except PortError as e:
                        raise SerialLinkClosed(str(e)) from None
                    await self._ack(timeout)
                    done = end
                    if done == len(body):
                        return
            finally:
                self.sending = False

    async def _ack(self, timeout):
        deadline = time.monotonic() + timeout
        while self._acks < self._owed:
            if self.closed:
                raise SerialLinkClosed(self.why or "the serial session ended")
            self._acked.clear()
            left = deadline - time.monotonic()
            try:
                await asyncio.wait_for(self._acked.wait(), max(left, 0))
            except asyncio.TimeoutError:
                self.end("the board took no frame for %g s" % timeout)
                raise SerialLinkClosed(self.why) from None

    def acked(self):
        """An ACK from the board (one nobody waits for, a byte of its own output, is dropped)."""
        if self._acks < self._owed:
            self._acks += 1
            self._acked.set()

    def end(self, why):
        if not self.closed:
            self.closed, self.why = True, why
        self._acked.set()

    async def close(self, code=1000, reason=""):
        """Device's way to drop a connection (another one of the same device replaced it)."""
        self.end(reason or "closed")
