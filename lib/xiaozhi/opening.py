"""The start of a WebSocket session (XiaozhiLink), once the link has connected: the
device's hello and the server's. Loaded for each connection after the connection's own
code (unet.wshandshake, unet.conn) is gone, and dropped once the session is up: the two
are never on the heap together, and the heap serves the session better without either."""

import asyncio

from umcp.compat import dumps
from unet.reconnect import raise_if_cancelled
from unet.ws import MessageDropped


async def open_session(link, ws, parse, log):
    """Both hellos said on `ws` (`link`'s new connection): the link's session is up.
    `parse`: xiaozhi.link's message parser; `log`: its logger."""
    await ws.send(dumps(link.hello_message()))
    try:
        hello = await asyncio.wait_for(_server_hello(ws, parse, log), link.hello_timeout)
    except asyncio.TimeoutError:
        raise OSError("no server hello within %s s" % link.hello_timeout)
    raise_if_cancelled()
    link.session_up(hello)


async def _server_hello(ws, parse, log):
    while True:
        try:
            text, data = await ws.receive()
        except MessageDropped:
            text = False
        message = parse(data)[0] if text else None
        data = None
        if message is not None and message.get("type") == "hello":
            return message
        log.warning("ignored a message before the server hello")
