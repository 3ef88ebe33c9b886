"""Where devices meet the host, wired once for tools.backend and tools.bridge.

A DeviceFront builds and starts the HTTP server on http_port (the vision endpoint, the
OTA check-in and activation, firmware images, then the owner's own routes); the xiaozhi
WebSocket server on port, with the MCP endpoint tool providers connect out to on the same
port (tools.hub.endpoint); with `mqtt`, the MqttHub (broker, credentials, MqttServer); and
with `serial`, a SerialBoard for each port (docs/hub.md shows how they are wired).

Devices of every transport land in one table (`devices`: device id -> Device) and reach
the owner through the same callbacks: on_device(device) (a coroutine: the owner's
onboarding), on_notification(device, payload), on_gone(device). The check-in tells each
device where to connect: MQTT credentials while the hub runs, else the WebSocket URL and
token.
"""

import socket

from .endpoint import PATH as ENDPOINT_PATH
from .endpoint import EndpointAcceptor, endpoint_url
from .httpserver import HttpServer
from .otacheck import CHECK_PATH, OtaCheckService
from .vision import VisionService, create_app, vision_url
from .xiaozhi import PATH, XiaozhiServer


def reachable_host(host):
    """The address other machines reach a server listening on `host` at: for all
    interfaces, our LAN address (found without sending a packet; loopback without a network)."""
    if host not in ("", "0.0.0.0"):
        return host
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.255.255.255", 1))
        return probe.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        probe.close()


class DeviceFront:
    def __init__(self, token=None, host="127.0.0.1", port=0, http_port=0, public_host=None,
                 on_device=None, on_notification=None, on_gone=None, vision=None, log=print,
                 trace=None, request_timeout=30.0, ota_dir=None, activation=None, timezone_offset=0,
                 mqtt=None, mqtt_port=0, mqtt_options=None, routes=(), name="backend", serial=()):
        """vision: a VisionService (default: one without a model); activation: an
        otacheck.Activation, or None (every device counts as activated); mqtt: None
        (WebSocket only), "embedded" (amqtt in this process on mqtt_port) or
        "mqtt://user:password@host:port"; mqtt_options: MqttHub's other arguments (passwd,
        pidfile, secret, backend_password, issued, idle_timeout); name: who speaks in the log;
        serial: serial ports (/dev/ttyUSB0, COM3, socket://...) whose boards are taken and
        served over the line."""
        self.name = name
        self.host = host
        self.port = port
        self.http_port = http_port
        self.public_host = public_host or reachable_host(host)
        self.log = log
        self.vision = vision or VisionService(log=log)
        self._callbacks = dict(on_device=on_device, on_notification=on_notification, on_gone=on_gone,
                               log=log, trace=trace, request_timeout=request_timeout)
        self.endpoint = EndpointAcceptor(token, **self._callbacks)
        self.server = XiaozhiServer(token, acceptors={ENDPOINT_PATH: self.endpoint}, **self._callbacks)
        self.endpoint.devices = self.server.devices  # one table, whatever the way in
        self.otacheck = OtaCheckService(self._where_to_connect, self._firmware_url, ota_dir, activation,
                                        timezone_offset, log=log)
        self.mqtt_hub = None
        if mqtt:
            from .mqtthub import MqttHub  # amqtt and its kin only for MQTT

            self.mqtt_hub = MqttHub(mqtt, host, self.public_host, mqtt_port, log=log, name=name,
                                    **(mqtt_options or {}))
        self._http = HttpServer(create_app(self.vision, ota_dir, log=log,
                                           routes=self.otacheck.routes() + list(routes)))
        self.serial = []
        if serial:
            from .serialboard import SerialBoard  # pyserial only for serial ports

            self.serial = [SerialBoard(port, self.devices, **self._callbacks) for port in serial]

    @property
    def devices(self):
        """device id -> Device, whatever its transport."""
        return self.server.devices

    @property
    def mqtt(self):
        """The MqttServer once the hub runs, else None."""
        return self.mqtt_hub.server if self.mqtt_hub is not None else None

    @property
    def credentials(self):
        """The MQTT credentials the check-in issues (None without MQTT)."""
        return self.mqtt_hub.credentials if self.mqtt_hub is not None else None

    @property
    def websocket_url(self):
        return "ws://%s:%d%s" % (self.public_host, self.port, PATH)

    @property
    def endpoint_url(self):
        """The MCP endpoint's URL for tool providers, token included (mcp_endpoint in a
        board's config.json)."""
        return endpoint_url(self.public_host, self.port, self.server.token)

    @property
    def vision_url(self):
        return vision_url(self.public_host, self.http_port)

    @property
    def ota_url(self):
        """The check-in URL, what a board's ota_url says."""
        return "http://%s:%d%s" % (self.public_host, self.http_port, CHECK_PATH)

    async def start(self):
        self.http_port = await self._http.start(self.host, self.http_port)
        self.port = await self.server.start(self.host, self.port)
        self.log("%s: devices connect to %s (%s)" % (
            self.name, self.websocket_url, "token required" if self.server.token else "no token"))
        bare = endpoint_url(self.public_host, self.port, None)  # the token is not for the log
        self.log("%s: MCP endpoint for tool providers at %s" % (
            self.name, bare + "?token=<the token>" if self.server.token else bare + " (no token needed)"))
        self.log("%s: vision endpoint %s" % (self.name, self.vision_url))
        if self.mqtt_hub is not None:
            await self.mqtt_hub.start(devices=self.devices, **self._callbacks)
        self.log("%s: OTA check at %s (hands out %s)%s" % (
            self.name, self.ota_url, "mqtt" if self.mqtt else "websocket",
            ", activation on" if self.otacheck.activation else ""))
        for board in self.serial:
            board.start()

    async def close(self):
        for board in self.serial:  # each left running its main.py
            await board.stop()
        if self.mqtt_hub is not None:
            await self.mqtt_hub.close()
        await self.server.close()
        await self._http.close()

    async def _where_to_connect(self, device_id, client_id, board):
        """Where the check-in sends a device."""
        if self.mqtt is not None:
            return "mqtt", self.credentials.issue(device_id, self.mqtt_hub.endpoint)
        return "websocket", {"url": self.websocket_url, "token": self.server.token or ""}

    def _firmware_url(self, name):
        return "http://%s:%d/ota/%s" % (self.public_host, self.http_port, name)
