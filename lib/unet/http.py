"""Small HTTP/1.1 client for the device: a streamed multipart POST (the vision upload),
a JSON POST (the OTA check and activation); the streamed GET (firmware download) is
unet.download's, which get_stream() here loads. One request per connection.
Runs unchanged on CPython 3.11+ and MicroPython 1.24+."""

import asyncio
import binascii
import os

from . import conn
from .httpcore import Body, send_head
from umcp.compat import const

_CHUNK = const(4096)  # bytes per socket write
_TAIL = const(256)  # bytes of an upload's file sent with its closing boundary
_MAX_BODY = const(16384)  # largest answer post_multipart keeps in memory


def _quote(name):
    return name.replace('"', "%22")


async def post_multipart(url, fields, file, headers=None, timeout=30, ca=None):
    """POST a multipart/form-data body -> (status, body text).

    fields: [(name, str)] sent first, in order; file: (field, filename, mime, bytes-like).
    The body is streamed: the file is written from a memoryview in chunks, never copied.
    Any status is returned; network and protocol failures raise."""
    return await asyncio.wait_for(_post_multipart(url, fields, file, headers, ca, timeout),
                                  timeout)


async def _post_multipart(url, fields, file, headers, ca, timeout):
    boundary = "umcp" + binascii.hexlify(os.urandom(12)).decode()
    parts = []
    for name, value in fields:
        parts.append('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n'
                     % (boundary, _quote(name), value))
    field, filename, mime, data = file
    parts.append('--%s\r\nContent-Disposition: form-data; name="%s"; filename="%s"\r\n'
                 "Content-Type: %s\r\n\r\n" % (boundary, _quote(field), _quote(filename), mime))
    before = "".join(parts).encode()
    after = ("\r\n--%s--\r\n" % boundary).encode()
    data = memoryview(data)
    head = [("Content-Type", "multipart/form-data; boundary=" + boundary),
            ("Content-Length", len(before) + len(data) + len(after))]
    reader, writer = await send_head("POST", url, headers, head, ca, timeout, before)
    try:
        # The closing boundary leaves with the last few bytes of the file: a small segment
        # of its own could wait for the server's delayed ACK (Nagle) before the answer
        # comes. Only those few are copied (a whole last chunk would be copied twice).
        last = max(0, len(data) - _TAIL)
        for start in range(0, last, _CHUNK):
            writer.write(data[start : min(start + _CHUNK, last)])
            await writer.drain()
        writer.write(bytes(data[last:]) + after)
        await writer.drain()
        return await _small_answer(reader)
    finally:
        await conn.close_quietly(writer)


async def _small_answer(reader):
    """(status, body text) of a response whose body is at most _MAX_BODY bytes."""
    status, reason, reply_headers = await conn.read_response_head(reader)
    body = Body(reader, reply_headers)
    if body.length is not None and body.length > _MAX_BODY:
        raise ValueError("HTTP answer too big: %d bytes" % body.length)
    pieces = []
    size = 0
    while True:
        piece = await body.read()
        if not piece:
            break
        size += len(piece)
        if size > _MAX_BODY:
            raise ValueError("HTTP answer too big")
        pieces.append(piece)
    return status, b"".join(pieces).decode()


async def post_json(url, text, headers=None, timeout=30, ca=None):
    """POST `text` (a JSON document, str) as application/json -> (status, body text).

    Any status is returned; network and protocol failures raise; an answer over 16 KiB
    raises ValueError."""
    return await asyncio.wait_for(_post_json(url, text, headers, ca, timeout), timeout)


async def _post_json(url, text, headers, ca, timeout):
    data = text.encode()
    head = [("Content-Type", "application/json"), ("Content-Length", len(data))]
    if headers:
        headers = dict(headers)
        for key in list(headers):
            if key.lower() in ("content-type", "content-length"):
                del headers[key]
    reader, writer = await send_head("POST", url, headers, head, ca, timeout, data)
    try:
        await writer.drain()
        return await _small_answer(reader)
    finally:
        await conn.close_quietly(writer)


def get_stream(url, headers=None, timeout=30, ca=None, max_redirects=2):
    """unet.download.get_stream (loaded here: a caller that only downloads imports that
    module itself, and none of the POST code above)."""
    from .download import get_stream

    return get_stream(url, headers, timeout, ca, max_redirects)
