"""The xiaozhi link: the device's session with a xiaozhi backend, over one of two transports.

Link is the interface and what both transports share: run() connects, says hello, waits
for the server's hello and its session id, then carries MCP both ways inside
{"session_id","type":"mcp","payload"} envelopes, routes system and alert messages to
callbacks, and after any loss reconnects after an exponential backoff with jitter.
XiaozhiLink (here) is the WebSocket transport: pings keep the channel alive, silence
longer than idle_timeout counts as a dead channel. MqttLink (xiaozhi/mqttlink.py) is
the MQTT+UDP one. Runs on CPython and MicroPython.

What a connected link does all the time is here; its connection is unet.ws's
(imported by the first XiaozhiLink, never by the MQTT one; unet.wshandshake, loaded for it, with the URL's parts split once), both hellos are xiaozhi.opening's, and the messages
besides MCP, and an unreadable one's answer, are xiaozhi.control's: each loaded when
needed and dropped after."""

import asyncio
import gc

from umcp.compat import await_then_forget, call_then_forget, const, dumps, forget_modules, get_logger
from umcp.jsonin import loads
from unet import bearer
from unet.reconnect import Reconnecting

_log = get_logger("xiaozhi")
# unet.ws, imported by the first XiaozhiLink: the MQTT transport (xiaozhi.mqttlink) shares
# Link and never needs the WebSocket client's code (about 8 KB of a stock board's heap).
_ws = None

_PAYLOAD = const(b"payload")  # the envelope member that holds the MCP message

AUDIO_PARAMS = {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60}


class Link(Reconnecting):
    """One xiaozhi session with reconnection (unet.reconnect.Reconnecting); a transport
    supplies _session(), _hang_up(), _close() and _send_frame(pieces).

    Every transport has: run(), stop(), connected (asyncio.Event), session_id, attempts,
    last_delay, send_message(message), and calls on_system(message) / on_alert(message),
    and on_turn(message) for a turn's text (stt, tts, llm) where one is set. What opens a
    session (xiaozhi.opening) uses: hello_timeout, hello_message(), session_up()."""

    transport = None  # "websocket" or "udp", as the hello says
    on_turn = None  # set by whoever shows a turn's text (umcpfw.linkconfig, with a status screen)
    log = _log

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
        # connected is set while a session (after both hellos) is up.
        Reconnecting.__init__(self, backoff_min, backoff_max, stable_after)
        self.session_id = None
        self._prefix = None  # the envelope up to the payload, for this session
        # The link's own client of the server: its answers and notifications come here.
        self.mcp = server.session(self._send_mcp, max_message=None if callable(max_message) else max_message)

    def _lost(self, error):
        _log.warning("link lost: %s", describe(error))

    def message_limit(self):
        """The incoming message limit of the session starting now."""
        limit = self.max_message() if callable(self.max_message) else self.max_message
        self.mcp.max_message = limit
        return limit

    def hello_message(self):
        return {"type": "hello", "version": self.protocol_version, "features": {"mcp": True},
                "transport": self.transport, "audio_params": AUDIO_PARAMS}

    def session_up(self, hello, overhead=0):
        """The server's hello arrived: the session is up. overhead: the transport's bytes
        around each envelope (a packet header), for the tools/list page limit."""
        self.session_id = hello.get("session_id") or ""
        if not isinstance(self.session_id, str):
            self.session_id = str(self.session_id)
        # The payload arrives serialized: the envelope is written around it, not re-encoded.
        self._prefix = '{"session_id":%s,"type":"mcp","payload":' % dumps(self.session_id)
        self.mcp.set_sender(self._send_mcp, len(self._prefix.encode()) + 1 + overhead)
        _log.info("connected (%s), session %s", self.transport, self.session_id)
        self._up()

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

    async def send_message(self, message):
        """One message of the xiaozhi protocol besides MCP, `message` a dict without its
        session id (the board speaking first: {"type": "listen", "state": "detect", "text":
        ...}, which the server takes as words heard): True once written, False when no
        session is up (nothing is kept for later)."""
        if not self.connected.is_set():
            return False
        message["session_id"] = self.session_id
        await self._send_frame([dumps(message)])
        return True

    async def _route(self, data):
        """One message from the server: its text (str or bytes-like UTF-8)."""
        message, problem = parse(data)
        if message is None:
            await self._unreadable(data, problem)
            return
        await self._dispatch(message, data)

    async def _unreadable(self, data, reason):
        """A message that could not be read (`data`: its text, or as much of it as was
        kept). MCP gets its -32700 (McpServer.refuse says with which id), as a JSON-RPC
        server owes it; anything else is logged and dropped. Whether it is an "mcp"
        envelope is xiaozhi.control's to tell; with no heap to load it, the text naming
        "mcp" decides (a find, which allocates nothing)."""
        try:
            mcp = call_then_forget("xiaozhi.control", "is_mcp", data)
        except MemoryError:
            mcp = data.find('"mcp"' if isinstance(data, str) else b'"mcp"') >= 0
        finally:
            forget_modules("umcp.jsonpeek")
        if mcp:
            await self.mcp.refuse(data, reason, _PAYLOAD)  # (answers in short without heap)
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
        except _ws.MessageDropped as e:  # (evaluated only for an exception: unet.ws is loaded)
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
        if message.get("type") == "mcp":
            await self.mcp.handle(message.get("payload"), raw, _PAYLOAD)
        else:  # system, alert; stt, tts, llm (a turn's text); audio this device does not have
            await await_then_forget("xiaozhi.control", "dispatch", message, self)


class XiaozhiLink(Link):
    """The WebSocket transport (the xiaozhi protocol's first one)."""

    transport = "websocket"

    def __init__(self, server, url, token, device_id, client_id, protocol_version=1, ca=None,
                 max_message=32768, on_system=None, on_alert=None, hello_timeout=10,
                 idle_timeout=120, ping_interval=30, backoff_min=1, backoff_max=60,
                 stable_after=30):
        # A URL that cannot work (wrong scheme, spaces or control characters that would add
        # header lines to the upgrade request) is a ValueError now, not a retry loop later.
        # Its parts are kept: each reconnection connects to them and loads no URL code.
        parts = call_then_forget("unet.url", "parse_url", url)
        if parts[0] not in ("ws", "wss"):
            raise ValueError("not a WebSocket URL (want ws:// or wss://): " + url)
        global _ws
        import unet.ws as _ws
        Link.__init__(self, server, device_id, client_id, protocol_version, ca, max_message,
                      on_system, on_alert, hello_timeout, idle_timeout, backoff_min,
                      backoff_max, stable_after)
        self.url = url
        self._parts = parts
        self.headers = {
            "Authorization": bearer(token),
            "Protocol-Version": str(protocol_version),
            "Device-Id": device_id,
            "Client-Id": client_id,
        }
        self.ping_interval = ping_interval
        self.ws = None

    async def _close(self):
        ws = self.ws
        if ws is not None:
            await ws.close(_ws.CLOSE_NORMAL, "device stopping")

    # -- one session

    async def _session(self):
        # The connection (unet.ws.connect loads unet.wshandshake and conn for it), then both
        # hellos (xiaozhi.opening): each phase's code loaded for it and dropped after.
        try:
            self.ws = ws = await _ws.connect(self._parts, self.headers, self.message_limit(), self.ca,
                                         self.hello_timeout)
        finally:
            forget_modules("unet.conn")
        if self.stopping:  # stop() came while connecting
            await ws.close(_ws.CLOSE_NORMAL, "device stopping")
            return
        await await_then_forget("xiaozhi.opening", "open_session", self, ws, parse, _log)
        # Pings every ping_interval; idle_timeout without any frame: a dead channel.
        keepalive = asyncio.create_task(ws.keep_alive(self.ping_interval, self.idle_timeout))
        try:
            while True:
                await self._serve_one(ws.receive)
        finally:
            keepalive.cancel()

    async def _hang_up(self):
        self.connected.clear()
        ws, self.ws = self.ws, None
        if ws is not None:
            await ws.abort()

    # -- traffic

    async def _send_frame(self, frame):
        ws = self.ws
        if ws is None:
            self._drop()
            return
        try:
            await ws.send(frame)
        except _ws.ConnectionClosed:  # the session is ending: run() hangs up and accounts
            self._drop()


def parse(data):
    """(the JSON object a message's text (str or bytes-like) holds, None), or (None, why
    not)."""
    try:
        message = loads(data)  # valid text, bounded depth (umcp.jsonin)
    except ValueError as e:
        return None, str(e)
    if not isinstance(message, dict):
        return None, "a JSON message that is not an object"
    return message, None


def describe(error):
    """An exception for a log line: its class and its text."""
    return "%s %s" % (type(error).__name__, error)
