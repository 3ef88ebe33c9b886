"""The device-facing side of a xiaozhi backend, shared by tools.backend and tools.bridge.

A device is the WebSocket *client*: it connects to ws://HOST:PORT/xiaozhi/v1/ with
`Authorization`, `Device-Id`, `Client-Id` and `Protocol-Version` headers, says hello, and
serves MCP JSON-RPC wrapped in {"session_id", "type": "mcp", "payload"} envelopes
(docs/DESIGN.md, /work/shared/PROTOCOL-NOTES.md §1-§2).

XiaozhiServer accepts devices (checking the token), answers hello with a session id, and
gives each connection a Device: request/response matching with timeouts, notifications,
tools/list pagination with a guard against a cursor that repeats.
"""

import asyncio
import itertools
import json
import uuid
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from .. import devicelib  # noqa: F401 (lib/ on sys.path: umcp's version)
import umcp  # noqa: E402
from umcp.server import MAX_QUEUED_CALLS  # noqa: E402
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

PATH = "/xiaozhi/v1/"
REQUEST_TIMEOUT = 30.0  # what xiaozhi-esp32-server allows a tool call
HELLO_TIMEOUT = 10.0
MAX_MESSAGE = 4 * 1024 * 1024  # a photo as an image content block fits
MAX_PAGES = 1000  # a device that never stops paging is broken, not large
# tools/call requests at a device at once (call_tool): what umcp's device queues for one
# client before it answers "busy"; the rest wait in this process, which has room.
CALLS_IN_FLIGHT = MAX_QUEUED_CALLS
CLIENT_INFO = {"name": "umcp-host", "version": umcp.__version__}
AUDIO_PARAMS = {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60}


_background = set()


def background(coro):
    """Run `coro` on a task of its own, held here until it ends: the loop keeps only a weak
    reference, so an unheld task may vanish mid-way."""
    task = asyncio.create_task(coro)
    _background.add(task)
    task.add_done_callback(_background.discard)
    return task


DEVICE_CALL = "[device_call]"  # xiaozhi-esp32-server: the text after it is said as it is


def spoken(device_id, text):
    """The console's line for a device speaking first ({"type": "listen", "state": "detect",
    "text": ...}, as a board's alarm sends it): what a xiaozhi server would do with it. This
    backend has no voice and no model: the line is what it does."""
    if not isinstance(text, str):
        return "%s: a listen/detect message without text" % device_id
    if text.startswith(DEVICE_CALL):
        return "%s says: %s (a server speaks it as it is)" % (device_id, text[len(DEVICE_CALL):].strip())
    return "%s asks: %s (a server takes it as the user's words, a turn for its model)" % (device_id, text)

class DeviceError(Exception):
    """A JSON-RPC error the device answered with (code, message, data as it sent them)."""

    def __init__(self, error):
        self.error = error if isinstance(error, dict) else {"code": -32603, "message": str(error)}
        self.code = self.error.get("code")
        self.message = self.error.get("message", "")
        self.data = self.error.get("data")
        super().__init__("device error %s: %s" % (self.code, self.message))


class DeviceGone(Exception):
    """The device disconnected before answering."""


class ProtocolViolation(Exception):
    """The device broke the protocol (e.g. a tools/list cursor that repeats)."""


def presented_token(request):
    """The token a device presented: `Authorization: Bearer X` header or ?authorization= query."""
    value = request.headers.get("Authorization")
    if value is None:
        value = _query(request.path).get("authorization")
    if value is None:
        return None
    return value[7:] if value.startswith("Bearer ") else value


def _query(path):
    return {k: v[0] for k, v in parse_qs(urlsplit(path).query).items()}


def _header_or_query(request, name):
    return request.headers.get(name) or _query(request.path).get(name.lower())


class Device:
    """One connected device: MCP requests to it, notifications from it."""

    def __init__(self, connection, device_id, client_id, hello, owner):
        self.connection = connection
        self.id = device_id
        self.client_id = client_id
        self.hello = hello
        self.session_id = uuid.uuid4().hex
        self.server_info = None  # from the initialize result
        self.protocol_version = None
        self.initialize_result = None
        self.tools = []  # the last full tools/list
        self.closed = asyncio.Event()
        self._owner = owner
        self._ids = itertools.count(1)  # the real backend sends integer ids only
        self._pending = {}
        self._calls = asyncio.Semaphore(CALLS_IN_FLIGHT)

    @property
    def supports_mcp(self):
        return bool((self.hello.get("features") or {}).get("mcp"))

    async def send_envelope(self, payload):
        message = {"session_id": self.session_id, "type": "mcp", "payload": payload}
        self._owner.trace(self, "->", payload)
        await self.connection.send(json.dumps(message, separators=(",", ":")))

    @property
    def capabilities(self):
        """The capabilities the device answered initialize with ({} before that)."""
        return self.initialize_result.get("capabilities") or {} if self.initialize_result else {}

    async def request(self, method, params=None, timeout=None):
        """Send one request and return its result; raises DeviceError, DeviceGone or
        asyncio.TimeoutError."""
        if self.closed.is_set():
            raise DeviceGone(self.id)
        request_id = next(self._ids)
        payload = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            payload["params"] = params
        answer = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        try:
            await self.send_envelope(payload)
            reply = await asyncio.wait_for(answer, timeout or self._owner.request_timeout)
        except ConnectionClosed:
            raise DeviceGone(self.id) from None
        except (asyncio.CancelledError, asyncio.TimeoutError):
            # Whoever asked gave up: tell the device so it can stop the work.
            background(self._send_if_connected(self._notification(
                "notifications/cancelled", {"requestId": request_id})))
            raise
        finally:
            self._pending.pop(request_id, None)
        if "error" in reply:
            raise DeviceError(reply["error"])
        return reply.get("result")

    async def _send_if_connected(self, payload):
        try:
            await self.send_envelope(payload)
        except ConnectionClosed:
            pass

    @staticmethod
    def _notification(method, params=None):
        payload = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            payload["params"] = params
        return payload

    async def notify(self, method, params=None):
        await self.send_envelope(self._notification(method, params))

    speaks = True  # it takes the xiaozhi messages besides MCP (not an MCP endpoint's)

    async def send_turn(self, said=(), heard=None, emotion=None):
        """Send the text of one chat turn as a xiaozhi server does (its audio aside): "stt"
        with what it heard, "llm" with the reply's emotion, then "tts" start, a
        "sentence_start" for each sentence said, and stop. A board with a status screen
        shows them (umcpfw.turntext). Raises DeviceGone if the device left."""
        messages = []
        if heard is not None:
            messages.append({"type": "stt", "text": heard})
        if emotion is not None:
            messages.append({"type": "llm", "text": "", "emotion": emotion})
        messages.append({"type": "tts", "state": "start"})
        for sentence in said:
            messages.append({"type": "tts", "state": "sentence_start", "text": sentence})
        messages.append({"type": "tts", "state": "stop"})
        try:
            for message in messages:
                message["session_id"] = self.session_id
                await self.connection.send(json.dumps(message, separators=(",", ":")))
        except ConnectionClosed:
            raise DeviceGone(self.id) from None

    async def initialize(self, vision=None, protocol_version="2024-11-05", timeout=None):
        """The handshake a real backend does; `vision` is {"url", "token"} for photos."""
        capabilities = {"roots": {"listChanged": True}, "sampling": {}}
        if vision:
            capabilities["vision"] = vision
        result = await self.request(
            "initialize",
            {"protocolVersion": protocol_version, "capabilities": capabilities, "clientInfo": CLIENT_INFO},
            timeout,
        )
        self.initialize_result = result
        self.server_info = result.get("serverInfo")
        self.protocol_version = result.get("protocolVersion")
        await self.notify("notifications/initialized")
        return result

    async def pages(self, method, params=None, cursor=None, timeout=None):
        """Yield the results of a paginated list method (tools/list, resources/list,
        resources/templates/list) page by page, following nextCursor."""
        seen = set()
        for _ in range(MAX_PAGES):
            page_params = dict(params or {})
            if cursor is not None:
                page_params["cursor"] = cursor
            page = await self.request(method, page_params or None, timeout)
            if not isinstance(page, dict):
                raise ProtocolViolation("device answered %s with %r" % (method, page))
            yield page
            cursor = page.get("nextCursor")
            if not cursor:
                return
            if cursor in seen:
                raise ProtocolViolation("device repeated %s cursor %r" % (method, cursor))
            seen.add(cursor)
        raise ProtocolViolation("device sent more than %d %s pages" % (MAX_PAGES, method))

    async def list_all(self, method, key, params=None, timeout=None):
        """Every item of a paginated list method (`key`: "tools", "resources", ...)."""
        items = []
        async for page in self.pages(method, params, None, timeout):
            items.extend(page.get(key) or [])
        return items

    def tools_pages(self, with_user_tools=False, cursor=None, timeout=None):
        """Yield tools/list results page by page, following nextCursor."""
        return self.pages("tools/list", {"withUserTools": True} if with_user_tools else None, cursor, timeout)

    async def list_tools(self, with_user_tools=False, cursor=None, timeout=None):
        """Every tool, from `cursor` on, following nextCursor."""
        tools = []
        async for page in self.tools_pages(with_user_tools, cursor, timeout):
            tools.extend(page.get("tools", []))
        return tools

    async def call_tool(self, name, arguments=None, meta=None, timeout=None):
        """tools/call; at most CALLS_IN_FLIGHT of them at the device at once, the rest wait
        here: a device answers further calls from one client (and the backend or the bridge
        is one, whatever the number of MCP clients behind it) with a busy error."""
        params = {"name": name, "arguments": arguments or {}}
        if meta:
            params["_meta"] = meta
        async with self._calls:
            return await self.request("tools/call", params, timeout)

    def on_payload(self, payload):
        if not isinstance(payload, dict):
            self._owner.log("%s: dropped a non-object MCP payload" % self.id)
            return
        self._owner.trace(self, "<-", payload)
        if "method" not in payload:
            answer = self._pending.get(payload.get("id"))
            if answer is None or answer.done():
                self._owner.log("%s: dropped a response to unknown id %r" % (self.id, payload.get("id")))
            else:
                answer.set_result(payload)
        elif "id" in payload:
            # A device asking us something (e.g. sampling): we offer nothing.
            error = {"code": -32601, "message": "Method not found: %s" % payload["method"]}
            background(self._send_if_connected({"jsonrpc": "2.0", "id": payload["id"], "error": error}))
        else:
            self._owner.on_notification(self, payload)

    def fail_pending(self):
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(DeviceGone(self.id))


class DeviceHost:
    """What a Device asks of the server it came through, whatever the transport: the
    log, the trace of MCP payloads and the notifications, each an optional callback; the
    `devices` table (device id -> Device, in connection order) it shares with the others
    tools.hub.front wires, and the seconds a request to one of them may take."""

    def __init__(self, devices=None, on_device=None, on_notification=None, on_gone=None, log=None,
                 trace=None, request_timeout=REQUEST_TIMEOUT):
        self.devices = {} if devices is None else devices
        self.request_timeout = request_timeout
        self._on_device = on_device
        self._on_notification = on_notification
        self._on_gone = on_gone
        self._log = log
        self._trace = trace

    def log(self, text):
        if self._log:
            self._log(text)

    def trace(self, device, arrow, payload):
        if self._trace:
            self._trace(device, arrow, payload)

    def on_notification(self, device, payload):
        if self._on_notification:
            self._on_notification(device, payload)
        else:
            self.log("%s: notification %s" % (device.id, payload.get("method")))


class XiaozhiServer(DeviceHost):
    """Accepts devices at ws://HOST:PORT/xiaozhi/v1/.

    Callbacks (all optional): on_device(device) coroutine, run as a task after hello;
    on_notification(device, payload); on_gone(device); log(text); trace(device, arrow,
    payload) for every MCP payload ("->" to the device, "<-" from it).
    """

    def __init__(self, token=None, on_device=None, on_notification=None, on_gone=None,
                 log=None, trace=None, request_timeout=REQUEST_TIMEOUT, hello_timeout=HELLO_TIMEOUT,
                 acceptors=None):
        """acceptors: {path: acceptor} for other WebSocket paths on this port (the MCP
        endpoint's, tools.hub.endpoint): each checks its upgrades (check_request) and
        serves its connections (serve)."""
        super().__init__(None, on_device, on_notification, on_gone, log, trace, request_timeout)
        self.token = token
        self.acceptors = dict(acceptors or {})
        self.hello_timeout = hello_timeout
        self._server = None
        self._anonymous = itertools.count(1)

    async def start(self, host="127.0.0.1", port=0):
        """Listen; returns the bound port."""
        self._server = await serve(self._serve, host, port, process_request=self._check_request,
                                   max_size=MAX_MESSAGE)
        return self._server.sockets[0].getsockname()[1]

    async def close(self):
        if self._server:
            self._server.close()
            await self._server.wait_closed()

    def _acceptor(self, request):
        path = urlsplit(request.path).path.rstrip("/")
        for prefix, acceptor in self.acceptors.items():
            if path == prefix.rstrip("/"):
                return acceptor
        return None

    def _check_request(self, connection, request):
        path = urlsplit(request.path).path
        acceptor = self._acceptor(request)
        if acceptor is not None:
            return acceptor.check_request(connection, request)
        if path.rstrip("/") != PATH.rstrip("/"):
            return connection.respond(HTTPStatus.NOT_FOUND, "no WebSocket endpoint at %s; devices connect to %s\n"
                                      % (path, PATH))
        if self.token is None:
            return None
        token = presented_token(request)
        if token is None:
            reason = "missing token: send 'Authorization: Bearer <token>'"
        elif token != self.token:
            reason = "wrong token"
        else:
            return None
        self.log("refused %s: %s" % (_header_or_query(request, "Device-Id") or "a device", reason))
        return connection.respond(HTTPStatus.UNAUTHORIZED, reason + "\n")

    async def _serve(self, connection):
        request = connection.request
        acceptor = self._acceptor(request)
        if acceptor is not None:
            await acceptor.serve(connection)
            return
        device_id = _header_or_query(request, "Device-Id") or "device-%d" % next(self._anonymous)
        client_id = _header_or_query(request, "Client-Id")
        hello = await self._receive_hello(connection, device_id)
        if hello is None:
            return
        device = Device(connection, device_id, client_id, hello, self)
        await connection.send(json.dumps({"type": "hello", "transport": "websocket",
                                          "session_id": device.session_id, "audio_params": AUDIO_PARAMS}))
        previous = self.devices.pop(device_id, None)
        if previous is not None:
            self.log("%s reconnected: closing its previous connection" % device_id)
            await previous.connection.close(1000, "replaced by a new connection")
        self.devices[device_id] = device
        starting = asyncio.create_task(self._on_device(device)) if self._on_device else None
        try:
            await self._receive(device)
        finally:
            device.closed.set()
            device.fail_pending()
            if self.devices.get(device_id) is device:
                del self.devices[device_id]
            if starting is not None and not starting.done():
                starting.cancel()
            self.log("%s disconnected" % device_id)
            if self._on_gone:
                self._on_gone(device)

    async def _receive_hello(self, connection, device_id):
        try:
            text = await asyncio.wait_for(connection.recv(), self.hello_timeout)
            hello = json.loads(text)
        except asyncio.TimeoutError:
            await connection.close(1008, "no hello within %d s" % self.hello_timeout)
            return None
        except (ValueError, TypeError, ConnectionClosed):
            await connection.close(1008, "expected a JSON hello")
            return None
        if not isinstance(hello, dict) or hello.get("type") != "hello":
            await connection.close(1008, "expected hello first")
            return None
        return hello

    async def _receive(self, device):
        try:
            async for text in device.connection:
                if isinstance(text, bytes):
                    continue  # audio frames: this backend serves MCP only
                try:
                    message = json.loads(text)
                except ValueError:
                    self.log("%s: dropped a frame that is not JSON" % device.id)
                    continue
                kind = message.get("type") if isinstance(message, dict) else None
                if kind == "mcp":
                    device.on_payload(message.get("payload"))
                elif kind == "goodbye":
                    await device.connection.close(1000, "goodbye")
                elif kind == "listen" and message.get("state") == "detect":
                    self.log(spoken(device.id, message.get("text")))
                else:
                    self.log("%s: ignored a %r message" % (device.id, kind))
        except ConnectionClosed:
            pass
