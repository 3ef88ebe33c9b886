# Small HTTP/1.1 client for the device: a streamed multipart POST (the vision upload),
# a JSON POST (the OTA check and activation) and a streamed GET (firmware download).
# One request per connection.
# Runs unchanged on CPython 3.11+ and MicroPython 1.24+.
import asyncio
import binascii
import os

from . import conn
from umcp.compat import const

_CHUNK = const(4096)  # bytes per socket write / read
_TAIL = const(256)  # bytes of an upload's file sent with its closing boundary
_MAX_BODY = const(16384)  # largest answer post_multipart keeps in memory
_REDIRECTS = (301, 302, 303, 307, 308)


async def _send_head(method, url, headers, fields, ca, timeout, body_start=b""):
    """Connect and send the request head, plus `body_start` in the same write (one
    segment rather than two small ones) -> (reader, writer); the rest is the caller's."""
    scheme, host, port, path = conn.parse_url(url)
    if scheme not in ("http", "https"):
        raise ValueError("not an HTTP URL: " + url)
    reader, writer = await conn.open_connection(host, port, conn.is_tls(scheme), ca, timeout)
    fields.append(("Connection", "close"))
    if headers:
        fields.extend(headers.items())
    try:
        head = conn.request_head(method, path, conn.host_header(scheme, host, port), fields)
        writer.write(head + body_start)
    except BaseException:
        await conn.close_quietly(writer)
        raise
    return reader, writer


class _Body:
    """Reads a response body piece by piece: Content-Length, chunked, or up to EOF."""

    def __init__(self, reader, headers):
        self._reader = reader
        self._chunked = headers.get("transfer-encoding", "").lower() == "chunked"
        self._line = conn.line_buffer() if self._chunked else None  # chunk sizes, trailers
        length = headers.get("content-length")
        self.length = None if self._chunked or length is None else int(length)
        self._left = self.length  # bytes left: of the body, or of the current chunk
        self._chunks_seen = False
        self._done = False

    async def read(self):
        """The next piece of the body; b"" at its end."""
        if self._done:
            return b""
        if self._chunked and not self._left:
            self._left = await self._next_chunk_size()
        if self._left == 0:
            self._done = True
            return b""
        data = await self._reader.read(_CHUNK if self._left is None else min(self._left, _CHUNK))
        if not data:
            if self._left is not None:
                raise EOFError("connection closed inside the HTTP body")
            self._done = True
        elif self._left is not None:
            self._left -= len(data)
        return data

    async def _next_chunk_size(self):
        if self._chunks_seen:
            await self._reader.readexactly(2)  # the CRLF after the previous chunk's data
        self._chunks_seen = True
        line = await conn.read_line(self._reader, self._line)
        size = int(line.split(";")[0].strip(), 16)
        if size == 0:  # last chunk: skip the trailers up to the blank line
            while await conn.read_line(self._reader, self._line):
                pass
        return size


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
    reader, writer = await _send_head("POST", url, headers, head, ca, timeout, before)
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
    body = _Body(reader, reply_headers)
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
    reader, writer = await _send_head("POST", url, headers, head, ca, timeout, data)
    try:
        await writer.drain()
        return await _small_answer(reader)
    finally:
        await conn.close_quietly(writer)


def get_stream(url, headers=None, timeout=30, ca=None, max_redirects=2):
    """`async for chunk in get_stream(url)`: the body of a GET, piece by piece.

    Follows up to `max_redirects` redirects; a final status other than 200 raises
    conn.HttpError. `timeout` bounds the connection and each read. After `await
    stream.open()` (the head only) or the first chunk, `.length` is the total size when
    the server announced it (else None).
    Use `async with get_stream(url) as stream:` to release the socket when stopping early."""
    return _Download(url, headers, timeout, ca, max_redirects)


class _Download:
    def __init__(self, url, headers, timeout, ca, max_redirects):
        self.url = url
        self.length = None
        self._headers = headers
        self._timeout = timeout
        self._ca = ca
        self._max_redirects = max_redirects
        self._writer = None
        self._body = None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()

    def __aiter__(self):
        return self

    async def open(self):
        """Connect and read the response head now, without any of the body: `.length` is
        then the announced size (None if unknown), for a caller that must check it before
        taking the first byte. Iterating opens by itself when this was not called."""
        if self._body is None:
            try:
                await asyncio.wait_for(self._open(), self._timeout)
            except BaseException:
                await self.close()
                raise
        return self

    async def __anext__(self):
        try:
            if self._body is None:
                await asyncio.wait_for(self._open(), self._timeout)
            data = await asyncio.wait_for(self._body.read(), self._timeout)
        except BaseException:
            await self.close()
            raise
        if not data:
            await self.close()
            raise StopAsyncIteration
        return data

    async def close(self):
        if self._writer is not None:
            await conn.close_quietly(self._writer)
            self._writer = None

    async def _open(self):
        for _ in range(self._max_redirects + 1):
            reader, self._writer = await _send_head("GET", self.url, self._headers, [], self._ca,
                                                    self._timeout)
            status, reason, headers = await conn.read_response_head(reader)
            if status == 200:
                self._body = _Body(reader, headers)
                self.length = self._body.length
                return
            await self.close()
            if status not in _REDIRECTS or "location" not in headers:
                raise conn.HttpError(status, reason)
            self.url = _resolve(self.url, headers["location"])
        raise conn.HttpError(status, "too many redirects")


def _resolve(url, location):
    """Absolute URL of a redirect target (absolute URL or absolute path)."""
    if "://" in location:
        return location
    if not location.startswith("/"):
        raise ValueError("unsupported redirect: " + location)
    scheme, host, port, _ = conn.parse_url(url)
    return "%s://%s:%d%s" % (scheme, host, port, location)
