"""The MCP endpoint (MCP 接入点) on the host: where tool providers connect out to, as a
xiaozhi assistant's endpoint has them (xiaozhi.me's agents, or xiaozhi-esp32-server with
mcp-endpoint-server), so that the backend and the bridge list and call their tools as
they do a xiaozhi device's.

A provider connects to ws://HOST:PORT/mcp_endpoint/mcp/?token=T on the hub's WebSocket
port and speaks plain JSON-RPC 2.0 MCP in text frames: no envelope, no hello. Each
connection becomes an EndpointDevice, the same kind of object as a xiaozhi device
(tools.hub.xiaozhi.Device: requests, notifications, tools/list paging), in the same
`devices` table under the id "endpoint:<Device-Id>" (a umcp board sends its Device-Id;
another provider is named after its token), so a board connected both ways shows twice,
and a provider that connects again replaces its previous connection, as the endpoint of
an agent takes one provider. Request ids go out as strings in the form the real relay
rewrites them to ("<connection>_n_<number>"). The token: the hub's own when it has one,
else any (as for devices).
"""

import asyncio
import hashlib
import itertools
import json
from http import HTTPStatus
from urllib.parse import parse_qs, quote, urlsplit

from websockets.exceptions import ConnectionClosed

from .xiaozhi import Device, DeviceHost

PATH = "/mcp_endpoint/mcp/"
TRANSPORT = "mcp_endpoint"  # a provider's Device.transport, and its made-up hello's


def at_endpoint(device):
    """Whether a device (of a backend's) is a tool provider at the MCP endpoint."""
    return getattr(device, "transport", None) == TRANSPORT


class EndpointDevice(Device):
    """A tool provider at the endpoint: a Device whose messages travel bare."""

    transport = TRANSPORT
    speaks = False  # MCP only: no turn's text

    def __init__(self, connection, device_id, client_id, owner):
        hello = {"type": "hello", "transport": TRANSPORT, "features": {"mcp": True}}  # none came
        super().__init__(connection, device_id, client_id, hello, owner)
        relay = self.session_id[:8]
        self._ids = ("%s_n_%d" % (relay, number) for number in itertools.count(1))

    async def send_envelope(self, payload):
        """Send one MCP message: at the endpoint the payload is the whole message."""
        self._owner.trace(self, "->", payload)
        await self.connection.send(json.dumps(payload, separators=(",", ":")))


def provider_token(path):
    """The ?token= of an endpoint URL's path, or None."""
    values = parse_qs(urlsplit(path).query).get("token")
    return values[0] if values else None


def provider_id(request):
    """The id a provider is listed under: its Device-Id, else a name made from its token."""
    device_id = request.headers.get("Device-Id")
    if device_id:
        return "endpoint:" + device_id
    token = provider_token(request.path) or ""
    return "endpoint:agent-" + hashlib.sha256(token.encode()).hexdigest()[:8]


class EndpointAcceptor(DeviceHost):
    """Accepts tool providers at PATH on a XiaozhiServer's port (its `acceptors`), with
    the same callbacks and `devices` table as the server (tools.hub.front wires it)."""

    def __init__(self, token=None, devices=None, on_device=None, on_notification=None, on_gone=None,
                 log=None, trace=None, request_timeout=30.0):
        super().__init__(devices, on_device, on_notification, on_gone, log, trace, request_timeout)
        self.token = token

    def check_request(self, connection, request):
        """Before the upgrade: None to accept, else the refusal (401 for a wrong token)."""
        if self.token is None:
            return None
        token = provider_token(request.path)
        if token == self.token:
            return None
        reason = "missing token: connect to %s?token=<token>" % PATH if token is None else "wrong token"
        self.log("endpoint: refused %s: %s" % (provider_id(request), reason))
        return connection.respond(HTTPStatus.UNAUTHORIZED, reason + "\n")

    async def serve(self, connection):
        request = connection.request
        device = EndpointDevice(connection, provider_id(request), request.headers.get("Client-Id"), self)
        previous = self.devices.pop(device.id, None)
        if previous is not None:
            self.log("%s reconnected: closing its previous connection" % device.id)
            await previous.connection.close(1000, "replaced by a new connection")
        self.devices[device.id] = device
        self.log("%s: connected to the MCP endpoint (%s)" % (device.id, request.headers.get("User-Agent") or "?"))
        starting = asyncio.create_task(self._on_device(device)) if self._on_device else None
        try:
            await self._receive(device)
        finally:
            device.closed.set()
            device.fail_pending()
            if self.devices.get(device.id) is device:
                del self.devices[device.id]
            if starting is not None and not starting.done():
                starting.cancel()
            self.log("%s disconnected" % device.id)
            if self._on_gone:
                self._on_gone(device)

    async def _receive(self, device):
        try:
            async for text in device.connection:
                if isinstance(text, bytes):
                    self.log("%s: dropped a binary frame (MCP travels in text frames)" % device.id)
                    continue
                try:
                    message = json.loads(text)
                except ValueError:
                    self.log("%s: dropped a frame that is not JSON" % device.id)
                    continue
                device.on_payload(message)
        except ConnectionClosed:
            pass


def endpoint_url(host, port, token):
    """The URL a tool provider is given: the token in its query, as the real ones have it
    (without a token any will do, and none is needed)."""
    url = "ws://%s:%d%s" % (host, port, PATH)
    return url + "?token=" + quote(token, safe="") if token else url
