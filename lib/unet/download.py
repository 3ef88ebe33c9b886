"""The streamed GET of the HTTP client (a firmware image's download): the body piece by
piece, redirects followed. Apart from unet.http's POSTs so that a download loads none
of their code. Runs unchanged on CPython 3.11+ and MicroPython 1.24+."""

import asyncio

from . import conn
from .httpcore import Body, send_head
from umcp.compat import call_then_forget

_REDIRECTS = (301, 302, 303, 307, 308)


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
            reader, self._writer = await send_head("GET", self.url, self._headers, [], self._ca,
                                                    self._timeout)
            status, reason, headers = await conn.read_response_head(reader)
            if status == 200:
                self._body = Body(reader, headers)
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
    scheme, host, port, _ = call_then_forget("unet.url", "parse_url", url)
    return "%s://%s:%d%s" % (scheme, host, port, location)
