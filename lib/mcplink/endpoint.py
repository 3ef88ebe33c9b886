"""The MCP endpoint link (MCP 接入点): the board as a tool provider of a xiaozhi assistant.

An agent on xiaozhi.me, or a self-hosted xiaozhi-esp32-server with mcp-endpoint-server,
hands out a URL (wss://api.xiaozhi.me/mcp/?token=..., ws://host:8004/mcp_endpoint/mcp/?
token=...). The board connects out to it and serves the application's McpServer there as
plain JSON-RPC 2.0 in text frames: no envelope, no hello. The assistant's side sends
initialize, notifications/initialized, tools/list (following nextCursor) and tools/call,
for every voice session of the agent; the relay rewrites their ids into strings. One
EndpointLink per URL, each its own Session of the server: the tools it is offered (by
default all but the owner's user-only ones), paging, notifications, cancellation.
Reconnects as every link does (unet.reconnect), pings and the dead-link watchdog of
unet.ws, and never logs the token: logs and reports show masked(url).
Runs on CPython and MicroPython."""

import asyncio
import gc

from umcp.compat import call_then_forget, const, forget_modules, get_logger
from unet.reconnect import Reconnecting, raise_if_cancelled
from unet.ws import CLOSE_NORMAL, ConnectionClosed, MessageDropped
from unet.ws import connect as ws_connect

_log = get_logger("endpoint")

# RFC 6455 7.4.1: 1003 for a kind of data the endpoint cannot take (JSON-RPC is text);
# 1008, policy: how mcp-endpoint-server turns away a missing or wrong token.
_CLOSE_UNSUPPORTED = const(1003)
_CLOSE_POLICY = const(1008)
# Log notifications go out only once the client asked (logging/setLevel): the assistant's
# server drops them, and mcp-endpoint-server logs an error for each one it cannot route.
_NO_LOGS = const(8)  # above every level of umcp.server.LOG_LEVELS


def masked(url):
    """`url` with the values of its query (the token) replaced by ***: what logs and
    reports may show."""
    base, sep, query = str(url).partition("?")
    if not sep:
        return url
    parts = []
    for item in query.split("&"):
        name, equals, _ = item.partition("=")
        parts.append(name + "=***" if equals else "***")
    return base + "?" + "&".join(parts)


def offered_tools(choice=None):
    """offered(tool) for the endpoint's session: `choice` None offers every tool but the
    user-only ones (they stay with the owner's console); else a list of tool names and of
    name prefixes ending in "*" or "." (a user-only tool named there is offered too)."""
    if choice is None:
        return _not_user_only
    if not isinstance(choice, list) or not all(isinstance(entry, str) and entry for entry in choice):
        raise ValueError("links.endpoint.tools must be a list of tool names or prefixes")
    # Sliced once: a listing allocates nothing per tool.
    prefixes = [entry[:-1] if entry[-1] == "*" else entry for entry in choice if entry[-1] in "*."]

    def offered(tool):
        name = tool.name
        if name in choice:
            return True
        for prefix in prefixes:
            if name.startswith(prefix):
                return True
        return False

    return offered


def _not_user_only(tool):
    return not tool.user_only


class EndpointLink(Reconnecting):
    """One MCP endpoint: connect out to `url`, serve the server's tools there, reconnect.

    An application service: run() until stop() or cancellation, never raising otherwise
    (unet.reconnect.Reconnecting: connected, attempts, last_delay, dropped). `refused`:
    why the endpoint last turned the board away (an HTTP status or a 1008 close), else
    None; `status()` for reports. Timings in seconds."""

    log = _log

    def __init__(self, server, url, device_id=None, user_agent=None, ca=None, max_message=32768,
                 tools=None, connect_timeout=10, ping_interval=30, idle_timeout=75,
                 backoff_min=1, backoff_max=60, stable_after=30):
        try:
            parts = call_then_forget("unet.url", "parse_url", url)  # kept: reconnections load no URL code
        except ValueError as e:  # its words end quoting the URL: never the token
            raise ValueError("%s: %s" % (str(e).split(":")[0], masked(url)))
        if parts[0] not in ("ws", "wss"):
            raise ValueError("not a WebSocket URL (want ws:// or wss://): " + masked(url))
        Reconnecting.__init__(self, backoff_min, backoff_max, stable_after)
        self.url = url
        self._parts = parts
        self.who = masked(url) + ": "  # what the log says of this link
        self.headers = {}
        if user_agent:
            self.headers["User-Agent"] = user_agent
        if device_id:
            self.headers["Device-Id"] = device_id
        self.ca = ca
        self.max_message = max_message
        self.connect_timeout = connect_timeout
        self.ping_interval = ping_interval
        self.idle_timeout = idle_timeout
        self.refused = None
        self.ws = None
        self.mcp = server.session(self._send, max_message=max_message, offered=offered_tools(tools))
        self.mcp.min_log_level = _NO_LOGS

    def status(self):
        """What get_system_info reports of this endpoint (the URL masked)."""
        status = {"url": self.who[:-2], "connected": self.connected.is_set(), "attempts": self.attempts}
        if self.refused is not None:
            status["refused"] = self.refused
        return status

    async def _session(self):
        try:
            ws = await ws_connect(self._parts, self.headers, self.max_message, self.ca,
                                  self.connect_timeout)
        except asyncio.TimeoutError:
            raise OSError("no answer to the upgrade within %s s" % self.connect_timeout)
        finally:
            forget_modules("unet.conn")  # the connection's code (unet.wshandshake's): not resident
        self.ws = ws
        raise_if_cancelled()
        if self.stopping:  # stop() came while connecting
            await ws.close(CLOSE_NORMAL, "board stopping")
            return
        _log.info("%sconnected", self.who)
        self._up()
        keepalive = asyncio.create_task(ws.keep_alive(self.ping_interval, self.idle_timeout))
        try:
            while True:
                # The message path every transport shares (ws.receive, Session.receive): a
                # message the heap cannot hold, or a MemoryError on its way, costs that
                # message only, answered with its id where it can be read.
                try:
                    text, data = await ws.receive()
                except MessageDropped as e:
                    head = bytes(e.head)
                    gc.collect()
                    await self.mcp.refuse(head, e.reason)
                    continue
                if not text:
                    _log.warning("%sa binary frame of %d bytes, not MCP: closing 1003", self.who, len(data))
                    await ws.close(_CLOSE_UNSUPPORTED, "MCP is text")
                    return
                self.refused = None  # it talks to us: whatever it refused before, it took us now
                await self.mcp.receive(data)  # not JSON-RPC: -32700/-32600 to it, logged once
                data = None  # not held while the next one is awaited
        finally:
            keepalive.cancel()

    def _lost(self, error):
        """One log line saying why the connection ended. A refusal (a wrong or expired
        token, a wrong path: 4xx, or a 1008 close as mcp-endpoint-server's) is not helped
        by retrying soon: the next attempts wait the longest pause."""
        status = getattr(error, "status", 0)
        if 400 <= status < 500 and status not in (408, 429) or getattr(error, "code", 0) == _CLOSE_POLICY:
            self.refused = str(error)
            self._up_since = None  # however long it took to say so: no fresh start
            self.backoff.slow_down()
            _log.error("%srefused: %s (check the URL and its token)", self.who, error)
        else:
            _log.warning("%slink lost: %s %s", self.who, type(error).__name__, error)

    async def _close(self):
        ws = self.ws
        if ws is not None:
            await ws.close(CLOSE_NORMAL, "board stopping")

    async def _hang_up(self):
        self.connected.clear()
        ws, self.ws = self.ws, None
        if ws is not None:
            await ws.abort()

    async def _send(self, pieces):
        """The session's sender: one JSON-RPC message as it is, in one text frame (its
        pieces written in place, never joined)."""
        ws = self.ws
        if ws is None or not self.connected.is_set():
            self._drop()
            return
        try:
            await ws.send(pieces)
        except ConnectionClosed:  # the connection is ending: run() hangs up and accounts
            self._drop()
