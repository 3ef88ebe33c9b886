"""What every request of the HTTP client (unet.http, unet.download) shares: the connection
and the request head, and the response body read piece by piece. Loaded with them only.
Runs unchanged on CPython 3.11+ and MicroPython 1.24+."""

from . import conn
from umcp.compat import call_then_forget, const

_CHUNK = const(4096)  # bytes per socket read


async def send_head(method, url, headers, fields, ca, timeout, body_start=b""):
    """Connect and send the request head, plus `body_start` in the same write (one
    segment rather than two small ones) -> (reader, writer); the rest is the caller's."""
    scheme, host, port, path = call_then_forget("unet.url", "parse_url", url)
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


class Body:
    """Reads a response body piece by piece: Content-Length, chunked, or up to EOF."""

    def __init__(self, reader, headers):
        self._reader = reader
        self._chunked = headers.get("transfer-encoding", "").lower() == "chunked"
        self._line = conn.line_buffer() if self._chunked else None  # chunk sizes, trailers
        length = headers.get("content-length")
        self.length = None if self._chunked or length is None else _size(length, 10)
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
        size = _size(line.split(";")[0], 16)
        if size == 0:  # last chunk: skip the trailers up to the blank line
            while await conn.read_line(self._reader, self._line):
                pass
        return size


def _size(text, base):
    """A Content-Length (`base` 10) or a chunk's size (16): digits only. int() would take
    a sign, and a negative size would read the rest of the stream as one piece."""
    text = text.strip()
    digits = "0123456789abcdefABCDEF" if base == 16 else "0123456789"
    if text and not [c for c in text if c not in digits]:
        return int(text, base)
    raise ValueError("bad HTTP %s" % ("chunk size" if base == 16 else "Content-Length"))
