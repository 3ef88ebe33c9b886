"""Every connected umcp device as one standard MCP server (the SDK's low-level Server).

Devices connect to our xiaozhi endpoint like they would to a backend; MCP clients talk
to us over stdio or streamable HTTP, in either revision family:

* 2026-07-28 (stateless): server/discover, the per-request `_meta` envelope, header
  checks, -32022 for an unknown version, `resultType` and the serverInfo stamp are the
  SDK's (mcp 2.3.0). Change notifications ride `subscriptions/listen`; log messages are
  request-scoped (the request's `_meta` logLevel).
* 2024-11-05 .. 2025-11-25 (initialize, sessions): ping, logging/setLevel (kept per
  session AND forwarded to the devices), resources/subscribe, notifications on the
  session's standalone channel.

What the bridge adds: one namespace over many devices. Each device gets an alias
(`--alias ID=NAME`, else `dev-` + the last 3 bytes of its MAC); its tools are listed as
`ALIAS.` + the device's name and its resources as `umcp://ALIAS/SCHEME/REST` (for the
device's `SCHEME://REST`), so names stay the same across reconnects and when another
device arrives. `bridge.list_devices` (tool) and `bridge://devices` (resource) say which
devices are online. Every result is a typed model (a bare dict fails the 2026 result
check), with honest caching hints. Photos a device uploads to our vision endpoint during
a call come back as MCP image content. `bridge.show_panel` and `ui://umcp/panel` offer the
web console's device panel as an MCP App (tools/bridge/app.py).
"""

import asyncio
import base64
import itertools
import json
import warnings
from collections import Counter

import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.subscriptions import (InMemorySubscriptionBus, ListenHandler, ResourcesListChanged,
                                      ResourceUpdated, ToolsListChanged)
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from tools.bridge import app as panel_app
from tools.bridge.naming import MAX_TOOL_NAME, from_bridge_uri, split_tool_name, to_bridge_uri, tool_name
from tools.bridge.slots import DeviceSlots
from tools.hub.front import DeviceFront
from tools.hub.vision import VisionService
from tools.hub.xiaozhi import DeviceError, DeviceGone, ProtocolViolation, background

VERSION = "0.2.0"
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LIST_DEVICES = "bridge.list_devices"
SHOW_PANEL = "bridge.show_panel"      # an MCP Apps host renders the device panel for it
DEVICE_TOOLS = "bridge.device_tools"  # what the panel lists a device's tools with
DEVICES_URI = "bridge://devices"
RESOURCE_NOT_FOUND_LEGACY = -32002  # 2024-11-05..2025-11-25; 2026-07-28 uses -32602
_CACHEABLE_LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


class LegacyClient:
    """What a 2024-11-05..2025-11-25 connection asked for. Its `session` is the one its
    notifications/initialized came with: its standalone channel outlives any request."""

    def __init__(self, session):
        self.session = session
        self.level = None  # None: no logging/setLevel yet -> every message
        self.uris = set()  # bridge URIs it subscribed to


class _Server(Server):
    def create_initialization_options(self, notification_options=None, *args, **kwargs):
        # The streamable-HTTP manager calls this without arguments: say on every transport
        # that the tool and resource lists change (devices come and go).
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True, resources_changed=True),
            *args, **kwargs)


class BridgeVision(VisionService):
    """The vision endpoint that keeps the photo for the MCP client (see Bridge._call_tool)."""

    def __init__(self, devices, model=None, log=print):
        super().__init__(model, log)
        self.devices = devices  # DeviceSlots

    async def explain(self, question, data, mime_type, device_id=None):
        if self.model is None:
            answer = None
            text = "No vision model on the bridge: the photo goes to the MCP client as an image."
        else:
            answer = text = await self.model.explain(question, data, mime_type)
        slot = self.devices.slots.get(device_id)
        if slot is not None:
            slot.photo = (data, mime_type or "image/jpeg", answer)
            slot.photos += 1
        return text


class Bridge:
    def __init__(self, token=None, host="127.0.0.1", port=0, device_wait=10.0,
                 request_timeout=30.0, vision_model=None, log=None, user_tools=False,
                 aliases=None, list_ttl=5.0, expect=0, mqtt=None, mqtt_port=0, device_http_port=0):
        """mqtt: None (devices over WebSocket only), "embedded" (an amqtt broker in this
        process on mqtt_port) or "mqtt://user:password@host:port": devices come through the
        broker too, with the credentials the OTA endpoint (on device_http_port, beside the
        vision endpoint) issues them, as the backend's do (tools/hub/front.py)."""
        self.request_timeout = request_timeout
        self.list_ttl_ms = int(list_ttl * 1000)
        self.log = log or (lambda text: None)
        self.devices = DeviceSlots(aliases, user_tools, device_wait, expect, self.log)
        self.devices.on_listed = self._device_listed
        self.devices.on_changed = self._devices_changed
        self.front = DeviceFront(token, host, port, device_http_port, on_device=self._onboard,
                                 on_notification=self._on_notification, on_gone=self.devices.gone,
                                 vision=BridgeVision(self.devices, vision_model, log=self.log), log=self.log,
                                 request_timeout=request_timeout, mqtt=mqtt, mqtt_port=mqtt_port, name="bridge")
        self.bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self.bus)
        hint = CacheHint(ttl_ms=0, scope="private")
        self.mcp = _Server(
            "umcp-bridge", version=VERSION,
            instructions="umcp devices (ESP32 boards) behind one bridge. Tools and resources are "
                         "named per device (ALIAS.tool, umcp://ALIAS/...); %s lists the devices." % LIST_DEVICES,
            # Per-method defaults; each list handler sets its own TTL (see _list_ttl).
            cache_hints={m: hint for m in _CACHEABLE_LISTS + ("resources/read",)},
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_list_resources=self._list_resources, on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource, on_list_prompts=self._list_prompts,
            on_subscribe_resource=self._subscribe, on_unsubscribe_resource=self._unsubscribe,
            on_subscriptions_listen=self._listen_request,
            # Mcp-Param-* header checks (2026 HTTP) want the called tool's schema: from the
            # slot, instead of the SDK running the whole tools/list for every call.
            get_tool_input_schema=self._input_schema)
        # The MCP Apps extension (SEP-2133 `extensions`): bridge.show_panel has a UI.
        self.mcp.extensions[panel_app.EXTENSION_ID] = {}
        # Registered this way, not with on_set_logging_level=, to avoid the deprecation warning
        # (the method is gone from 2026-07-28; older clients still use it).
        self.mcp.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self._set_level)
        self.mcp.add_notification_handler("notifications/initialized", types.NotificationParams,
                                          self._client_ready)
        self._legacy = {}  # id(connection) -> LegacyClient
        self._subscribed = Counter()  # bridge URI -> subscribers (legacy sessions + listen streams)
        self._progress = {}  # progress token we gave a device -> [the client's request session, last send]
        self._log_requests = {}  # device id -> {id(ctx): (ctx, level index)}: 2026 calls that opted in to logs
        self._tokens = itertools.count(1)

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
        self._listen.close()

    async def close(self):
        self._listen.close()
        await self.front.close()

    # ------------------------------------------------------------------ devices

    async def _onboard(self, device):
        vision = {"url": self.front.vision_url, "token": self.front.vision.token_for(device.id)}
        await self.devices.onboard(device, vision)

    async def _device_listed(self, slot):
        """What the clients asked for, passed on to a device that (re)connected."""
        if slot.device.capabilities.get("logging") is not None:
            await self._forward_level(slot)
        for uri, count in list(self._subscribed.items()):
            parsed = from_bridge_uri(uri)
            if count and parsed and parsed[0] == slot.alias:
                await self._device_subscription(slot, parsed[1], True)

    async def _devices_changed(self):
        """A device came, went, or changed its lists: tell every client that can hear it."""
        await self._publish(ToolsListChanged(), lambda c: c.session.send_tool_list_changed())
        await self._publish(ResourcesListChanged(), lambda c: c.session.send_resource_list_changed())
        await self._resource_updated(DEVICES_URI)

    async def _resource_updated(self, uri):
        await self._publish(ResourceUpdated(uri=uri), lambda c: c.session.send_resource_updated(uri),
                            lambda c: uri in c.uris)

    async def _publish(self, event, send, wanted=lambda client: True):
        """`event` to the 2026 listen streams, `send(client)` to the legacy sessions that want it."""
        await self.bus.publish(event)
        for key, client in list(self._legacy.items()):
            if wanted(client):
                try:
                    await send(client)
                except Exception as error:  # that client went away: forget it
                    self.log("dropping a client session: %r" % error)
                    self._forget(key)

    def _on_notification(self, device, payload):
        slot = self.devices.current(device)
        if slot is None:
            return
        method, params = payload.get("method"), payload.get("params") or {}
        if method == "notifications/progress":
            entry = self._progress.get(params.get("progressToken"))
            if entry is not None:
                # In order, and all sent before the call's result (which awaits the last one).
                entry[1] = background(self._chain(entry[1], entry[0].report_progress(
                    params.get("progress", 0), params.get("total"), params.get("message"))))
        elif method == "notifications/message":
            background(self._device_log(slot, params))
        elif method in ("notifications/tools/list_changed", "notifications/resources/list_changed"):
            background(self.devices.relist(slot, device))
        elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            background(self._resource_updated(to_bridge_uri(slot.alias, params["uri"])))
        else:
            self.log("%s: notification %s not passed on" % (slot.alias, method))

    @staticmethod
    async def _chain(previous, coro):
        if previous is not None:
            await asyncio.wait([previous])
        try:
            await coro
        except Exception:  # the client went away: nothing to report to
            pass

    async def _device_log(self, slot, params):
        level = params.get("level") if params.get("level") in LEVELS else "info"
        rank = LEVELS.index(level)
        logger = params.get("logger")
        logger = "%s/%s" % (slot.alias, logger) if logger else slot.alias
        data = params.get("data")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            # 2026-07-28: only on the stream of a running call to this device that opted in.
            for ctx, wanted in list(self._log_requests.get(slot.id, {}).values()):
                if rank >= wanted:
                    try:
                        await ctx.session.send_log_message(level, data, logger, related_request_id=ctx.request_id)
                    except Exception as error:
                        self.log("a log message was not delivered: %r" % error)
            # Older revisions: every session whose logging/setLevel lets it through.
            for key, client in list(self._legacy.items()):
                if client.level is None or rank >= LEVELS.index(client.level):
                    try:
                        await client.session.send_log_message(level, data, logger)
                    except Exception as error:
                        self.log("dropping a client session: %r" % error)
                        self._forget(key)

    def _wanted_level(self, slot):
        """The most verbose level any client wants from this device (None: nobody said)."""
        ranks = [LEVELS.index(c.level) if c.level else 0 for c in self._legacy.values()]
        ranks += [rank for _, rank in self._log_requests.get(slot.id, {}).values()]
        return LEVELS[min(ranks)] if ranks else None

    async def _forward_level(self, slot):
        """logging/setLevel to the device when what the clients want changed."""
        device, level = slot.device, self._wanted_level(slot)
        if device is None or level is None or level == slot.level:
            return
        if device.capabilities.get("logging") is None:
            return
        await device.request("logging/setLevel", {"level": level})
        slot.level = level

    # ------------------------------------------------------------------ clients

    def _legacy_client(self, ctx):
        if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None
        # ctx.session is made per request; the connection is what lasts (no public accessor).
        connection = ctx.session._connection
        key = id(connection)
        client = self._legacy.get(key)
        if client is None:
            client = self._legacy[key] = LegacyClient(ctx.session)
            # The SDK unwinds the connection's exit stack when the session ends (stdio EOF,
            # HTTP DELETE or idle timeout): forget the client and its subscriptions then.
            connection.exit_stack.callback(self._forget, key)
        return client

    def _forget(self, key):
        client = self._legacy.pop(key, None)
        if client is not None:
            for uri in client.uris:
                background(self._count_subscription(uri, -1))

    async def _client_ready(self, ctx, params):
        self._legacy_client(ctx)

    def _list_ttl(self):
        """Tool and resource lists change only when a device comes, goes or says its list
        changed, and each of those is published (listen streams, list_changed). So a list
        stays good until then: list_ttl, but 0 while a device is still onboarding."""
        if self.devices.onboarding():
            return 0
        return self.list_ttl_ms

    # tools

    def _bridge_tools(self):
        device = {"type": "string", "description": "the device's alias (see %s)" % LIST_DEVICES}
        return [types.Tool(
            name=LIST_DEVICES, title="Devices behind the bridge",
            description="The umcp devices this bridge has seen: alias (the prefix of their tools "
                        "and resources), Device-Id, online or not, server info.",
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False)),
            types.Tool(
            name=SHOW_PANEL, title="Show a device's control panel",
            description="Shows the user the controls of one device (every tool as a form, volume "
                        "as a slider) inline, in clients that render MCP Apps; elsewhere it just "
                        "names the device. Without `device`, the first one online.",
            input_schema={"type": "object", "properties": {"device": device}, "additionalProperties": False},
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
            meta=panel_app.tool_meta()),
            types.Tool(
            name=DEVICE_TOOLS, title="A device's tools, by its own names",
            description="The tools/list entries of one device as the device names them (call them "
                        "as ALIAS.name); withUserTools marks the owner's tools userOnly (they are "
                        "there only when the bridge runs with --user-tools). The panel uses it.",
            input_schema={"type": "object", "properties": {"device": device, "withUserTools": {"type": "boolean"}},
                          "required": ["device"], "additionalProperties": False},
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
            meta=panel_app.tool_meta(visibility=["app"]))]

    async def _list_tools(self, ctx, params):
        if params is not None and params.cursor:
            raise MCPError(types.INVALID_PARAMS, "invalid cursor %r (the bridge lists everything at once)"
                           % params.cursor)
        await self.devices.wait_settled()
        tools = self._bridge_tools()
        for slot in self.devices.online():
            for name, entry in slot.tools.items():
                full = tool_name(slot.alias, name)
                if full is None:
                    self.log("%s: tool %s left out: name over %d characters" % (slot.alias, name, MAX_TOOL_NAME))
                    continue
                try:
                    tools.append(types.Tool.model_validate(dict(entry, name=full)))
                except ValueError as error:
                    self.log("%s: tool %s left out: %s" % (slot.alias, name, error))
        return types.ListToolsResult(tools=tools, ttl_ms=self._list_ttl(), cache_scope="private")

    def _input_schema(self, name):
        for tool in self._bridge_tools():
            if tool.name == name:
                return tool.input_schema
        alias, tool = split_tool_name(name)
        slot = self.devices.by_alias(alias)
        entry = slot.tools.get(tool) if slot is not None and slot.online else None
        return entry.get("inputSchema") if entry else None

    def _resolve_tool(self, name):
        alias, tool = split_tool_name(name)
        slot = self.devices.by_alias(alias)
        if slot is None or not tool:
            known = ", ".join(s.alias for s in self.devices.online()) or "none online"
            raise MCPError(types.INVALID_PARAMS, "Unknown tool: %s (no device %r; devices: %s)"
                           % (name, alias, known))
        if not slot.online:
            raise MCPError(types.INVALID_PARAMS, "Unknown tool: %s: device %s (%s) is offline"
                           % (name, slot.alias, slot.id))
        if tool not in slot.tools:
            raise MCPError(types.INVALID_PARAMS, "Unknown tool: %s (device %s has no tool %s)"
                           % (name, slot.alias, tool))
        return slot, tool

    async def _call_tool(self, ctx, params):
        if params.name == LIST_DEVICES:
            devices = self.devices.info()
            return types.CallToolResult(content=[types.TextContent(text=json.dumps(devices))],
                                        structured_content={"devices": devices})
        if params.name == SHOW_PANEL:
            return await self._show_panel(params.arguments or {})
        if params.name == DEVICE_TOOLS:
            return await self._device_tools(params.arguments or {})
        slot, tool = self._resolve_tool(params.name)
        device = slot.device
        request_meta = (ctx.params or {}).get("_meta") or {}
        meta, token = None, None
        if request_meta.get("progressToken") is not None:
            token = "bridge-%d" % next(self._tokens)
            self._progress[token] = [ctx.session, None]  # the session, its last progress send
            meta = {"progressToken": token}
        wanted = request_meta.get(types.LOG_LEVEL_META_KEY)
        log_requests = self._log_requests.setdefault(slot.id, {})
        if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS and wanted in LEVELS:
            log_requests[id(ctx)] = (ctx, LEVELS.index(wanted))
        photos = slot.photos
        try:
            if log_requests:
                await self._forward_level(slot)
            raw = await device.call_tool(tool, params.arguments, meta)
            if token is not None and self._progress[token][1] is not None:
                await asyncio.wait([self._progress[token][1]], timeout=5)
        except DeviceError as error:
            if error.code == types.INVALID_PARAMS and ctx.protocol_version >= "2025-11-25":
                # From 2025-11-25 argument errors are tool results the model can see.
                return types.CallToolResult(is_error=True, content=[types.TextContent(
                    text="%s: %s" % (params.name, error.message))])
            raise MCPError(error.code, "%s: %s" % (params.name, error.message), error.data) from None
        except DeviceGone:
            raise MCPError(types.INTERNAL_ERROR, "device %s (%s) disconnected before answering %s"
                           % (slot.alias, slot.id, params.name)) from None
        except asyncio.TimeoutError:
            raise MCPError(types.INTERNAL_ERROR, "device %s did not answer %s within %g s"
                           % (slot.alias, params.name, self.request_timeout)) from None
        except ProtocolViolation as error:
            raise MCPError(types.INTERNAL_ERROR, "device %s: %s" % (slot.alias, error)) from None
        finally:
            self._progress.pop(token, None)
            log_requests.pop(id(ctx), None)
        try:
            result = types.CallToolResult.model_validate(raw)
        except ValueError:
            raise MCPError(types.INTERNAL_ERROR, "device %s answered %s with an invalid result"
                           % (slot.alias, params.name)) from None
        if slot.photos != photos and slot.photo is not None and not result.is_error:
            result = self._with_photo(slot, result)
        return result

    def _panel_device(self, alias):
        """The online slot `alias` names (the first online one without), or an error text."""
        wanted = alias if isinstance(alias, str) and alias else None
        online = self.devices.online()
        if wanted is None:
            return (online[0], None) if online else (None, "no device is online")
        slot = self.devices.by_alias(wanted)
        if slot is None:
            return None, "no device %r (devices: %s)" % (wanted, ", ".join(s.alias for s in online) or "none online")
        if not slot.online:
            return None, "device %s (%s) is offline" % (slot.alias, slot.id)
        return slot, None

    async def _show_panel(self, arguments):
        await self.devices.wait_settled()
        slot, error = self._panel_device(arguments.get("device"))
        if error:
            return types.CallToolResult(is_error=True, content=[types.TextContent(text=error)])
        info = slot.info()
        return types.CallToolResult(
            content=[types.TextContent(text="The controls of %s (%s, %d tools) are shown to the user "
                                            "(in clients that render MCP Apps)." % (slot.alias, slot.id, info["tools"]))],
            structured_content={"device": slot.alias, "device_id": slot.id, "tools": info["tools"],
                                "online": [s.alias for s in self.devices.online()]})

    async def _device_tools(self, arguments):
        if not arguments.get("device"):
            return types.CallToolResult(is_error=True, content=[types.TextContent(text="which device? (device)")])
        slot, error = self._panel_device(arguments["device"])
        if error:
            return types.CallToolResult(is_error=True, content=[types.TextContent(text=error)])
        tools = list(slot.tools.values())
        if self.devices.user_tools:  # slot.tools has the owner's tools too: which are they?
            try:
                plain = {t.get("name") for t in await slot.device.list_all("tools/list", "tools")
                         if isinstance(t, dict)}
            except (DeviceError, DeviceGone, ProtocolViolation, asyncio.TimeoutError) as failure:
                return types.CallToolResult(is_error=True, content=[types.TextContent(
                    text="%s: listing failed: %s" % (slot.alias, failure or "timed out"))])
            if arguments.get("withUserTools"):
                tools = [t if t.get("name") in plain else dict(t, userOnly=True) for t in tools]
            else:
                tools = [t for t in tools if t.get("name") in plain]
        return types.CallToolResult(
            content=[types.TextContent(text="%s: %d tools: %s" % (
                slot.alias, len(tools), ", ".join(str(t.get("name")) for t in tools)))],
            structured_content={"device": slot.alias, "tools": tools})

    def _with_photo(self, slot, result):
        """The photo the device uploaded during this call, as an image block, instead of the
        device's text (the vision endpoint's body); the model's answer beside it if any."""
        data, mime_type, answer = slot.photo
        content = [types.ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)]
        if answer:
            content.append(types.TextContent(text=answer))
        return types.CallToolResult(content=content, is_error=False)

    # resources

    def _not_found(self, ctx, uri, why=""):
        code = types.INVALID_PARAMS if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS \
            else RESOURCE_NOT_FOUND_LEGACY
        return MCPError(code, "Resource not found: %s%s" % (uri, why), {"uri": uri})

    def _devices_resource(self):
        return types.Resource(uri=DEVICES_URI, name="devices", title="Devices behind the bridge",
                              description="alias, Device-Id and online state of every device seen",
                              mime_type="application/json")

    def _panel_resource(self):
        return types.Resource(uri=panel_app.PANEL_URI, name="panel", title="Device control panel",
                              description="The web console's device panel as an MCP App (the view of %s)"
                                          % SHOW_PANEL, mime_type=panel_app.MIME_TYPE)

    async def _list_resources(self, ctx, params):
        if params is not None and params.cursor:
            raise MCPError(types.INVALID_PARAMS, "invalid cursor %r" % params.cursor)
        await self.devices.wait_settled()
        resources = [self._devices_resource(), self._panel_resource()]
        for slot in self.devices.online():
            for entry in slot.resources:
                try:
                    resources.append(types.Resource.model_validate(
                        dict(entry, uri=to_bridge_uri(slot.alias, entry["uri"]))))
                except (KeyError, TypeError, ValueError) as error:
                    self.log("%s: resource left out: %s" % (slot.alias, error))
        return types.ListResourcesResult(resources=resources, ttl_ms=self._list_ttl(), cache_scope="private")

    async def _list_templates(self, ctx, params):
        await self.devices.wait_settled()
        templates = []
        for slot in self.devices.online():
            for entry in slot.templates:
                try:
                    templates.append(types.ResourceTemplate.model_validate(
                        dict(entry, uriTemplate=to_bridge_uri(slot.alias, entry["uriTemplate"]))))
                except (KeyError, TypeError, ValueError) as error:
                    self.log("%s: resource template left out: %s" % (slot.alias, error))
        return types.ListResourceTemplatesResult(resource_templates=templates, ttl_ms=self._list_ttl(),
                                                 cache_scope="private")

    async def _list_prompts(self, ctx, params):
        return types.ListPromptsResult(prompts=[], ttl_ms=self._list_ttl(), cache_scope="private")

    def _resolve_uri(self, ctx, uri):
        parsed = from_bridge_uri(uri)
        slot = self.devices.by_alias(parsed[0]) if parsed else None
        if slot is None:
            raise self._not_found(ctx, uri, " (no such device)" if parsed else "")
        if not slot.online:
            raise self._not_found(ctx, uri, ": device %s (%s) is offline" % (slot.alias, slot.id))
        return slot, parsed[1]

    async def _read_resource(self, ctx, params):
        uri = str(params.uri)
        if uri == DEVICES_URI:
            devices = self.devices.info()
            return types.ReadResourceResult(contents=[types.TextResourceContents(
                uri=DEVICES_URI, mime_type="application/json", text=json.dumps(devices))],
                ttl_ms=0, cache_scope="private")
        if uri == panel_app.PANEL_URI:
            # Built from the console's files at each read: one panel, two hosts.
            return types.ReadResourceResult(contents=[types.TextResourceContents(
                uri=uri, mime_type=panel_app.MIME_TYPE, text=panel_app.panel_html())],
                ttl_ms=0, cache_scope="private")
        slot, device_uri = self._resolve_uri(ctx, uri)
        try:
            raw = await slot.device.request("resources/read", {"uri": device_uri})
        except DeviceError as error:
            if error.code in (types.INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY):
                raise self._not_found(ctx, uri) from None
            raise MCPError(error.code, "%s: %s" % (uri, error.message), error.data) from None
        except DeviceGone:
            raise MCPError(types.INTERNAL_ERROR, "device %s (%s) disconnected before answering %s"
                           % (slot.alias, slot.id, uri)) from None
        except asyncio.TimeoutError:
            raise MCPError(types.INTERNAL_ERROR, "device %s did not answer %s in time" % (slot.alias, uri)) from None
        contents = []
        for item in (raw or {}).get("contents") or []:
            if isinstance(item, dict) and isinstance(item.get("uri"), str):
                item = dict(item, uri=to_bridge_uri(slot.alias, item["uri"]))
            contents.append(item)
        try:
            # Device state changes at any moment: a read is good for now only.
            return types.ReadResourceResult.model_validate({"contents": contents, "ttlMs": 0,
                                                            "cacheScope": "private"})
        except ValueError:
            raise MCPError(types.INTERNAL_ERROR, "device %s answered %s with invalid contents"
                           % (slot.alias, uri)) from None

    async def _subscribe(self, ctx, params):
        # Any URI: a device that is away (or not yet seen) may bring it; it is subscribed to
        # on the device when it (re)connects.
        uri = str(params.uri)
        client = self._legacy_client(ctx)
        if client is not None and uri not in client.uris:
            client.uris.add(uri)
            await self._count_subscription(uri, +1)
        return types.EmptyResult()

    async def _unsubscribe(self, ctx, params):
        uri = str(params.uri)
        client = self._legacy_client(ctx)
        if client is not None and uri in client.uris:
            client.uris.discard(uri)
            await self._count_subscription(uri, -1)
        return types.EmptyResult()

    async def _listen_request(self, ctx, params):
        """subscriptions/listen (2026-07-28): the SDK's handler serves the stream; we forward
        its resource subscriptions to the devices for as long as it lasts."""
        notifications = params.notifications
        uris = list(dict.fromkeys(notifications.resource_subscriptions or [])) if notifications else []
        for uri in uris:
            await self._count_subscription(uri, +1)
        try:
            return await self._listen(ctx, params)
        finally:
            for uri in uris:
                background(self._count_subscription(uri, -1))

    async def _count_subscription(self, uri, delta):
        before = self._subscribed[uri]
        self._subscribed[uri] = max(0, before + delta)
        if bool(before) == bool(self._subscribed[uri]):
            return
        parsed = from_bridge_uri(uri)
        slot = self.devices.by_alias(parsed[0]) if parsed else None
        if slot is not None and slot.online:
            await self._device_subscription(slot, parsed[1], delta > 0)

    async def _device_subscription(self, slot, device_uri, on):
        if not (slot.device.capabilities.get("resources") or {}).get("subscribe"):
            return
        try:
            await slot.device.request("resources/subscribe" if on else "resources/unsubscribe", {"uri": device_uri})
        except (DeviceError, DeviceGone, asyncio.TimeoutError) as error:
            self.log("%s: %s %s failed: %s" % (slot.alias, "subscribe" if on else "unsubscribe",
                                               device_uri, error or "timed out"))

    # logging (2024-11-05..2025-11-25)

    async def _set_level(self, ctx, params):
        client = self._legacy_client(ctx)
        if client is not None:
            client.level = params.level
        for slot in self.devices.online():
            try:
                await self._forward_level(slot)
            except (DeviceError, DeviceGone, asyncio.TimeoutError) as error:
                self.log("%s: logging/setLevel failed: %s" % (slot.alias, error or "timed out"))
        return types.EmptyResult()
