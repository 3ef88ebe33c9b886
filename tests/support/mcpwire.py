"""McpWire: a client's end of an McpServer (from umcp) that drives it the way a client
does and checks every message the server emits against the official MCP SDK's types for
the negotiated protocol version. The `wire` fixture (tests/conftest.py) gives one over a
fresh server; tests that need their own server make one themselves."""

import asyncio
import json

from umcp.compat import join_pieces


class SdkChecker:
    """What McpWire checks, apart: every message a server sends, against the official MCP
    SDK's types for the version the request it answers named in `_meta` (revision
    2026-07-28's form), else the negotiated one (before an initialize reply, the newest
    handshake version's). received(request) notes each request as the server gets it;
    sent(message) checks each message it sends (AssertionError, or the SDK's
    ValidationError). The portable cases' Wire takes one under CPython
    (tests/test_portable_on_cpython.py), so they are checked as McpWire's are."""

    MODERN = "2026-07-28"

    def __init__(self):
        self.version = "2025-11-25"
        self._methods = {}  # (id type, id) -> (method, _meta version or None) of the last request with that id
        self._notification_version = None  # MODERN after a request in that form, until initialize

    def received(self, payload):
        self._remember_method(payload)

    def sent(self, message):
        self._validate(message)

    def _validate(self, message):
        from mcp.types import jsonrpc_message_adapter
        from mcp.types.methods import SERVER_NOTIFICATIONS, parse_server_notification, parse_server_result

        jsonrpc_message_adapter.validate_python(message)
        if "result" in message:
            method, version = self._methods[(type(message["id"]), message["id"])]
            if method == "initialize":
                self.version = message["result"]["protocolVersion"]
            elif method == "server/discover":
                version = self.MODERN
            parse_server_result(method, version or self.version, message["result"])
        elif "error" in message:
            assert isinstance(message["error"]["code"], int)
            assert isinstance(message["error"]["message"], str)
            if message["error"]["code"] == -32022:
                from mcp_types._v2026_07_28 import UnsupportedProtocolVersionError

                UnsupportedProtocolVersionError.model_validate(message)
        elif (message["method"], self._notification_version or self.version) in SERVER_NOTIFICATIONS:
            parse_server_notification(message["method"], self._notification_version or self.version,
                                      message.get("params"))
        else:  # an application-defined notification: the envelope is all MCP defines
            assert message["method"].startswith("notifications/")

    def _remember_method(self, payload):
        if isinstance(payload, (str, bytes, bytearray)):
            try:
                payload = json.loads(payload)
            except ValueError:
                return
        if not isinstance(payload, dict):
            return
        params = payload.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
        if payload.get("method") == "initialize" or version == self.MODERN:
            self._notification_version = version
        if isinstance(payload.get("id"), (int, str)):
            self._methods[(type(payload["id"]), payload["id"])] = (payload.get("method"), version)


class McpWire:
    """A client's end of an McpServer, validating all the server sends.

    `sent` holds the emitted messages (parsed), `frames` their text. Responses
    are validated against the result model of the request's method, for the
    version the request named in `_meta` (revision 2026-07-28's form), else the
    negotiated one; before an initialize reply the newest handshake version's
    schema applies. Notifications follow the version of the latest request or
    initialize. `modern_request()` sends a request in the 2026-07-28 form.
    """

    MODERN = "2026-07-28"

    WAIT_S = 5

    def __init__(self, server, overhead=0):
        self.server = server
        self.sent = []
        self.frames = []
        self.failures = []
        self.checker = SdkChecker()
        self._arrived = asyncio.Event()
        server.set_sender(self._receive, overhead)

    @property
    def version(self):
        return self.checker.version

    async def _receive(self, pieces):
        # The server logs and survives a sender that raises, so a failed check is
        # kept here and reported by the `wire` fixture instead.
        try:
            assert isinstance(pieces, (list, tuple))
            for piece in pieces:
                if isinstance(piece, tuple):  # a catalogue's entry: (reader, key)
                    text = piece[0].json(piece[1])
                    assert len(text) == piece[0].json_bytes(piece[1]), piece
                elif not isinstance(piece, (str, bytes, bytearray, memoryview)):
                    # A listed entry (a page's tool or resource) or a piece of an image's
                    # base64, serialized when written:
                    # the size it announces is the size it writes.
                    text = piece.json()  # str (an entry), or bytes (an image's base64)
                    assert len(text if isinstance(text, bytes) else text.encode()) == piece.json_bytes, piece
            text = join_pieces(pieces)
            message = json.loads(text)
            self.checker.sent(message)
        except Exception as e:
            self.failures.append((pieces, e))
            raise
        self.frames.append(text)
        self.sent.append(message)
        self._arrived.set()

    async def feed(self, payload):
        """Hand the server one incoming message; return what it sent meanwhile."""
        self.checker.received(payload)
        before = len(self.sent)
        await self.server.handle(payload)
        return self.sent[before:]

    async def request(self, method, params=None, id=1):
        """Send a request and return its response (waiting if a tool is running)."""
        message = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        start = len(self.sent)
        await self.feed(message)
        return await self.response(id, start)

    async def modern_request(self, method, params=None, id=1, log_level=None, version=MODERN):
        """A request in revision 2026-07-28's form: no handshake, `_meta` names the version."""
        meta = {"io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "1"}}
        if log_level is not None:
            meta["io.modelcontextprotocol/logLevel"] = log_level
        params = dict(params or {})
        params["_meta"] = meta
        return await self.request(method, params, id)

    async def notification(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return await self.feed(message)

    async def initialize(self, version="2025-11-25", capabilities=None):
        response = await self.request("initialize", {
            "protocolVersion": version,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "pytest", "version": "1"},
        }, id="init")
        await self.notification("notifications/initialized")
        return response

    async def response(self, id, start=0):
        """The first response with `id` from `sent[start:]` on (ids may be reused)."""
        return await self.wait_for(lambda m: "method" not in m and _same_id(m.get("id"), id), start)

    async def wait_for(self, predicate, start=0):
        """The first message from `sent[start:]` on that satisfies `predicate`, waiting up to WAIT_S."""
        async def first():
            while True:
                for message in self.sent[start:]:
                    if predicate(message):
                        return message
                self._arrived.clear()
                await self._arrived.wait()

        return await asyncio.wait_for(first(), self.WAIT_S)


def _same_id(a, b):
    return type(a) is type(b) and a == b
