"""The start of a WebSocket session (XiaozhiLink): the connection, the device's hello and
the server's. Loaded for each connection and dropped once the session is up: a link
opens a session once a connection, and the heap serves the session better without it."""

import asyncio

from umcp.compat import dumps
from unet.reconnect import raise_if_cancelled
from unet.ws import CLOSE_NORMAL, MessageDropped
from unet.ws import connect as ws_connect


async def open_session(link, parse, log):
    """The WebSocket of `link`'s session once both hellos are said (the link's session is
    up), or None when stop() came while connecting. `parse`: xiaozhi.link's message
    parser; `log`: its logger."""
    link.ws = ws = await ws_connect(link.url, link.headers, link.message_limit(), link.ca,
                                     link.hello_timeout)
    if link.stopping:  # stop() came while connecting
        await ws.close(CLOSE_NORMAL, "device stopping")
        return None
    await ws.send(dumps(link.hello_message()))
    try:
        hello = await asyncio.wait_for(_server_hello(ws, parse, log), link.hello_timeout)
    except asyncio.TimeoutError:
        raise OSError("no server hello within %s s" % link.hello_timeout)
    raise_if_cancelled()
    link.session_up(hello)
    return ws


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
