"""The local xiaozhi-compatible backend: onboards devices as xiaozhi-esp32-server does
(hello, initialize with a vision URL and token of its own, tools/list page by page) and
calls their tools, writing a readable account of everything to `out`."""

import asyncio
import json
import os
import socket

from tools.hub.httpserver import HttpServer
from tools.hub.otacheck import CHECK_PATH, Activation, OtaCheckService
from tools.hub.vision import VisionService, create_app, vision_url
from tools.hub.xiaozhi import PATH, DeviceError, DeviceGone, ProtocolViolation, XiaozhiServer, background

PROTOCOL_VERSION = "2024-11-05"  # what xiaozhi-esp32-server asks for


def compact(value, limit=400):
    """One-line JSON, cut at `limit` characters."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def summarize_result(result):
    """A tools/call result as a person reads it: text, image sizes, error flag."""
    parts = []
    for block in result.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text", ""))
        elif kind in ("image", "audio"):  # the size, not pages of base64
            data = block.get("data", "")
            size = len(data) * 3 // 4 - data[-2:].count("=")
            parts.append("[%s %s, %d bytes]" % (kind, block.get("mimeType"), size))
        else:
            parts.append(compact(block, 200))
    text = " | ".join(parts) if parts else compact(result)
    return ("ERROR: " + text) if result.get("isError") else text


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


class State:
    """A JSON file of what the backend must remember across restarts (none without a path)."""

    def __init__(self, path):
        self.path = path
        self.data = {}
        if path and os.path.exists(path):
            with open(path) as source:
                self.data = json.load(source)

    def save(self, data):
        self.data.update(data)
        if not self.path:
            return
        temporary = self.path + ".tmp"
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
            json.dump(self.data, out, indent=1, sort_keys=True)
        os.replace(temporary, self.path)


class Backend:
    def __init__(self, token=None, host="127.0.0.1", port=0, http_port=0, public_host=None,
                 vision_model=None, ota_dir=None, out=print, trace=False, request_timeout=30.0,
                 web=None, mqtt=None, mqtt_port=0, mqtt_passwd=None, mqtt_pidfile=None,
                 activation=False, activation_keys=None, timezone_offset=0, idle_timeout=None,
                 state_path=None):
        """`web`: None, or the web console's options as a dict of WebConsole's keyword
        arguments (tools/backend/web.py): it is then served beside the vision endpoint.
        mqtt: None (WebSocket only), "embedded" (an amqtt broker in this process on
        mqtt_port) or "mqtt://user:password@host:port" (a broker of yours; mqtt_passwd and
        mqtt_pidfile keep a mosquitto password file in step and reload it)."""
        self.out = out
        self.host = host
        self.port = port
        self.http_port = http_port
        self.public_host = public_host or reachable_host(host)
        self.request_timeout = request_timeout
        self.vision = VisionService(vision_model, log=out)
        self.server = XiaozhiServer(token, on_device=self._onboard, on_notification=self._on_notification,
                                    on_gone=self._on_gone, log=out, trace=self._trace if trace else None,
                                    request_timeout=request_timeout)
        self.listeners = []  # listener(event, device, data): what the web console follows
        self.mqtt = None  # tools.hub.mqtt.MqttServer when MQTT is on
        self._mqtt_options = (mqtt, mqtt_port, mqtt_passwd, mqtt_pidfile, idle_timeout)
        self.mqtt_endpoint = None
        self.state = State(state_path)
        self.ota = OtaCheckService(self._ota_connection, self._firmware_url, ota_dir,
                              Activation(activation_keys, self.state.data.get("activated", ()),
                                         self._activated) if activation else None,
                              timezone_offset, log=out)
        routes = list(self.ota.routes())
        self.web = None
        if web is not None:
            from tools.backend.web import WebConsole

            self.web = WebConsole(self, **web)
            routes += self.web.routes()
        self.vision.on_upload = self._on_upload
        self._http = HttpServer(create_app(self.vision, ota_dir, log=out, routes=routes))
        self._ready = asyncio.Condition()
        self._ready_devices = set()

    @property
    def devices(self):
        return self.server.devices

    @property
    def vision_url(self):
        return vision_url(self.public_host, self.http_port)

    @property
    def websocket_url(self):
        return "ws://%s:%d%s" % (self.public_host, self.port, PATH)

    @property
    def ota_url(self):
        return "http://%s:%d%s" % (self.public_host, self.http_port, CHECK_PATH)

    async def start(self):
        self.http_port = await self._http.start(self.host, self.http_port)
        self.port = await self.server.start(self.host, self.port)
        self.out("backend: devices connect to %s (%s)" % (
            self.websocket_url, "token required" if self.server.token else "no token"))
        self.out("backend: vision endpoint %s" % self.vision_url)
        if self._mqtt_options[0]:
            await self._start_mqtt(*self._mqtt_options)
        self.out("backend: OTA check at %s (hands out %s)%s" % (
            self.ota_url, "mqtt" if self.mqtt else "websocket",
            ", activation on" if self.ota.activation else ""))
        if self.web is not None:
            self.out("backend: web console %s" % self.web.url)
            if not self.web.remote and self.host not in ("", "0.0.0.0", "::", "127.0.0.1", "localhost"):
                self.out("backend: warning: the web console answers this machine only, but the HTTP server "
                         "listens on %s alone: use --host 0.0.0.0, or --console-host 0.0.0.0" % self.host)

    async def _start_mqtt(self, mqtt, mqtt_port, passwd, pidfile, idle_timeout):
        from tools.hub.mqtthub import MqttHub

        saved = self.state.data
        self.mqtt_hub = MqttHub(mqtt, self.host, self.public_host, mqtt_port, passwd, pidfile,
                                bytes.fromhex(saved["mqtt_secret"]) if "mqtt_secret" in saved else None,
                                saved.get("mqtt_backend_password"), saved.get("mqtt_issued"), log=self.out)
        self.credentials = self.mqtt_hub.credentials
        self.credentials.listeners.append(lambda name, password: self._save_state())
        self._save_state()
        self.mqtt = await self.mqtt_hub.start(
            on_device=self._onboard, on_notification=self._on_notification, on_gone=self._on_gone, log=self.out,
            trace=self.server._trace, request_timeout=self.request_timeout, devices=self.server.devices,
            **({"idle_timeout": idle_timeout} if idle_timeout else {}))
        self.broker = self.mqtt_hub.broker
        self.mosquitto = self.mqtt_hub.mosquitto
        self.mqtt_endpoint = self.mqtt_hub.endpoint

    async def _ota_connection(self, device_id, client_id, board):
        if self.mqtt is not None:
            return "mqtt", self.credentials.issue(device_id, self.mqtt_endpoint)
        return "websocket", {"url": self.websocket_url, "token": self.server.token or ""}

    def _firmware_url(self, name):
        return "http://%s:%d/ota/%s" % (self.public_host, self.http_port, name)

    def _activated(self, device_id):
        self._save_state()

    def _save_state(self):
        """Keep what a restart must not forget (with state_path): the MQTT secret and our
        broker login (so issued credentials stay valid), the names issued, the activations."""
        data = {}
        if self.ota.activation is not None:
            data["activated"] = sorted(self.ota.activation.activated)
        credentials = getattr(self, "credentials", None)
        if credentials is not None:
            data.update(mqtt_secret=credentials.secret.hex(), mqtt_backend_password=credentials.backend_password,
                        mqtt_issued=dict(credentials.devices))
        self.state.save(data)

    def activate(self, code):
        """The owner typed an activation code: the device it belongs to, or None."""
        if self.ota.activation is None:
            return None
        return self.ota.activation.confirm(code)

    async def close(self):
        if self.web is not None:
            self.web.close()  # ends its event streams, or the HTTP server waits on them
        if self.mqtt is not None:
            await self.mqtt_hub.close()
        await self.server.close()
        await self._http.close()

    def _emit(self, event, device, data=None):
        for listener in list(self.listeners):
            listener(event, device, data)

    async def wait_ready(self, timeout):
        """The first device that finished onboarding."""
        async with self._ready:
            await asyncio.wait_for(self._ready.wait_for(lambda: self._ready_devices), timeout)
            return next(iter(self._ready_devices))

    async def _onboard(self, device):
        say = self._speaker(device)
        self._emit("connected", device)
        say("connected (client %s), hello %s" % (device.client_id, compact(device.hello)))
        say("answered hello, session %s" % device.session_id)
        if not device.supports_mcp:
            say("hello has no features.mcp: nothing to do")
            return
        vision = {"url": self.vision_url, "token": self.vision.token_for(device.id)}
        try:
            say("-> initialize protocolVersion %s, vision %s" % (PROTOCOL_VERSION, vision["url"]))
            result = await device.initialize(vision, PROTOCOL_VERSION)
            say("<- initialize: %s, protocol %s, capabilities %s" % (
                compact(result.get("serverInfo")), result.get("protocolVersion"), compact(result.get("capabilities"))))
            tools = []
            say("-> tools/list")
            async for page in device.tools_pages():
                names = [tool.get("name") for tool in page.get("tools", [])]
                tools.extend(page.get("tools", []))
                cursor = page.get("nextCursor")
                say("<- tools/list page: %d tools %s%s" % (
                    len(names), ", ".join(names), (", nextCursor %r" % cursor) if cursor else ", last page"))
                if cursor:
                    say("-> tools/list cursor %r" % cursor)
        except (DeviceError, ProtocolViolation, asyncio.TimeoutError) as error:
            say("onboarding failed: %s" % (error or "timed out"))
            self._emit("failed", device, str(error) or "timed out")
            return
        except DeviceGone:
            return
        device.tools = tools
        say("ready: %d tools" % len(tools))
        self._emit("ready", device)
        async with self._ready:
            self._ready_devices.add(device)
            self._ready.notify_all()

    async def call(self, device, name, arguments=None, timeout=None):
        """Call a tool and report it; returns the result, or None after an error."""
        try:
            return await self.invoke(device, name, arguments, timeout)
        except (DeviceError, DeviceGone, asyncio.TimeoutError):
            return None

    async def invoke(self, device, name, arguments=None, timeout=None, meta=None):
        """Call a tool and report it; returns the result. A JSON-RPC error, a timeout or a
        disconnection is reported, then raised (DeviceError, asyncio.TimeoutError, DeviceGone)."""
        say = self._speaker(device)
        say("-> tools/call %s %s" % (name, compact(arguments or {})))
        try:
            result = await device.call_tool(name, arguments, meta=meta, timeout=timeout or self.request_timeout)
        except DeviceError as error:
            say("<- error %s: %s" % (error.code, error.message))
            raise
        except asyncio.TimeoutError:
            say("<- no answer within %s s" % (timeout or self.request_timeout))
            raise
        except DeviceGone:
            say("<- device disconnected before answering")
            raise
        say("<- %s" % summarize_result(result))
        return result

    def _on_notification(self, device, payload):
        self._speaker(device)("notification %s %s" % (payload.get("method"), compact(payload.get("params", {}))))
        self._emit("notification", device, payload)
        if payload.get("method") == "notifications/tools/list_changed":
            background(self._relist(device))

    async def _relist(self, device):
        try:
            device.tools = await device.list_tools()
            self._speaker(device)("tools changed: now %d tools" % len(device.tools))
            self._emit("tools", device)
        except (DeviceError, DeviceGone, ProtocolViolation, asyncio.TimeoutError) as error:
            self._speaker(device)("re-listing tools failed: %s" % (error or "timed out"))

    def _on_gone(self, device):
        self._ready_devices.discard(device)
        self._emit("gone", device)

    def _on_upload(self, device_id, data, mime_type, question):
        device = self.devices.get(device_id)
        if device is not None:
            self._emit("photo", device, {"data": data, "mime": mime_type, "question": question})

    def _trace(self, device, arrow, payload):
        self._speaker(device)("%s %s" % (arrow, compact(payload, 1000)))

    def _speaker(self, device):
        return lambda text: self.out("%s: %s" % (device.id, text))
