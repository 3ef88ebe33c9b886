"""The assistant's side of an MCP endpoint (MCP 接入点), scripted, on a real `websockets`
server: what a board's EndpointLink connects out to.

It plays what the board meets behind xinnan-tech/mcp-endpoint-server: the tool provider
connects to ws://127.0.0.1:PORT/mcp_endpoint/mcp/?token=T and then hears plain JSON-RPC
requests (no envelope, no hello) with the ids the relay rewrites into strings
("<connection uuid>_n_<id>"). The server can refuse the next upgrades (`refuse`: that
many HTTP 401), accept and then close with 1008 as mcp-endpoint-server does for a bad
token (`policy_close`), be killed and started again on the same port; it records every
connection's request (path, headers) and the close code each finished connection got
from the board.
"""

import asyncio
import itertools
import json
import socket
import uuid
from urllib.parse import parse_qs, urlsplit


from tests.support.firmwareharness import WAIT_S, ScriptedServer

PATH = "/mcp_endpoint/mcp/"


class Provider:
    """One connection from the board, as the assistant's side sees it."""

    def __init__(self, ws):
        self.ws = ws
        self.upgrade = ws.request  # the upgrade request: path, headers
        self.headers = ws.request.headers
        self.token = parse_qs(urlsplit(ws.request.path).query).get("token", [None])[0]
        self.frames = []  # every text frame received, raw
        self.notifications = []
        self.relay = uuid.uuid4().hex[:8]  # the relay's connection id, in every request id
        self._ids = itertools.count(1)

    def next_id(self):
        """An id as mcp-endpoint-server rewrites the assistant's integer ids."""
        return "%s_n_%d" % (self.relay, next(self._ids))

    async def send_raw(self, data):
        await self.ws.send(data)

    async def send(self, message):
        await self.ws.send(json.dumps(message))

    async def send_request(self, method, params=None, request_id=None):
        """Send a request without waiting; returns its id."""
        if request_id is None:
            request_id = self.next_id()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return request_id

    async def next_message(self, timeout=WAIT_S):
        frame = await asyncio.wait_for(self.ws.recv(), timeout)
        self.frames.append(frame)
        return json.loads(frame)

    async def response(self, request_id, timeout=WAIT_S):
        """The next response with this id; notifications on the way are kept."""
        while True:
            message = await self.next_message(timeout)
            if "method" not in message and message.get("id") == request_id:
                return message
            assert "method" in message, "a response to %r while waiting for %r" % (message.get("id"), request_id)
            self.notifications.append(message)

    async def request(self, method, params=None, request_id=None, timeout=WAIT_S):
        request_id = await self.send_request(method, params, request_id)
        return await self.response(request_id, timeout)

    async def initialize(self):
        """What xiaozhi-esp32-server's endpoint client sends (protocol 2024-11-05)."""
        reply = await self.request("initialize", {
            "protocolVersion": "2024-11-05",
            "capabilities": {"roots": {"listChanged": True}, "sampling": {}},
            "clientInfo": {"name": "XiaozhiMCPEndpointClient", "version": "1.0.0"}})
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
        return reply

    async def list_tools(self):
        """Every page, following nextCursor as the assistant does; (tools, raw page frames)."""
        tools, frames, cursor = [], [], None
        for _ in range(100):
            params = {"cursor": cursor} if cursor else None
            reply = await self.request("tools/list", params)
            frames.append(self.frames[-1])
            tools.extend(reply["result"]["tools"])
            cursor = reply["result"].get("nextCursor")
            if not cursor:
                return tools, frames
        raise AssertionError("tools/list never ended")

    async def call(self, name, arguments=None):
        reply = await self.request("tools/call", {"name": name, "arguments": arguments or {}})
        return reply


class EndpointServer(ScriptedServer):
    """The endpoint: accepts tool providers at PATH (any token, or `token` only)."""

    def __init__(self, token=None, max_size=2 ** 22, tls=None):
        super().__init__(max_size, tls)  # refuse: that many HTTP 401 refusals next
        self.token = token
        self.providers = asyncio.Queue()
        self.requests = []  # every upgrade request that reached us (path, headers)
        self.policy_close = 0  # that many connections accepted, then closed with 1008

    def url(self, token="T0KEN-secret"):
        return "%s://127.0.0.1:%d%s?token=%s" % ("wss" if self.tls else "ws", self.port, PATH, token)

    def process_request(self, connection, request):
        self.requests.append(request)
        if urlsplit(request.path).path != PATH:
            return connection.respond(404, "no endpoint here\n")
        if self.refuse:
            self.refuse -= 1
            return connection.respond(401, "wrong token\n")
        return None

    async def _serve(self, ws):
        provider = Provider(ws)
        if self.policy_close or (self.token is not None and provider.token != self.token):
            self.policy_close = max(0, self.policy_close - 1)
            await ws.close(1008, "token解密失败")  # mcp-endpoint-server's words
            return
        await self.providers.put(provider)

    async def next_provider(self, timeout=WAIT_S):
        return await asyncio.wait_for(self.providers.get(), timeout)


class Mute:
    """A TCP server that accepts and never says a word: an upgrade never answered."""

    def __init__(self):
        self.accepted = 0
        self._server = None
        self._writers = []

    async def start(self):
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0, family=socket.AF_INET)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def url(self, token="T0KEN-secret"):
        return "ws://127.0.0.1:%d%s?token=%s" % (self.port, PATH, token)

    async def _accept(self, reader, writer):
        self.accepted += 1
        self._writers.append(writer)
        await reader.read(65536)  # the upgrade request, never answered

    async def stop(self):
        self._server.close()
        for writer in self._writers:
            writer.transport.abort()
        await self._server.wait_closed()
