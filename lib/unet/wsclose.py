"""The end of a WebSocket connection (RFC 6455 5.5.1, 7): the close frame both ways, the
closing handshake as unet.ws's WebSocket closes a connection or fails one (1002, 1007,
1009), and its answer to the peer's close frame. unet.ws loads this module when a
connection ends and forgets it after: a connection that carries messages keeps no heap
for it. It works through the WebSocket's public names: closed, reader, send_close(),
wait_close(), finish()."""

import asyncio
import struct

from umcp.compat import const
from umcp.jsonin import refuse_invalid_utf8

_PROTOCOL_ERROR = const(1002)  # unet.ws's CLOSE_PROTOCOL_ERROR, CLOSE_NO_STATUS, CLOSE_INVALID_DATA
_NO_STATUS = const(1005)
_INVALID_DATA = const(1007)
_MAX_REASON = const(123)  # a close frame is a control frame: 125 bytes, 2 for the code
_DISCARD = const(512)  # bytes read at a time while skipping what a failing peer still sends
_CLOSE_WAIT_S = const(2)  # how long a closing handshake may take before we hang up


class BadClose(Exception):
    """A malformed close frame from the peer: the connection fails with `code`."""

    def __init__(self, code, reason):
        super().__init__(reason)
        self.code = code
        self.reason = reason


def close_payload(code, reason=""):
    """The payload of a close frame: `code` and as much of `reason` as a control frame
    holds, cut at a character boundary (1005: none at all)."""
    if code == _NO_STATUS:
        return b""
    reason = reason.encode()
    end = min(len(reason), _MAX_REASON)
    while end < len(reason) and reason[end] & 0xC0 == 0x80:  # never split a UTF-8 character
        end -= 1
    return struct.pack("!H", code) + reason[:end]


def sendable(code):
    """Whether a close code may appear on the wire (RFC 6455 7.4, IANA registry): 1004-1006
    and 1015 never do, the rest below 3000 is unassigned, 5000 and up undefined."""
    return 1000 <= code <= 1014 and not 1004 <= code <= 1006 or 3000 <= code <= 4999


def parse_close(data):
    """Close frame payload -> (code, reason); BadClose on a malformed one (1002, or 1007
    for a reason that is not UTF-8)."""
    if not data:
        return _NO_STATUS, ""
    if len(data) < 2:
        raise BadClose(_PROTOCOL_ERROR, "bad close frame")
    code = struct.unpack("!H", data[:2])[0]
    if not sendable(code):
        raise BadClose(_PROTOCOL_ERROR, "close code %d may not be sent" % code)
    try:
        reason = str(data[2:], "utf-8")
        if len(reason) != len(data) - 2:  # more than ASCII
            refuse_invalid_utf8(data[2:])
    except UnicodeError:
        raise BadClose(_INVALID_DATA, "close reason is not UTF-8")
    return code, reason


async def closed_by_peer(ws, data):
    """The peer sent a close frame with payload `data`: echo its code unless ours went
    out first, and end the connection. Returns (code, reason): what it closed with, or
    for a malformed frame the code to fail it with (the connection is still open then)."""
    try:
        code, reason = parse_close(data)
    except BadClose as e:
        return e.code, e.reason
    await ws.send_close(close_payload(code, reason))  # nothing if ours went out first
    await ws.finish(code, reason)
    return code, reason


async def close(ws, code, reason):
    """WebSocket.close(): send our close frame, wait briefly for the peer's, hang up.
    ValueError for a code that may not be sent."""
    if code != _NO_STATUS and not sendable(code):
        raise ValueError("close code %d may not be sent" % code)
    if not ws.closed:
        await _hang_up_after(ws, _close_handshake(ws, code, reason), code, reason)


async def fail(ws, code, reason):
    """The peer broke the protocol: close with `code` without waiting for its answer,
    reading (never storing) what it still sends until it hangs up."""
    await _hang_up_after(ws, _fail_handshake(ws, code, reason), code, reason)


async def _close_handshake(ws, code, reason):
    await ws.send_close(close_payload(code, reason))
    await ws.wait_close()


async def _fail_handshake(ws, code, reason):
    await ws.send_close(close_payload(code, reason))
    # Give the peer the chance to read our close frame before the socket goes:
    # skip (never store) whatever it still sends until it hangs up.
    while await ws.reader.read(_DISCARD):
        pass


async def _hang_up_after(ws, handshake, code, reason):
    # A peer may never answer, and a send stuck on a dead network may hold the send
    # lock: the handshake gets a bounded time, then unsent data is dropped.
    try:
        await asyncio.wait_for(handshake, _CLOSE_WAIT_S)
        abort = False
    except Exception:
        abort = True
    await ws.finish(code, reason, abort)
