"""The WebSocket opening handshake (RFC 6455 4.1), client side: the connection and the
upgrade request, checked answer and all. unet.ws.connect() loads it for one connection
and drops it again: a link runs it once per connection, and a board without PSRAM needs
that heap while the connection lasts."""

import asyncio
import binascii
import hashlib
import os

from . import conn
from umcp.compat import call_then_forget, const

_GUID = const(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11")


def accept_key(key):
    """Sec-WebSocket-Accept the server must answer for our Sec-WebSocket-Key."""
    return binascii.b2a_base64(hashlib.sha1(key + _GUID).digest()).strip()


async def open_stream(url, headers, ca, timeout):
    """(reader, writer) of a connection to a ws:// or wss:// URL that the server upgraded
    to WebSocket; `url`: the URL, or its parts as unet.url.parse_url() gives them (a link
    splits its URL once: its reconnections load no URL code); `headers`: a dict of extra
    headers, or None. Raises conn.HttpError when the server refuses the upgrade (e.g. 401)."""
    if isinstance(url, str):
        url = call_then_forget("unet.url", "parse_url", url)
    scheme, host, port, path = url
    if scheme not in ("ws", "wss"):
        raise ValueError("not a WebSocket URL: %s://%s" % (scheme, host))
    reader, writer = await conn.open_connection(host, port, conn.is_tls(scheme), ca, timeout)
    try:
        host = conn.host_header(scheme, host, port)
        await asyncio.wait_for(_handshake(reader, writer, host, path, headers or {}), timeout)
    except BaseException:  # refused, timed out or cancelled: release the socket
        await conn.close_quietly(writer)
        raise
    return reader, writer


async def _handshake(reader, writer, host, path, headers):
    key = binascii.b2a_base64(os.urandom(16)).strip()
    fields = [
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", key.decode()),
        ("Sec-WebSocket-Version", "13"),
    ]
    fields.extend(headers.items())
    writer.write(conn.request_head("GET", path, host, fields))
    await writer.drain()
    status, reason, reply = await conn.read_response_head(reader)
    if status != 101:
        raise conn.HttpError(status, reason)
    if reply.get("upgrade", "").lower() != "websocket":
        raise ValueError("server did not upgrade to WebSocket")
    if reply.get("sec-websocket-accept", "").encode() != accept_key(key):
        raise ValueError("bad Sec-WebSocket-Accept")
