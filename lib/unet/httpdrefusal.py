"""The requests unet.httpd answers itself (bad input, limits), as data: the server loads
this module at the first refusal, so a server whose clients behave keeps no heap for
these texts (the board's MCP endpoint forgets it with the rest of its code when idle)."""

import asyncio

from umcp.compat import get_logger

# Each by the number unet.httpd raises it with: (status, reason; %d: the figure given).
_REFUSALS = (
    (431, "line over %d bytes"),  # 0
    (400, "a request head must be UTF-8"),  # 1
    (400, "malformed request line"),  # 2
    (505, "unsupported HTTP version"),  # 3
    (400, "unsupported HTTP version"),  # 4: not HTTP at all
    (400, "the request target must be a path"),  # 5
    (431, "over %d header lines"),  # 6
    (400, "malformed header line"),  # 7
    (400, "bad Content-Length"),  # 8
    (411, "chunked request bodies are not taken: send Content-Length"),  # 9
    (413, "body over %d bytes"),  # 10
    (503, "busy: %d requests at once"),  # 11
)
_TEXT = (("Content-Type", "text/plain"),)
_BUSY = (("Content-Type", "text/plain"), ("Retry-After", "1"))

_log = get_logger("httpd")


async def refuse(server, connection, response, read_some, number, figure=None):
    """Answer refusal `number` on `connection` of HttpServer `server` with `response` (its
    unet.httpd.Response), then read some of what the client still sends with `read_some`
    (unet.httpd's), so that it gets to read the answer before the close. (unet.httpd loads
    this module: it hands in what it needs of it.)"""
    server.refused += 1
    server.served += 1
    status, reason = _REFUSALS[number]
    if figure is not None:
        reason = reason % figure
    _log.info("refused a request: %d %s", status, reason)
    try:
        await response.send(status, _BUSY if status == 503 else _TEXT, reason)
    except Exception:
        return
    await _discard(connection, read_some, max(4 * server.max_body, 65536))


async def _discard(connection, read_some, limit, timeout_s=0.25):
    """Read and drop what the client still sends (a refused body), so that closing does
    not reset the connection before it read the answer."""
    try:
        while limit > 0:
            connection.start = connection.end = 0
            count = await asyncio.wait_for(read_some(connection.reader, connection.buf, 0), timeout_s)
            if not count:
                return
            limit -= count
    except Exception:  # timeout, reset: done either way
        pass
