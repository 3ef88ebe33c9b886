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

from umcp.compat import dumps, get_logger, iscoroutine, ticks_diff, ticks_ms
from umcp.jsonin import loads
from unet.reconnect import Backoff, raise_if_cancelled
from unet.conn import parse_url
from unet.ws import CLOSE_NORMAL, ConnectionClosed
from unet.ws import connect as ws_connect

_log = get_logger("xiaozhi")

AUDIO_PARAMS = {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60}


def bearer(token):
    """Authorization value; like the reference, a bare token gets the "Bearer " scheme."""
    return token if " " in token else "Bearer " + token


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
        self.mcp = server.session(self._send_mcp, max_message=max_message)

    async def run(self):
        """Connect, serve, reconnect: forever, until stop() or cancellation."""
        while not self._stopping:
            raise_if_cancelled()
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
                break
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

    async def _route(self, text):
        message, problem = _parse(text)
        if message is None:
            if not isinstance(text, str):
                _log.info("ignored %s", problem)  # audio, which this device does not play
            elif text.find('"mcp"') >= 0:
                # Probably MCP the device could not read: tell the client (-32700), as a
                # JSON-RPC server must, rather than leave its request unanswered.
                await self.mcp.parse_error(problem)
            else:
                _log.warning("ignored %s", problem)
            return
        await self._dispatch(message)

    async def _dispatch(self, message):
        kind = message.get("type")
        if kind == "mcp":
            await self.mcp.handle(message.get("payload"))
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
        self._ws = ws = await ws_connect(self.url, self.headers, self.max_message, self.ca,
                                         self.hello_timeout)
        if self._stopping:  # stop() came while connecting
            await ws.close(CLOSE_NORMAL, "device stopping")
            return
        await ws.send(dumps(self._hello()))
        try:
            hello = await asyncio.wait_for(self._server_hello(ws), self.hello_timeout)
        except asyncio.TimeoutError:
            raise OSError("no server hello within %s s" % self.hello_timeout)
        raise_if_cancelled()
        self._session_up(hello)
        # Pings every ping_interval; idle_timeout without any frame: a dead channel.
        keepalive = asyncio.create_task(ws.keep_alive(self.ping_interval, self.idle_timeout))
        try:
            while True:
                await self._route(await ws.recv())
        finally:
            keepalive.cancel()

    async def _server_hello(self, ws):
        while True:
            message, _ = _parse(await ws.recv())
            if message is not None and message.get("type") == "hello":
                return message
            _log.warning("ignored a message before the server hello")

    async def _hang_up(self):
        self.connected.clear()
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.abort()

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


def _parse(message):
    """(the JSON object a received text message holds, None), or (None, why not)."""
    if not isinstance(message, str):
        return None, "a binary frame of %d bytes" % len(message)
    try:
        message = loads(message)  # valid text, bounded depth (umcp.jsonin)
    except ValueError as e:
        return None, str(e)
    if not isinstance(message, dict):
        return None, "a JSON message that is not an object"
    return message, None


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
