"""A board on a serial port (its USB cable) as a device of the hub: the same Device as one
that connects over WebSocket, its MCP carried by the firmware's serial session
(lib/mcplink/serial.py says what goes over the line; umcpfw.mcpserial runs on the board).

SerialBoard(port, ...) takes the board while it runs: it opens the port exclusively,
stops what the board runs, starts `umcpfw.mcpserial.run()` from the raw REPL after a soft
reset, and at the board's hello puts a SerialDevice into the hub's `devices` under the
board's own device id. When the session ends the device is gone (on_gone) and the board
is taken again once it is back. A board that cannot serve, or a port another program
holds, is said in one line and the port left alone. stop() ends the session and
soft-resets the board so that main.py runs again. What it does step by step:
docs/bridge.md, "A board on the USB cable".

The port: a device path (/dev/ttyUSB0, /dev/ttyACM0, COM3) or a pyserial URL
(socket://HOST:PORT, rfc2217://...). What the board prints besides records goes to the log.
"""

import asyncio
import json
import time

from websockets.exceptions import ConnectionClosed

from .. import devicelib  # noqa: F401 (lib/ on sys.path: umcp's version)
import umcp  # noqa: E402
from ..paths import hint
from .serialline import (BAUD, EOT, FRAME_S, PortError, RecordReader, SerialConnection, SerialLine,
                         SerialLinkClosed)
from .xiaozhi import Device, DeviceHost

TRANSPORT = "serial"  # a serial board's Device.transport
PROTOCOL = 1  # mcplink.serial's PROTOCOL: what this side speaks
ANSWER_S = 10.0  # each step of the REPL (stopping main.py, the raw REPL, a soft reset, the probe)
HELLO_S = 30.0  # the firmware's start (settings, board, tools) before its hello
IDLE_S = 5.0  # silence from the board after which a probe asks whether it is there
RETRY_S = 2.0  # looking for a port that went away again; taking a board again after a reset
STABLE_S = 10.0  # a session that ended sooner is taken again after a doubling pause (to 30 s)
TEXT_MAX = 300  # characters of one line of the board's output in the log
RAW_PROMPT = b"raw REPL; CTRL-B to exit\r\n>"
PROBE_TAG = "umcp-serial:"
# Asks for MicroPython's and umcp's versions on one line (under 256 bytes: the raw REPL
# reads it without flow control).
PROBE = ("import sys\ntry:\n from umcp import __version__ as v\nexcept ImportError:\n v=''\n"
         "print('%s%%d.%%d.%%d:%%s'%%(sys.implementation.version[:3]+(v,)))\n" % PROBE_TAG)
START = "from umcpfw.mcpserial import run\nrun()\n"
# What the board prints when it resets under the session: a soft reset, an ESP32's ROM
# (UART boards; a USB one leaves the port instead), MicroPython's banner, the raw REPL's.
RESET_MARKS = (b"MPY: soft reboot", b"rst:0x", b'Type "help()" for more', b"raw REPL; CTRL-B")


class Refused(Exception):
    """The board cannot serve: the reason, for the one line the log gets."""


class SerialDevice(Device):
    """A board on a serial port: a Device whose messages travel as mcplink.serial frames."""

    transport = TRANSPORT
    speaks = False  # MCP only: no turn's text

    def __init__(self, connection, hello, owner, port):
        hello = dict(hello, features={"mcp": True})
        super().__init__(connection, hello.get("device_id") or "serial:" + port, None, hello, owner)
        self.port = port

    async def send_envelope(self, payload):
        """Send one MCP message: on the line the payload is the whole record."""
        self._owner.trace(self, "->", payload)
        await self.connection.send(json.dumps(payload, separators=(",", ":")))

    async def _send_if_connected(self, payload):
        try:
            await self.send_envelope(payload)
        except ConnectionClosed:
            pass


class SerialBoard(DeviceHost):
    """The board on one serial port, taken while start()ed; `devices` is the hub's table.
    `state` says where it stands, in words (bridge__list_devices shows it)."""

    def __init__(self, port, devices=None, on_device=None, on_notification=None, on_gone=None,
                 log=None, trace=None, request_timeout=30.0, baudrate=BAUD):
        super().__init__(devices, on_device, on_notification, on_gone, log, trace, request_timeout)
        self.port = port
        self.baudrate = baudrate
        self.state = "starting"
        self.device = None
        self.line = None
        self._in_program = False  # the session's program runs in the raw REPL
        self._task = None

    def start(self):
        self._task = asyncio.create_task(self._run())

    async def stop(self):
        """End the session (Ctrl-C) and soft-reset the board from the friendly REPL, so that
        main.py runs again; then let the port go."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except BaseException:
                pass
        line, self.line = self.line, None
        if line is not None:
            try:
                await self._leave(line)
            finally:
                line.close()
        self.state = "stopped"

    def status(self):
        """{"port", "state", "device_id"} for reports."""
        return {"port": self.port, "state": self.state,
                "device_id": self.device.id if self.device is not None else None}

    async def _run(self):
        said = None  # the last reason logged: the same one is not logged again
        known = False  # a session ran on this port: its board is worth waiting for
        pause = 0.1  # before taking the board again after a session
        while True:
            line = SerialLine(self.port, self.baudrate)
            try:
                await line.open()
            except PortError as e:
                if not e.missing:
                    return self._give_up(str(e))
                if str(e) != said:
                    self.log("serial %s" % e)
                    said = str(e)
                self.state = "waiting for the port"
                await asyncio.sleep(RETRY_S)
                continue
            self.line = line
            try:
                while True:  # sessions on the open port, until it fails
                    try:
                        hello, reader, events = await self._take(line)
                    except Refused as e:
                        if not known:
                            await self._leave(line)
                            self.line = None
                            line.close()
                            return self._give_up("%s: %s" % (self.port, e))
                        if str(e) != said:  # ours a moment ago (a reset, a slow start): again
                            self.log("serial %s: %s; trying again" % (self.port, e))
                            said = str(e)
                        self.state = "retrying: %s" % e
                        await asyncio.sleep(RETRY_S)
                        continue
                    known, said = True, None
                    began = time.monotonic()
                    reason = await self._serve(line, hello, reader, events)
                    self.log("serial %s: %s" % (self.port, reason))
                    self.state = "taking the board again"
                    # After a goodbye the board resets: give it the time, not a Ctrl-C. A
                    # session that keeps ending at once waits longer each time.
                    pause = 0.2 if time.monotonic() - began > STABLE_S else min(pause * 2, 30)
                    await asyncio.sleep(max(pause, RETRY_S) if "goodbye" in reason else pause)
            except PortError as e:
                self.log("serial %s" % e)
                said = str(e)
                self.line = None
                line.close()
                self.state = "waiting for the port"
                await asyncio.sleep(RETRY_S)
            except Exception as e:  # a bug of ours must not leave the port taken and idle
                self.log("serial %s: %r; the port opened afresh" % (self.port, e))
                self.line = None
                line.close()
                await asyncio.sleep(RETRY_S)

    def _give_up(self, reason):
        self.log("serial %s" % reason)
        self.state = "gave up: " + reason

    async def _take(self, line):
        """The board stopped, soft-reset in the raw REPL, asked, and its session started:
        (its hello, the RecordReader that read it, the events that followed it). Refused
        when it cannot serve."""
        self.state = "taking the board"
        self._in_program = False
        for text in line.take().decode("utf-8", "replace").splitlines():  # since the last session
            self._board_said(text)
        for _ in range(2):  # a firmware slow to stop (its goodbyes) gets a second Ctrl-C
            await line.write(b"\r\x03")  # Ctrl-C: stop what runs (main.py)
            await asyncio.sleep(0.1)
            line.take()  # its goodbye, traceback and prompt
            await line.write(b"\r\x01")  # Ctrl-A: the raw REPL
            try:
                await line.until(RAW_PROMPT, ANSWER_S / 2)
                break
            except asyncio.TimeoutError:
                continue
        else:
            raise Refused("no MicroPython REPL answered within %g s (is MicroPython on the board? "
                          "%s)" % (ANSWER_S, hint("make flash", "umcp flash")))
        await line.write(EOT)  # Ctrl-D at the raw prompt: a soft reset, a fresh heap
        try:
            await line.until(b"soft reboot\r\n", ANSWER_S)
            await line.until(RAW_PROMPT, ANSWER_S)
        except asyncio.TimeoutError:
            raise Refused("the board did not come back from a soft reset within %g s" % ANSWER_S)
        output, error = await self._exec(line, PROBE)
        found = [text for text in output.splitlines() if text.startswith(PROBE_TAG)]
        if not found:
            raise Refused("it did not answer the probe: %s" % (_last_line(error or output) or "nothing"))
        micropython, version = found[0][len(PROBE_TAG):].strip().split(":", 1)
        if not version:
            raise Refused("MicroPython %s without umcp: deploy the firmware (%s)" % (micropython, self._deploy()))
        if version != umcp.__version__:
            raise Refused("the board runs umcp %s, this bridge %s: deploy this release (%s)"
                          % (version, umcp.__version__, self._deploy()))
        await self._exec(line, START, follow=False)
        self._in_program = True
        self.state = "starting the session"
        return await self._hello(line)

    def _deploy(self):
        """The deploy command for this port, in the words of this copy (make or umcp)."""
        return hint("make deploy PORT=%s BOARD=...", "umcp deploy --port %s --board ...") % self.port

    async def _exec(self, line, code, follow=True):
        """`code` run in the raw REPL: (its output, its error output) as text; with
        follow=False only started (its output is then the session's)."""
        await line.write(code.encode() + EOT)
        try:
            await line.until(b"OK", ANSWER_S)
            if not follow:
                return None
            output = await line.until(EOT, ANSWER_S)
            error = await line.until(EOT, ANSWER_S)
            await line.until(b">", ANSWER_S)
        except asyncio.TimeoutError:
            raise Refused("the raw REPL did not run a command within %g s" % ANSWER_S)
        return (output[:-1].decode("utf-8", "replace"), error[:-1].decode("utf-8", "replace"))

    async def _hello(self, line):
        """The session's hello: (it, the RecordReader, the events after it). The board's
        output before it is logged."""
        reader = RecordReader()
        deadline = time.monotonic() + HELLO_S
        said = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not await line.wait(left):
                raise Refused("its serial session did not start within %g s%s" % (
                    HELLO_S, ": " + said[-1] if said else ""))
            events = reader.feed(line.take())
            for at, event in enumerate(events):
                if event[0] == "text":
                    self._board_said(event[1])
                    said.append(event[1])
                elif event[0] == "end":
                    self._in_program = False
                    error = await self._program_error(line, event[1])
                    raise Refused("its serial session ended at once: %s" % (
                        _last_line(error) or (said[-1] if said else "no reason given")))
                elif event[0] == "record" and isinstance(event[1], dict) and event[1].get("type") == "hello":
                    hello = event[1]
                    if hello.get("protocol") != PROTOCOL:
                        raise Refused("its serial session speaks protocol %r, this bridge %d: deploy "
                                      "this release" % (hello.get("protocol"), PROTOCOL))
                    return hello, reader, events[at + 1:]
                else:
                    self.log("serial %s: before the hello, %r dropped" % (self.port, event))

    async def _program_error(self, line, rest):
        """After the raw REPL's first EOT: the program's error output (up to the second),
        from `rest` (what came with the EOT) and what follows on the line."""
        if EOT in rest:
            error = rest[:rest.index(EOT)]
        else:
            try:
                error = rest + (await line.until(EOT, 3))[:-1]
            except asyncio.TimeoutError as e:
                error = rest + e.seen
        return error.decode("utf-8", "replace")

    async def _serve(self, line, hello, reader, events):
        """The device for this session, until it ends: the reason, in words."""
        connection = SerialConnection(line, int(hello.get("window") or 0) or 64)
        device = SerialDevice(connection, hello, self, self.port)
        previous = self.devices.pop(device.id, None)
        if previous is not None:
            self.log("%s came over serial %s: closing its previous connection" % (device.id, self.port))
            await previous.connection.close(1000, "replaced by a serial session")
        self.devices[device.id] = device
        self.device = device
        self.state = "serving"
        self.log("serial %s: %s (umcp %s, board %s) is serving" % (
            self.port, device.id, hello.get("version"), hello.get("board")))
        starting = asyncio.create_task(self._on_device(device)) if self._on_device else None
        prober = asyncio.create_task(self._probe(line, connection))
        reason = "the bridge stopped"
        try:
            reason = await self._receive(line, reader, events, connection, device, prober)
            return reason
        finally:
            prober.cancel()
            connection.end(reason)
            device.closed.set()
            device.fail_pending()
            if self.devices.get(device.id) is device:
                del self.devices[device.id]
            self.device = None
            if starting is not None and not starting.done():
                starting.cancel()
            if self._on_gone:
                self._on_gone(device)

    async def _receive(self, line, reader, events, connection, device, prober):
        while True:
            for event in events:
                kind = event[0]
                if kind == "ack":
                    connection.acked()
                elif kind == "record":
                    message = event[1]
                    if isinstance(message, dict) and message.get("type") == "goodbye":
                        return "the board said goodbye (it is resetting)"
                    device.on_payload(message)
                elif kind == "bad":
                    self.log("serial %s: a record that is not JSON, dropped: %s" % (self.port, event[1]))
                elif kind == "text":
                    self._board_said(event[1])
                    if any(mark.decode() in event[1] for mark in RESET_MARKS):
                        self._in_program = False
                        return "the board reset (%s)" % event[1].strip()[:60]
                else:  # the raw REPL's EOT: the program ended
                    self._in_program = False
                    error = await self._program_error(line, event[1])
                    return "its serial session ended: %s" % (_last_line(error) or "no error given")
            events = ()
            await line.wait(IDLE_S)  # PortError when the port fails
            if prober.done():
                return prober.result()
            events = reader.feed(line.take())

    async def _probe(self, line, connection):
        """After IDLE_S of silence from the board, a probe frame it must ACK: the reason
        when it does not (a board that reset and runs main.py takes no frame)."""
        while True:
            await asyncio.sleep(1)
            if connection.sending or time.monotonic() - line.last_rx < IDLE_S:
                continue
            try:
                await connection.frame(b"", FRAME_S)
            except SerialLinkClosed as e:
                line.wake()
                return "it stopped answering: %s" % e

    def _board_said(self, text):
        text = printable(text.strip()[:TEXT_MAX])
        if text and text not in (">", ">>>"):  # a REPL's prompt says nothing
            self.log("serial %s: %s" % (self.port, text))

    async def _leave(self, line):
        """The board left as the bridge found it: the session's program ended (Ctrl-C),
        the friendly REPL (Ctrl-B), a soft reset (Ctrl-D: main.py runs)."""
        try:
            if self._in_program:
                await line.write(b"\r\x03")
                try:
                    await line.until(b"\x04>", 3)  # the program's end and the raw prompt
                except asyncio.TimeoutError:
                    pass
                self._in_program = False
            await line.write(b"\r\x02")
            try:
                await line.until(b">>> ", 3)
            except asyncio.TimeoutError:
                pass
            await line.write(EOT)
            try:
                await line.until(b"soft reboot", 3)
            except asyncio.TimeoutError:
                pass
        except PortError:
            pass


def printable(text):
    """`text` with its control characters shown as \\xNN: the board's own output goes into
    the log, where an escape sequence would act on the terminal."""
    return "".join(c if c.isprintable() else "\\x%02x" % ord(c) for c in text)


def _last_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""
