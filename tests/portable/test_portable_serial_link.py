# mcplink.serial, the board's side of MCP over its serial line, against a scripted host on
# an in-memory line: the hello, frames read window by window with an ACK after each (the
# host releases a window only after the ACK before it), messages split across reads,
# records that are RS + JSON + LF whatever a tool returns, and what a line carries that
# is not a frame (noise, a head without a length, a missing LF, a message over the limit,
# one the heap cannot hold). Runs under pytest and inside MicroPython.

import asyncio
import json

from mcplink.serial import PROTOCOL, WINDOW, SerialLink
from umcp import INTEGER, STRING, McpServer, Property, PropertyList
from portable_support import Gate, call, settle

RS = 0x1E
ACK = 0x06


class Host:
    """The host end of an in-memory serial line: `send()` queues a frame (or raw bytes)
    that the board reads through readinto() in pieces of at most `piece` bytes, a window
    at a time (the next only after the board's ACK for the one before, as the bridge
    does); write() is the board's output: `records()` its RS records, `acks` its ACKs."""

    def __init__(self, piece=7):
        self.piece = piece
        self.windows = []  # byte strings, each released after the ACK of the one before
        self.released = bytearray()
        self.owed = 0  # ACKs the board owes for windows it was given
        self.acks = 0
        self.out = bytearray()
        self.ended = False
        self.overran = False  # the board asked for bytes of a window not released yet

    def send(self, message, length=None, close=b"\n"):
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        head = b"\x1e%d\n" % (len(body) if length is None else length)
        first = True
        done = 0
        while True:
            end = min(len(body), done + WINDOW)
            chunk = body[done:end]
            if first:
                chunk = head + chunk
            if end == len(body):
                chunk += close
            self.windows.append(chunk)
            first = False
            done = end
            if done == len(body):
                return

    def raw(self, data):
        self.windows.append(data)
        self.owed -= 1  # no ACK owed for bytes outside a frame

    def end(self):
        self.ended = True

    async def readinto(self, view):
        while not self.released:
            if self.windows and self.acks >= self.owed:
                self.released += self.windows.pop(0)
                self.owed += 1
                continue
            if self.ended and not self.windows:
                return 0
            await asyncio.sleep(0)
        count = min(len(view), len(self.released), self.piece)
        view[:count] = self.released[:count]
        self.released = self.released[count:]
        return count

    def write(self, data):
        for byte in bytes(data):
            if byte == ACK:
                self.acks += 1
            else:
                self.out.append(byte)

    def records(self):
        found = []
        for line in bytes(self.out).split(b"\n"):
            if line.startswith(b"\x1e"):
                found.append(json.loads(line[1:]))
        return found

    def answer(self, request_id):
        for record in self.records():
            if record.get("id") == request_id:
                return record
        return None


def server():
    server = McpServer(name="serial-board", version="9")
    server.max_message = 4096
    server.add_tool("self.echo", "Say the text back.", PropertyList([Property("text", STRING)]),
                    lambda args: args["text"])
    server.add_tool("self.double", "Twice n.", PropertyList([Property("n", INTEGER)]), lambda args: 2 * args["n"])
    return server


async def running(host, srv=None, **options):
    link = SerialLink(srv or server(), host, host, {"device_id": "aa:bb", "version": "9"}, **options)
    task = asyncio.create_task(link.run())
    await settle(link.connected.is_set)
    return link, task


async def finish(host, task):
    host.end()
    await settle(task.done)


async def test_hello_first_then_each_frame_served_with_an_ack_per_window():
    host = Host(piece=3)  # every message split across many reads
    link, task = await running(host)
    hello = host.records()[0]
    assert hello == {"type": "hello", "transport": "serial", "protocol": PROTOCOL, "window": WINDOW,
                     "max_message": 4096, "device_id": "aa:bb", "version": "9"}
    host.send(call("self.double", {"n": 21}, id=1))
    await settle(lambda: host.answer(1) is not None)
    assert host.answer(1)["result"]["content"] == [{"type": "text", "text": "42"}]
    assert host.acks == 1 and link.received == 1 and link.noise == 0
    await finish(host, task)
    assert not link.connected.is_set()


async def test_a_message_longer_than_a_window_is_taken_a_window_at_a_time():
    host = Host(piece=50)
    link, task = await running(host)
    text = "x" * (3 * WINDOW)  # with the request around it: four windows
    host.send(call("self.echo", {"text": text}, id="long"))
    await settle(lambda: host.answer("long") is not None)
    length = len(json.dumps(call("self.echo", {"text": text}, id="long")))
    assert host.acks == (length + WINDOW - 1) // WINDOW == 4
    assert host.answer("long")["result"]["content"][0]["text"] == text
    await finish(host, task)


async def test_records_hold_no_raw_control_bytes_whatever_a_tool_returns():
    host = Host()
    link, task = await running(host)
    host.send(call("self.echo", {"text": "a\x1eb\x03c\x04d\x06e\nf"}, id=2))
    await settle(lambda: host.answer(2) is not None)
    record = [line for line in bytes(host.out).split(b"\n") if b'"id":2' in line][0]
    assert record[0] == RS and not [b for b in record[1:] if b < 0x20]
    assert host.answer(2)["result"]["content"][0]["text"] == "a\x1eb\x03c\x04d\x06e\nf"
    await finish(host, task)


async def test_a_probe_is_acked_and_serves_nothing():
    host = Host()
    link, task = await running(host)
    host.send(b"")
    host.send(call("self.double", {"n": 1}, id=3))
    await settle(lambda: host.answer(3) is not None)
    assert host.acks == 2 and link.received == 1 and len(host.records()) == 2  # hello, answer
    await finish(host, task)


async def test_bytes_outside_a_frame_and_a_head_without_a_length_are_skipped():
    host = Host()
    link, task = await running(host)
    host.raw(b"\r\n>>> garbage \x07\xff")
    host.raw(b"\x1e12x\n")  # a head that is not a length
    host.send(call("self.double", {"n": 4}, id=4))
    await settle(lambda: host.answer(4) is not None)
    assert host.answer(4)["result"]["content"][0]["text"] == "8"
    assert link.noise == len(b"\r\n>>> garbage \x07\xff") + len(b"x\n") and link.received == 1
    await finish(host, task)


async def test_a_message_over_the_limit_is_read_through_and_refused_with_its_id():
    host = Host(piece=64)
    link, task = await running(host)
    host.send(call("self.echo", {"text": "y" * 5000}, id="big"))
    host.send(call("self.double", {"n": 5}, id=5))
    await settle(lambda: host.answer(5) is not None)
    refused = host.answer("big")
    assert refused["error"]["code"] == -32700 and "over the limit of 4096" in refused["error"]["message"]
    assert host.answer(5)["result"]["content"][0]["text"] == "10"
    assert link.received == 1  # the big one was never served
    await finish(host, task)


async def test_a_frame_whose_length_lies_is_refused_and_the_next_one_served():
    host = Host()
    link, task = await running(host)
    body = json.dumps(call("self.double", {"n": 6}, id=6)).encode()
    host.send(body, length=len(body) - 1, close=b"\n")  # one byte more than its head says
    host.send(call("self.double", {"n": 7}, id=7))
    await settle(lambda: host.answer(7) is not None)
    assert host.answer(7)["result"]["content"][0]["text"] == "14"
    assert [r for r in host.records() if r.get("error", {}).get("code") == -32700]
    await finish(host, task)


async def test_a_cancelled_call_is_cancelled_on_the_board():
    srv = server()
    gate = Gate()
    srv.add_tool("slow", "waits", None, gate)
    host = Host()
    link, task = await running(host, srv)
    host.send(call("slow", id=8))
    await settle(gate.entered.is_set)
    host.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}})
    await settle(lambda: gate.cancelled)
    assert host.answer(8) is None  # a cancelled request gets no answer
    await finish(host, task)


async def test_the_end_of_the_line_closes_the_session_and_stop_says_goodbye():
    srv = server()
    gate = Gate()
    srv.add_tool("slow", "waits", None, gate)
    host = Host()
    link, task = await running(host, srv)
    host.send(call("slow", id=9))
    await settle(gate.entered.is_set)
    await link.stop()
    assert host.records()[-1] == {"type": "goodbye"} and not link.connected.is_set()
    await finish(host, task)
    await settle(lambda: gate.cancelled)  # the session closed: its calls cancelled
