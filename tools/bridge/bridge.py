"""Every connected umcp device as one standard MCP server (the SDK's low-level Server).

Devices connect to our xiaozhi endpoint like they would to a backend, or are taken on their
serial port; MCP clients talk to us over stdio or streamable HTTP, in either revision
family (2026-07-28, stateless, as the SDK serves it; 2024-11-05 .. 2025-11-25 with
sessions, log levels kept per session and forwarded to the devices).

What the bridge adds: one namespace over many devices, each known by an alias, its tools
and resources under names every MCP client accepts that stay the same across reconnects
(naming.py); which devices are online (`bridge__list_devices`, `bridge://devices`);
photos uploaded during a call as image content; the device panel as an MCP App (app.py).
Its parts: the device slots (slots.py), the clients and events (clients.py), the tool and
resource handlers (calls.py, resources.py); the devices' side of the wire is a
tools.hub.front.DeviceFront, as the backend's. docs/bridge.md says the rest.
"""


import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ToolsListChanged

from .. import devicelib  # noqa: F401 (lib/ on sys.path: umcp's version)
import umcp  # noqa: E402
from . import app as panel_app
from .calls import LIST_DEVICES, BridgeVision, ToolHandlers
from .clients import Clients
from .naming import to_bridge_uri
from .resources import DEVICES_URI, ResourceHandlers
from .slots import DeviceSlots
from ..hub.endpoint import TRANSPORT as ENDPOINT
from ..hub.front import DeviceFront
from ..hub.serialboard import TRANSPORT as SERIAL
from ..hub.xiaozhi import background

VERSION = umcp.__version__  # one release for the firmware and its host programs
_CACHEABLE_LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


class _Server(Server):
    def create_initialization_options(self, notification_options=None, *args, **kwargs):
        # The streamable-HTTP manager calls this without arguments: say on every transport
        # that the tool and resource lists change (devices come and go).
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True, resources_changed=True),
            *args, **kwargs)


class Bridge:
    def __init__(self, token=None, host="127.0.0.1", port=0, device_wait=10.0,
                 request_timeout=30.0, vision_model=None, log=None, user_tools=False,
                 aliases=None, list_ttl=5.0, expect=0, mqtt=None, mqtt_port=0, device_http_port=0,
                 serial=()):
        """mqtt: None (devices over WebSocket only), "embedded" (an amqtt broker in this
        process on mqtt_port) or "mqtt://user:password@host:port": devices come through the
        broker too, with the credentials the OTA endpoint (on device_http_port, beside the
        vision endpoint) issues them, as the backend's do (tools/hub/front.py). serial: ports
        whose boards are served over the line (tools/hub/serialboard.py), no network."""
        self.log = log or (lambda text: None)
        self.devices = DeviceSlots(aliases, user_tools, device_wait, expect, list_ttl, self.log)
        self.bus = InMemorySubscriptionBus()
        self.clients = Clients(self.devices, self.bus, self.log)
        self.calls = ToolHandlers(self.devices, self.clients, request_timeout, self.log)
        self.resources = ResourceHandlers(self.devices, self.log)
        self.devices.on_listed = self.clients.device_listed
        self.devices.on_changed = self._devices_changed
        self.front = DeviceFront(token, host, port, device_http_port, on_device=self._onboard,
                                 on_notification=self._on_notification, on_gone=self.devices.gone,
                                 vision=BridgeVision(self.devices, vision_model, log=self.log), log=self.log,
                                 request_timeout=request_timeout, mqtt=mqtt, mqtt_port=mqtt_port, name="bridge",
                                 serial=serial)
        self.devices.ports = lambda: [board.status() for board in self.front.serial]
        hint = CacheHint(ttl_ms=0, scope="private")
        self.mcp = _Server(
            "umcp-bridge", version=VERSION,
            instructions="umcp devices (ESP32 boards) behind one bridge. Tools and resources are "
                         "named per device (ALIAS__tool, umcp://ALIAS/...); %s lists the devices." % LIST_DEVICES,
            # Per-method defaults; each list handler sets its own TTL (DeviceSlots.list_ttl).
            cache_hints={m: hint for m in _CACHEABLE_LISTS + ("resources/read",)},
            on_list_tools=self.calls.list_tools, on_call_tool=self.calls.call_tool,
            on_list_resources=self.resources.list_resources,
            on_list_resource_templates=self.resources.list_templates,
            on_read_resource=self.resources.read_resource, on_list_prompts=self.resources.list_prompts,
            on_subscribe_resource=self.clients.subscribe, on_unsubscribe_resource=self.clients.unsubscribe,
            on_subscriptions_listen=self.clients.listen_request,
            # Mcp-Param-* header checks (2026 HTTP) want the called tool's schema: from the
            # slot, instead of the SDK running the whole tools/list for every call.
            get_tool_input_schema=self.calls.input_schema)
        # The MCP Apps extension (SEP-2133 `extensions`): bridge__show_panel has a UI.
        self.mcp.extensions[panel_app.EXTENSION_ID] = {}
        # Registered this way, not with on_set_logging_level=, to avoid the deprecation warning
        # (the method is gone from 2026-07-28; older clients still use it).
        self.mcp.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self.clients.set_level)
        self.mcp.add_notification_handler("notifications/initialized", types.NotificationParams,
                                          self.clients.client_ready)

    @property
    def port(self):
        """The WebSocket port devices connect to (known once started)."""
        return self.front.port

    @property
    def ota_url(self):
        """The OTA check-in devices put in their ota_url."""
        return self.front.ota_url

    async def start(self):
        await self.front.start()

    def close_listeners(self):
        """End the 2026 listen streams gracefully (before the HTTP server stops)."""
        self.clients.listen.close()

    async def close(self):
        self.clients.listen.close()
        await self.front.close()

    async def _onboard(self, device):
        vision = {"url": self.front.vision_url, "token": self.front.vision.token_for(device.id)}
        if getattr(device, "transport", None) in (ENDPOINT, SERIAL):
            # A tool provider at the MCP endpoint: as an assistant's client, none. A board on
            # its serial line has no network to upload a photo on.
            vision = None
        await self.devices.onboard(device, vision)

    async def _devices_changed(self):
        """A device came, went, or changed its lists: tell every client that can hear it."""
        await self.clients.publish(ToolsListChanged(), lambda c: c.session.send_tool_list_changed())
        await self.clients.publish(ResourcesListChanged(), lambda c: c.session.send_resource_list_changed())
        await self.clients.resource_updated(DEVICES_URI)

    def _on_notification(self, device, payload):
        slot = self.devices.current(device)
        if slot is None:
            return
        method, params = payload.get("method"), payload.get("params") or {}
        if method == "notifications/progress":
            self.calls.on_progress(params)
        elif method == "notifications/message":
            background(self.clients.device_log(slot, params))
        elif method in ("notifications/tools/list_changed", "notifications/resources/list_changed"):
            background(self.devices.relist(slot, device))
        elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            background(self.clients.resource_updated(to_bridge_uri(slot.alias, params["uri"])))
        else:
            self.log("%s: notification %s not passed on" % (slot.alias, method))
