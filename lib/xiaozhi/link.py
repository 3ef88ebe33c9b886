# The xiaozhi link: the device's session with a xiaozhi backend, over one of two transports.
#
# Link is the interface and what both transports share: run() connects, says hello, waits
# for the server's hello and its session id, then carries MCP both ways inside
# {"session_id","type":"mcp","payload"} envelopes, routes system and alert messages to
# callbacks, and after any loss reconnects after an exponential backoff with jitter.
# XiaozhiLink (here) is the WebSocket transport: pings keep the channel alive, silence
# longer than idle_timeout counts as a dead channel. MqttLink (xiaozhi/mqtt_link.py) is
# the MQTT+UDP one. Runs on CPython and MicroPython.
import asyncio
import gc
import random

from umcp.compat import const, dumps, get_logger, iscoroutine, ticks_diff, ticks_ms
from umcp.jsonin import loads, member
from unet.conn import parse_url
from unet.ws import CLOSE_NORMAL, ConnectionClosed, MessageDropped
from unet.ws import connect as ws_connect

_log = get_logger("xiaozhi")

_PAYLOAD = const(b"payload")  # the envelope member that holds the MCP message

AUDIO_PARAMS = {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60}


def bearer(token):
    """Authorization value; like the reference, a bare token gets the "Bearer " scheme."""
    return token if " " in token else "Bearer " + token


class Backoff:
    """Exponential backoff with jitter: each delay is drawn from [base/2, base], and the
    base doubles from `minimum` up to `maximum` (seconds) until reset()."""

    def __init__(self, minimum, maximum):
        self.minimum = minimum
        self.maximum = maximum
        self._base = minimum

    def next(self):
        base = self._base
        self._base = min(base * 2, self.maximum)
        return base * (0.5 + random.getrandbits(16) / 131072)

    def reset(self):
        self._base = self.minimum


class Link:
    """One xiaozhi session with reconnection; a transport supplies _session(), _hang_up(),
    _close() and _send_frame(pieces).

    Every transport has: run(), stop(), connected (asyncio.Event), session_id, attempts,
    last_delay, and calls on_system(message) / on_alert(message)."""

    transport = None  # "websocket" or "udp", as the hello says

    def __init__(self, server, device_id, client_id, protocol_version=1, ca=None,
                 max_message=32768, on_system=None, on_alert=None, hello_timeout=10,
                 idle_timeout=120, backoff_min=1, backoff_max=60, stable_after=30):
        self.server = server
        self.device_id = device_id
        self.client_id = client_id
        self.protocol_version = protocol_version
        self.ca = ca
        # The largest incoming message (bytes), or a function giving it as each session
        # starts (the application's: what the heap can hold then); initialize announces it.
        self.max_message = max_message
        self.on_system = on_system
        self.on_alert = on_alert
        self.hello_timeout = hello_timeout
        self.idle_timeout = idle_timeout
        self.backoff = Backoff(backoff_min, backoff_max)
        # A session must last this long (seconds) before the backoff starts over: a server
        # that answers hello and then drops us at once is not hammered every second.
        self.stable_after = stable_after
        self._up_since = None  # ticks_ms when the current session came up
        self.connected = asyncio.Event()  # set while a session (after both hellos) is up
        self.session_id = None
        self.attempts = 0  # connection attempts so far
        self.last_delay = 0  # seconds waited before the latest attempt
        self._prefix = None  # the envelope up to the payload, for this session
        self._stopping = False
        self._stopped = asyncio.Event()
        self.dropped = 0  # MCP messages sent while down, since the last session came up
        # The link's own client of the server: its answers and notifications come here.
        self.mcp = server.session(self._send_mcp, max_message=None if callable(max_message) else max_message)

    async def run(self):
        """Connect, serve, reconnect: forever, until stop() or cancellation. A MemoryError
        anywhere on the way (connecting, hanging up, the pause) is collected and the loop
        goes round again: the link always comes back."""
        while not self._stopping:
            try:
                await self._attempt()
            except MemoryError:
                gc.collect()
                _log.warning("out of memory between sessions: trying again")
                await asyncio.sleep(self.backoff.minimum)

    async def _attempt(self):
        """One connection attempt, the session it brings, and the pause after it."""
        _raise_if_cancelled()
        self.attempts += 1
        try:
            await self._session()
        except Exception as e:  # whatever ended the session, the link carries on
            if not self._stopping:
                _log.warning("link lost: %s", _describe(e))
        finally:
            await self._hang_up()
            self._cancel_owed()
        if self._up_since is not None:
            if ticks_diff(ticks_ms(), self._up_since) >= self.stable_after * 1000:
                self.backoff.reset()
            self._up_since = None
        if self._stopping:
            return
        self.last_delay = self.backoff.next()
        _log.info("reconnecting in %d ms", int(self.last_delay * 1000))
        await self._pause(self.last_delay)

    async def stop(self):
        """End the session the way the transport says goodbye, and make run() return."""
        self._stopping = True
        self._stopped.set()
        await self._close()

    def _cancel_owed(self):
        """Responses owed to the session that ended can reach no one: the next session's
        backend never asked for them. The calls are cancelled (as a client's cancellation
        would) and counted in one line, rather than each reply dropped as it comes."""
        owed = self.mcp.cancel_calls()
        if owed:
            _log.warning("session ended: cancelled %d tool call(s) it was owed a reply for", owed)

    def _drop(self):
        """Count an MCP message (a notification, say a background task's log) that finds
        the link down: logged once when dropping starts, the total when a session is up."""
        self.dropped += 1
        if self.dropped == 1:
            _log.warning("link down: MCP messages are dropped until the next session")

    async def _pause(self, seconds):
        """Sleep, cut short by stop()."""
        try:
            await asyncio.wait_for(self._stopped.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def _message_limit(self):
        """The incoming message limit of the session starting now."""
        limit = self.max_message() if callable(self.max_message) else self.max_message
        self.mcp.max_message = limit
        return limit

    def _hello(self):
        return {"type": "hello", "version": self.protocol_version, "features": {"mcp": True},
                "transport": self.transport, "audio_params": AUDIO_PARAMS}

    def _session_up(self, hello, overhead=0):
        """The server's hello arrived: the session is up. overhead: the transport's bytes
        around each envelope (a packet header), for the tools/list page limit."""
        self.session_id = hello.get("session_id") or ""
        if not isinstance(self.session_id, str):
            self.session_id = str(self.session_id)
        # The payload arrives serialized: the envelope is written around it, not re-encoded.
        self._prefix = '{"session_id":%s,"type":"mcp","payload":' % dumps(self.session_id)
        self.mcp.set_sender(self._send_mcp, len(self._prefix.encode()) + 1 + overhead)
        self._up_since = ticks_ms()
        self.connected.set()
        _log.info("connected (%s), session %s", self.transport, self.session_id)
        if self.dropped:
            _log.warning("%d MCP message(s) were dropped while the link was down", self.dropped)
            self.dropped = 0

    def _can_send(self):
        """Whether MCP may go out now: during a session (a transport may allow more)."""
        return self.connected.is_set()

    async def _send_mcp(self, pieces):
        """The McpServer's sender: the pieces of one JSON-RPC message, written into
        one envelope as they are (a message of pieces, never one joined string)."""
        if not self._can_send():
            self._drop()
            return
        frame = [self._prefix]
        frame.extend(pieces)
        frame.append("}")
        await self._send_frame(frame)

    async def _route(self, data):
        """One message from the server: its text (str or bytes-like UTF-8)."""
        message, problem = _parse(data)
        if message is None:
            await self._unreadable(data, problem)
            return
        await self._dispatch(message, data)

    async def _unreadable(self, data, reason):
        """A message that could not be read (`data`: its text, or as much of it as was
        kept). MCP gets its -32700, with its id where the text shows one, as a JSON-RPC
        server owes it; anything else is logged and dropped."""
        if _is_mcp(data):
            await self.mcp.refuse(data, reason, _PAYLOAD)
        else:
            _log.warning("ignored %s", reason)

    async def _serve_one(self, receive):
        """Read one message with `receive` (the transport's) and route it: a message the
        heap could not hold, or a MemoryError on its way, costs that message only."""
        try:
            text, data = await receive()
            if text:
                await self._route(data)
            else:
                _log.info("ignored a binary frame of %d bytes", len(data))  # audio
        except MessageDropped as e:
            data = None
            gc.collect()
            head = bytes(e.head)
            if e.fatal:  # over the limit: the connection closes (1009) at the next read
                _log.warning("a message of %d bytes is over the limit (%d)", e.length, self.mcp.max_message)
            await self._unreadable(head, e.reason)
        except MemoryError:
            data = None
            gc.collect()
            _log.warning("out of memory: a message from the server was dropped")

    async def _dispatch(self, message, raw=None):
        kind = message.get("type")
        if kind == "mcp":
            await self.mcp.handle(message.get("payload"), raw, _PAYLOAD)
        elif kind == "system":
            await _call(self.on_system, message)
        elif kind == "alert":
            await _call(self.on_alert, message)
        else:  # stt, tts, llm, custom...: audio features this device does not have
            _log.info("ignored a %s message", kind)


class XiaozhiLink(Link):
    """The WebSocket transport (the xiaozhi protocol's first one)."""

    transport = "websocket"

    def __init__(self, server, url, token, device_id, client_id, protocol_version=1, ca=None,
                 max_message=32768, on_system=None, on_alert=None, hello_timeout=10,
                 idle_timeout=120, ping_interval=30, backoff_min=1, backoff_max=60,
                 stable_after=30):
        # A URL that cannot work (wrong scheme, spaces or control characters that would add
        # header lines to the upgrade request) is a ValueError now, not a retry loop later.
        if parse_url(url)[0] not in ("ws", "wss"):
            raise ValueError("not a WebSocket URL (want ws:// or wss://): " + url)
        Link.__init__(self, server, device_id, client_id, protocol_version, ca, max_message,
                      on_system, on_alert, hello_timeout, idle_timeout, backoff_min,
                      backoff_max, stable_after)
        self.url = url
        self.headers = {
            "Authorization": bearer(token),
            "Protocol-Version": str(protocol_version),
            "Device-Id": device_id,
            "Client-Id": client_id,
        }
        self.ping_interval = ping_interval
        self._ws = None

    async def _close(self):
        ws = self._ws
        if ws is not None:
            await ws.close(CLOSE_NORMAL, "device stopping")

    # -- one session

    async def _session(self):
        self._ws = ws = await ws_connect(self.url, self.headers, self._message_limit(), self.ca,
                                         self.hello_timeout)
        if self._stopping:  # stop() came while connecting
            await ws.close(CLOSE_NORMAL, "device stopping")
            return
        await ws.send(dumps(self._hello()))
        try:
            hello = await asyncio.wait_for(self._server_hello(ws), self.hello_timeout)
        except asyncio.TimeoutError:
            raise OSError("no server hello within %s s" % self.hello_timeout)
        _raise_if_cancelled()
        self._session_up(hello)
        keepalive = asyncio.create_task(self._keepalive(ws))
        try:
            while True:
                await self._serve_one(ws.receive)
        finally:
            keepalive.cancel()

    async def _server_hello(self, ws):
        while True:
            try:
                text, data = await ws.receive()
            except MessageDropped:
                text = False
            message = _parse(data)[0] if text else None
            data = None
            if message is not None and message.get("type") == "hello":
                return message
            _log.warning("ignored a message before the server hello")

    async def _hang_up(self):
        self.connected.clear()
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.abort()

    async def _keepalive(self, ws):
        """Ping every ping_interval; hang up after idle_timeout without any frame.

        Pings go out from their own task: a send stuck on a dead network (its buffers
        full) must not stall this watchdog."""
        idle_ms = int(self.idle_timeout * 1000)
        ping_ms = int(self.ping_interval * 1000) if self.ping_interval else 0
        step_s = min(ping_ms or idle_ms, idle_ms) / 4000
        last_ping = ticks_ms()
        pinging = None
        try:
            while True:
                await asyncio.sleep(step_s)
                now = ticks_ms()
                if ticks_diff(now, ws.last_rx_ms) >= idle_ms:
                    _log.warning("nothing received for %d ms: dead channel", idle_ms)
                    await ws.abort()  # the session's recv() ends with ConnectionClosed
                    return
                if ping_ms and ticks_diff(now, last_ping) >= ping_ms:
                    if pinging is None or pinging.done():
                        last_ping = now
                        pinging = asyncio.create_task(_ping(ws))
        finally:
            if pinging is not None:
                pinging.cancel()

    # -- traffic

    async def _send_frame(self, frame):
        ws = self._ws
        if ws is None:
            self._drop()
            return
        try:
            await ws.send(frame)
        except ConnectionClosed:  # the session is ending: run() hangs up and accounts
            self._drop()


async def _ping(ws):
    try:
        await ws.ping()
    except ConnectionClosed:
        pass  # the session's recv() reports it


def _raise_if_cancelled():
    # CPython 3.11's wait_for loses a cancellation that arrives just as the awaited
    # operation completes (fixed in 3.12); without this check run() would carry on.
    task = asyncio.current_task()
    if getattr(task, "cancelling", None) and task.cancelling():
        raise asyncio.CancelledError


def _parse(data):
    """(the JSON object a message's text (str or bytes-like) holds, None), or (None, why
    not)."""
    try:
        message = loads(data)  # valid text, bounded depth (umcp.jsonin)
    except ValueError as e:
        return None, str(e)
    if not isinstance(message, dict):
        return None, "a JSON message that is not an object"
    return message, None


def _is_mcp(data):
    """Whether an unreadable message (str or bytes) is an "mcp" envelope: its "type" says
    so, or (cut short before it) the text names it."""
    if isinstance(data, str):
        return data.find('"mcp"') >= 0
    span = member(data, b"type")
    if span is not None:
        return data[span[0]:span[1]] == b'"mcp"'
    return data.find(b'"mcp"') >= 0


async def _call(callback, message):
    if callback is None:
        _log.info("no handler for a %s message", message.get("type"))
        return
    try:
        result = callback(message)
        if iscoroutine(result):
            await result
    except Exception as e:  # an application bug must not take the link down
        _log.error("%s handler failed: %s", message.get("type"), _describe(e))


def _describe(error):
    return "%s %s" % (type(error).__name__, error)
