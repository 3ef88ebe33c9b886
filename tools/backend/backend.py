"""The local xiaozhi-compatible backend: onboards devices as xiaozhi-esp32-server does
(hello, initialize with a vision URL and token of its own, tools/list page by page) and
calls their tools, writing a readable account of everything to `out`."""

import asyncio
import json
import os

from ..hub.endpoint import TRANSPORT as ENDPOINT
from ..hub.front import DeviceFront
from ..hub.otacheck import Activation
from ..hub.vision import VisionService
from ..hub.xiaozhi import DeviceError, DeviceGone, ProtocolViolation, background

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
        self.request_timeout = request_timeout
        self.listeners = []  # listener(event, device, data): what the web console follows
        self.state = State(state_path)
        saved = self.state.data
        self.activation = Activation(activation_keys, saved.get("activated", ()),
                                     self._activated) if activation else None
        self.web = None
        if web is not None:
            from .web import WebConsole

            self.web = WebConsole(self, **web)
        self.vision = VisionService(vision_model, log=out)
        self.vision.on_upload = self._on_upload
        mqtt_options = None
        if mqtt:  # the state gives back our MQTT secret, broker login and the names issued
            mqtt_options = dict(passwd=mqtt_passwd, pidfile=mqtt_pidfile, idle_timeout=idle_timeout,
                                secret=bytes.fromhex(saved["mqtt_secret"]) if "mqtt_secret" in saved else None,
                                backend_password=saved.get("mqtt_backend_password"),
                                issued=saved.get("mqtt_issued"))
        self.front = DeviceFront(token, host, port, http_port, public_host, on_device=self._onboard,
                                 on_notification=self._on_notification, on_gone=self._on_gone,
                                 vision=self.vision, log=out, trace=self._trace if trace else None,
                                 request_timeout=request_timeout, ota_dir=ota_dir, activation=self.activation,
                                 timezone_offset=timezone_offset, mqtt=mqtt, mqtt_port=mqtt_port,
                                 mqtt_options=mqtt_options, routes=self.web.routes() if self.web else ())
        self.credentials = self.front.credentials  # None without MQTT
        if self.credentials is not None:
            self.credentials.listeners.append(lambda name, password: self._save_state())
        self._ready = asyncio.Condition()
        self._ready_devices = set()

    # Where we are, as the front has it (ports are known once started).
    host = property(lambda self: self.front.host)
    port = property(lambda self: self.front.port)
    http_port = property(lambda self: self.front.http_port)
    public_host = property(lambda self: self.front.public_host)
    devices = property(lambda self: self.front.devices)
    vision_url = property(lambda self: self.front.vision_url)
    websocket_url = property(lambda self: self.front.websocket_url)
    endpoint_url = property(lambda self: self.front.endpoint_url,
                            doc="the MCP endpoint's URL for tool providers (its token included)")
    ota_url = property(lambda self: self.front.ota_url)
    mqtt = property(lambda self: self.front.mqtt, doc="the MqttServer once started with MQTT, else None")
    broker = property(lambda self: self.front.mqtt_hub.broker if self.front.mqtt_hub else None,
                      doc="the embedded broker (EmbeddedBroker) with --mqtt alone, else None")
    mqtt_endpoint = property(lambda self: self.front.mqtt_hub.endpoint if self.front.mqtt_hub else None)

    async def start(self):
        if self.credentials is not None:
            self._save_state()
        await self.front.start()
        if self.web is not None:
            self.out("backend: web console %s" % self.web.url)
            if not self.web.remote and self.host not in ("", "0.0.0.0", "::", "127.0.0.1", "localhost"):
                self.out("backend: warning: the web console answers this machine only, but the HTTP server "
                         "listens on %s alone: use --host 0.0.0.0, or --console-host 0.0.0.0" % self.host)

    def _activated(self, device_id):
        self._save_state()

    def _save_state(self):
        """Keep what a restart must not forget (with state_path): the MQTT secret and our
        broker login (so issued credentials stay valid), the names issued, the activations."""
        data = {}
        if self.activation is not None:
            data["activated"] = sorted(self.activation.activated)
        if self.credentials is not None:
            data.update(mqtt_secret=self.credentials.secret.hex(),
                        mqtt_backend_password=self.credentials.backend_password,
                        mqtt_issued=dict(self.credentials.devices))
        self.state.save(data)

    def activate(self, code):
        """The owner typed an activation code: the device it belongs to, or None."""
        if self.activation is None:
            return None
        return self.activation.confirm(code)

    async def close(self):
        if self.web is not None:
            self.web.close()  # ends its event streams, or the HTTP server waits on them
        await self.front.close()

    def _emit(self, event, device, data=None):
        for listener in list(self.listeners):
            listener(event, device, data)

    async def wait_ready(self, timeout, accept=None):
        """The first device that finished onboarding (of those accept(device) takes)."""
        def ready():
            return [device for device in self._ready_devices if accept is None or accept(device)]

        async with self._ready:
            await asyncio.wait_for(self._ready.wait_for(ready), timeout)
            return ready()[0]

    async def _onboard(self, device):
        say = self._speaker(device)
        self._emit("connected", device)
        if getattr(device, "transport", None) == ENDPOINT:
            # A tool provider at the MCP endpoint: no hello; and, as an assistant's endpoint
            # client, no vision offer either.
            vision = None
        else:
            say("connected (client %s), hello %s" % (device.client_id, compact(device.hello)))
            say("answered hello, session %s" % device.session_id)
            if not device.supports_mcp:
                say("hello has no features.mcp: nothing to do")
                return
            vision = {"url": self.vision_url, "token": self.vision.token_for(device.id)}
        try:
            say("-> initialize protocolVersion %s%s" % (
                PROTOCOL_VERSION, ", vision %s" % vision["url"] if vision else ""))
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
