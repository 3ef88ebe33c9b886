"""tools.hub.serialline: the serial board's line handling, without a board: what the board writes, parsed
(records, ACKs, its own output, the raw REPL's end) however the reads split it; frames
written a window at a time, each waiting for its ACK; a port that is not there or that
another program holds. The whole path on a real MicroPython is tests/bridge/
test_bridge_serial.py's (the pty board)."""

import asyncio
import json
import os

import pytest
import serial

from tools.hub.serialboard import printable
from tools.hub.serialline import PortError, RecordReader, SerialConnection, SerialLinkClosed, open_port

pytestmark = pytest.mark.timeout(30)

LINE = (b"OK\r\nWARNING app: starting\r\n"
        b"\x1e{\"type\":\"hello\",\"protocol\":1,\"window\":240}\n"
        b"\x06\x1e{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"a\\u001eb\"}}\r\n"
        b"maker: \x1b[31mred\x1b[0m\r\n"
        b"\x1e{not json\n"
        b"before\x1e{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n"
        b"\x06\x04Traceback (most recent call last):\r\nKeyboardInterrupt: \r\n\x04>")
EVENTS = [("text", "OK"), ("text", "WARNING app: starting"),
          ("record", {"type": "hello", "protocol": 1, "window": 240}), ("ack",),
          ("record", {"jsonrpc": "2.0", "id": 1, "result": {"text": "a\x1eb"}}),
          ("text", "maker: \x1b[31mred\x1b[0m"), ("bad", "{not json"), ("text", "before"),
          ("record", {"jsonrpc": "2.0", "method": "notifications/message"}), ("ack",),
          ("end", b"Traceback (most recent call last):\r\nKeyboardInterrupt: \r\n\x04>")]


def parsed(pieces):
    reader, events = RecordReader(), []
    for piece in pieces:
        events += reader.feed(piece)
        if events and events[-1][0] == "end":
            break
    return events


def test_the_board_side_is_parsed_whatever_the_reads():
    assert parsed([LINE]) == EVENTS
    for size in (1, 2, 3, 7, 64):
        pieces = [LINE[i:i + size] for i in range(0, len(LINE), size)]
        events = parsed(pieces)
        # The end's `rest` is what came with the EOT in its read: compare up to it.
        assert events[:-1] == EVENTS[:-1] and events[-1][0] == "end"
        assert EVENTS[-1][1].startswith(events[-1][1])


def test_a_line_over_the_limit_is_dropped_and_the_next_one_read():
    reader = RecordReader(limit=100)
    assert reader.feed(b"\x1e" + b"x" * 150) == []
    assert reader.feed(b"y" * 50 + b"\n\x1e{}\n") == [("bad", "a line of more than 100 bytes"), ("record", {})]


def test_the_boards_output_reaches_the_log_without_its_control_characters():
    assert printable("maker: \x1b[31mred\x1b[0m\tok") == "maker: \\x1b[31mred\\x1b[0m\\x09ok"


class FakeLine:
    """What SerialConnection writes, with the ACKs a test gives."""

    def __init__(self):
        self.written = []
        self.connection = None

    async def write(self, data):
        self.written.append(bytes(data))


async def acking(line, first, last):
    """ACK windows `first` to `last` (counted from 1) as each is written."""
    for count in range(first, last + 1):
        while len(line.written) < count:
            await asyncio.sleep(0)
        line.connection.acked()


@pytest.mark.anyio
async def test_a_frame_goes_a_window_at_a_time_each_after_the_ack_of_the_one_before():
    line = FakeLine()
    connection = line.connection = SerialConnection(line, 10)
    body = json.dumps({"jsonrpc": "2.0", "id": 123, "method": "x"})
    assert len(body) == 44  # five windows of at most 10 bytes
    task = asyncio.create_task(connection.send(body))
    for _ in range(20):
        await asyncio.sleep(0)
    assert len(line.written) == 1  # the second waits for the first's ACK
    connection.acked()
    connection.acked()  # one nobody waits for yet: dropped, it frees no window
    for _ in range(20):
        await asyncio.sleep(0)
    assert len(line.written) == 2
    await asyncio.gather(task, acking(line, 2, 5))
    assert b"".join(line.written) == b"\x1e44\n" + body.encode() + b"\n"
    assert line.written[0] == b"\x1e44\n" + body[:10].encode()
    assert [len(w) for w in line.written[1:]] == [10, 10, 10, 5]  # the last with its LF


@pytest.mark.anyio
async def test_a_probe_is_an_empty_frame_and_a_board_that_takes_no_frame_ends_the_session():
    line = FakeLine()
    connection = line.connection = SerialConnection(line, 240)
    await asyncio.gather(connection.frame(b""), acking(line, 1, 1))
    assert line.written == [b"\x1e0\n\n"]
    with pytest.raises(SerialLinkClosed) as silent:
        await connection.frame(b"{}", timeout=0.2)
    assert connection.closed and "took no frame" in str(silent.value)
    with pytest.raises(SerialLinkClosed):  # and nothing more is sent
        await connection.send("{}")
    assert len(line.written) == 2


def test_a_port_that_is_not_there_is_named_as_such(tmp_path):
    with pytest.raises(PortError) as missing:
        open_port(str(tmp_path / "ttyUSB9"), 115200)
    assert missing.value.missing and "is not there" in str(missing.value)


def test_a_port_another_program_holds_is_busy():
    master, slave = os.openpty()
    path = os.ttyname(slave)
    holder = serial.Serial(path, 115200, exclusive=True)  # mpremote, a terminal...
    try:
        with pytest.raises(PortError) as busy:
            open_port(path, 115200)
        assert not busy.value.missing and "busy" in str(busy.value)
    finally:
        holder.close()
        os.close(master)
        os.close(slave)
