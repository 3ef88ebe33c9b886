# The MCP endpoint link (MCP 接入点): the board as a tool provider of a xiaozhi assistant.
#
# An agent on xiaozhi.me, or a self-hosted xiaozhi-esp32-server with mcp-endpoint-server,
# hands out a URL (wss://api.xiaozhi.me/mcp/?token=..., ws://host:8004/mcp_endpoint/mcp/?
# token=...). The board connects out to it and serves the application's McpServer there as
# plain JSON-RPC 2.0 in text frames: no envelope, no hello. The assistant's side sends
# initialize, notifications/initialized, tools/list (following nextCursor) and tools/call,
# for every voice session of the agent; the relay rewrites their ids into strings. One
# EndpointLink per URL, each its own Session of the server: the tools it is offered (by
# default all but the owner's user-only ones), paging, notifications, cancellation.
# Reconnects with the backoff every link shares (unet.reconnect), pings and the dead-link
# watchdog of unet.ws, and never logs the token: logs and reports show masked(url).
# Runs on CPython and MicroPython.
import asyncio

from umcp.compat import const, get_logger, ticks_diff, ticks_ms
from unet.reconnect import Backoff, raise_if_cancelled
from unet.conn import HttpError, parse_url
from unet.ws import CLOSE_NORMAL, ConnectionClosed
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
    base, sep, query = url.partition("?")
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
    name prefixes ending in "." (a user-only tool named there is offered too)."""
    if choice is None:
        return _not_user_only
    if not isinstance(choice, (list, tuple)):
        raise ValueError("mcp_endpoint_tools must be a list of tool names or prefixes")
    for entry in choice:
        if not isinstance(entry, str) or not entry:
            raise ValueError("mcp_endpoint_tools must be a list of tool names or prefixes")
    choice = tuple(choice)

    def offered(tool):
        name = tool.name
        for entry in choice:
            if name == entry or entry[-1] == "." and name.startswith(entry):
                return True
        return False

    return offered


def _not_user_only(tool):
    return not tool.user_only


class EndpointLink:
    """One MCP endpoint: connect out to `url`, serve the server's tools there, reconnect.

    An application service: run() until stop() or cancellation, never raising otherwise.
    `connected` (asyncio.Event) is set while a connection is up; `attempts`, `last_delay`,
    `dropped` (MCP messages sent while down, since the last connection), `refused` (why the
    endpoint last turned the board away: an HTTP status or a 1008 close, else None);
    `status()` for reports. Timings in seconds."""

    def __init__(self, server, url, device_id=None, user_agent=None, ca=None, max_message=32768,
                 tools=None, connect_timeout=10, ping_interval=30, idle_timeout=75,
                 backoff_min=1, backoff_max=60, stable_after=30):
        try:
            scheme = parse_url(url)[0]
        except ValueError as e:  # its words quote the URL: never the token
            raise ValueError(str(e).replace(repr(url), repr(masked(url))).replace(url, masked(url)))
        if scheme not in ("ws", "wss"):
            raise ValueError("not a WebSocket URL (want ws:// or wss://): " + masked(url))
        self.url = url
        self.name = masked(url)
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
        self.backoff = Backoff(backoff_min, backoff_max)
        # A connection must last this long before the backoff starts over: an endpoint that
        # accepts and then drops the board at once is not hammered every second.
        self.stable_after = stable_after
        self.connected = asyncio.Event()
        self.attempts = 0
        self.last_delay = 0
        self.dropped = 0
        self.refused = None
        self._ws = None
        self._up_since = None
        self._stopping = False
        self._stopped = asyncio.Event()
        self.mcp = server.session(self._send, max_message=max_message, offered=offered_tools(tools))
        self.mcp.min_log_level = _NO_LOGS

    def status(self):
        """What get_system_info reports of this endpoint (the URL masked)."""
        status = {"url": self.name, "connected": self.connected.is_set(), "attempts": self.attempts}
        if self.refused is not None:
            status["refused"] = self.refused
        return status

    async def run(self):
        """Connect, serve, reconnect: forever, until stop() or cancellation."""
        while not self._stopping:
            raise_if_cancelled()
            self.attempts += 1
            try:
                await self._session()
            except Exception as e:  # whatever ended the connection, the link carries on
                if not self._stopping:
                    self._lost(e)
            finally:
                await self._hang_up()
                self._cancel_owed()
            if self._up_since is not None:
                # Not after a refusal, however long the endpoint took to say it.
                if self.refused is None and ticks_diff(ticks_ms(), self._up_since) >= self.stable_after * 1000:
                    self.backoff.reset()
                self._up_since = None
            if self._stopping:
                break
            self.last_delay = self.backoff.next()
            _log.info("%s: reconnecting in %d ms", self.name, int(self.last_delay * 1000))
            await self._pause(self.last_delay)

    async def stop(self):
        """Close the connection normally and make run() return."""
        self._stopping = True
        self._stopped.set()
        ws = self._ws
        if ws is not None:
            await ws.close(CLOSE_NORMAL, "board stopping")

    # -- one connection

    async def _session(self):
        try:
            ws = await ws_connect(self.url, self.headers, self.max_message, self.ca,
                                  self.connect_timeout)
        except asyncio.TimeoutError:
            raise OSError("no answer to the upgrade within %s s" % self.connect_timeout)
        self._ws = ws
        raise_if_cancelled()
        if self._stopping:  # stop() came while connecting
            await ws.close(CLOSE_NORMAL, "board stopping")
            return
        self._up()
        keepalive = asyncio.create_task(ws.keep_alive(self.ping_interval, self.idle_timeout))
        try:
            while await self._serve(await ws.recv()):
                pass
        finally:
            keepalive.cancel()

    async def _serve(self, message):
        """One message from the endpoint; False when the connection must end."""
        if not isinstance(message, str):
            _log.warning("%s sent a binary frame of %d bytes: MCP travels in text frames; "
                         "closing (1003)", self.name, len(message))
            await self._ws.close(_CLOSE_UNSUPPORTED, "MCP travels in text frames")
            return False
        self.refused = None  # it talks to us: whatever it refused before, it took us now
        await self.mcp.handle(message)  # not JSON-RPC: -32700/-32600 to it, logged once
        return True

    def _up(self):
        self._up_since = ticks_ms()
        self.connected.set()
        _log.info("%s: connected", self.name)
        if self.dropped:
            _log.warning("%s: %d MCP message(s) were dropped while the link was down",
                         self.name, self.dropped)
            self.dropped = 0

    def _lost(self, error):
        """One log line saying why the connection ended (the URL masked)."""
        if isinstance(error, HttpError) and 400 <= error.status < 500 and error.status not in (408, 429):
            self._refuse("HTTP %d %s" % (error.status, error.reason))
        elif isinstance(error, ConnectionClosed) and error.code == _CLOSE_POLICY:
            self._refuse("closed %d %s" % (error.code, error.reason))
        elif isinstance(error, ConnectionClosed):
            _log.warning("%s: link lost: closed %d %s", self.name, error.code, error.reason)
        else:
            _log.warning("%s: link lost: %s %s", self.name, type(error).__name__, error)

    def _refuse(self, why):
        """The endpoint turned the board away (a wrong or expired token, a wrong path):
        retrying soon cannot help, so the next attempts wait the longest pause."""
        self.refused = why
        self.backoff.slow_down()
        _log.error("%s refused the board: %s (check the URL and its token)", self.name, why)

    async def _hang_up(self):
        self.connected.clear()
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.abort()

    def _cancel_owed(self):
        """Answers owed on a connection that ended can reach no one: the calls are
        cancelled (as a client's cancellation would) and counted in one line."""
        owed = self.mcp.cancel_calls()
        if owed:
            _log.warning("%s: connection ended: cancelled %d tool call(s) it was owed a reply "
                         "for", self.name, owed)

    async def _pause(self, seconds):
        """Sleep, cut short by stop()."""
        try:
            await asyncio.wait_for(self._stopped.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    # -- traffic

    async def _send(self, pieces):
        """The session's sender: one JSON-RPC message as it is, in one text frame (its
        pieces written in place, never joined)."""
        ws = self._ws
        if ws is None or not self.connected.is_set():
            self._drop()
            return
        try:
            await ws.send(pieces)
        except ConnectionClosed:  # the connection is ending: run() hangs up and accounts
            self._drop()

    def _drop(self):
        """Count an MCP message that finds the link down (a background task's
        notification): logged once when dropping starts, the total when it is up again."""
        self.dropped += 1
        if self.dropped == 1:
            _log.warning("%s: link down: MCP messages are dropped until it is back", self.name)
