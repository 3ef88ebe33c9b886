"""The bridge's tools: its own (bridge__list_devices, bridge__show_panel,
bridge__device_tools) and every online device's under the names naming.ToolNames gives
them (kitchen__audio_speaker_set_volume), listed in one page and called on the device by
the device's own name.

A call is resolved against the slot's listed tools (unknown device, offline device,
unknown tool: -32602 naming it, nothing sent). A device's -32602 becomes an `isError`
result from 2025-11-25. Progress tokens are the bridge's own; progress reaches the client
in order and before the result. A photo the device uploaded to the vision endpoint during
the call (BridgeVision keeps it on the slot) comes back as an image block instead of the
device's text, with the model's answer beside it when one is configured.
"""

import asyncio
import base64
import itertools
import json

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from . import app as panel_app
from .clients import LEVELS
from .naming import ToolNames, guess_alias, own_tool
from ..hub.vision import VisionService
from ..hub.xiaozhi import DeviceError, DeviceGone, ProtocolViolation, background

LIST_DEVICES = own_tool("list_devices")
SHOW_PANEL = own_tool("show_panel")      # an MCP Apps host renders the device panel for it
DEVICE_TOOLS = own_tool("device_tools")  # what the panel lists a device's tools with
OWN_TOOLS = (LIST_DEVICES, SHOW_PANEL, DEVICE_TOOLS)


class BridgeVision(VisionService):
    """The vision endpoint that keeps the photo for the MCP client (see ToolHandlers.call_tool)."""

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


class ToolHandlers:
    def __init__(self, devices, clients, request_timeout, log):
        self.devices = devices  # DeviceSlots
        self.clients = clients  # Clients: the calls that asked for log messages
        self.request_timeout = request_timeout
        self.log = log
        self._progress = {}  # progress token we gave a device -> [the client's request session, last send]
        self._tokens = itertools.count(1)

    def on_progress(self, params):
        """A device's notifications/progress, to the client whose call it belongs to."""
        entry = self._progress.get(params.get("progressToken"))
        if entry is not None:
            # In order, and all sent before the call's result (which awaits the last one).
            entry[1] = background(self._chain(entry[1], entry[0].report_progress(
                params.get("progress", 0), params.get("total"), params.get("message"))))

    @staticmethod
    async def _chain(previous, coro):
        if previous is not None:
            await asyncio.wait([previous])
        try:
            await coro
        except Exception:  # the client went away: nothing to report to
            pass

    def bridge_tools(self):
        device = {"type": "string", "description": "the device's alias (see %s)" % LIST_DEVICES}
        return [types.Tool(
            name=LIST_DEVICES, title="Devices behind the bridge",
            description="The umcp devices this bridge has seen: alias (the prefix of their tools "
                        "and resources), Device-Id, online or not, server info; and where each "
                        "board on a serial port (--serial) stands.",
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
            description="The tools/list entries of one device as the device names them, each with "
                        "bridgeName, the name to call it by here; withUserTools marks the owner's "
                        "tools userOnly (they are there only when the bridge runs with --user-tools). "
                        "The panel uses it.",
            input_schema={"type": "object", "properties": {"device": device, "withUserTools": {"type": "boolean"}},
                          "required": ["device"], "additionalProperties": False},
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
            meta=panel_app.tool_meta(visibility=["app"]))]

    def names(self):
        """The names of every known device's tools (naming.ToolNames), made afresh: they
        depend only on which tools the devices have, never on who is online or asks."""
        entries = [(slot.alias, name) for slot in self.devices.slots.values() for name in slot.tools
                   if isinstance(name, str)]
        return ToolNames(entries, OWN_TOOLS)

    async def list_tools(self, ctx, params):
        if params is not None and params.cursor:
            raise MCPError(types.INVALID_PARAMS, "invalid cursor %r (the bridge lists everything at once)"
                           % params.cursor)
        await self.devices.wait_settled()
        tools = self.bridge_tools()
        names = self.names()
        for slot in self.devices.online():
            for name, entry in slot.tools.items():
                try:
                    tools.append(types.Tool.model_validate(dict(entry, name=names.of[(slot.alias, name)])))
                except (KeyError, ValueError) as error:
                    self.log("%s: tool %s left out: %s" % (slot.alias, name, error))
        return types.ListToolsResult(tools=tools, ttl_ms=self.devices.list_ttl(), cache_scope="private")

    def input_schema(self, name):
        for tool in self.bridge_tools():
            if tool.name == name:
                return tool.input_schema
        found = self.names().find(name)
        slot = self.devices.by_alias(found[0]) if found else None
        entry = slot.tools.get(found[1]) if slot is not None and slot.online else None
        return entry.get("inputSchema") if entry else None

    def _resolve_tool(self, name):
        found = self.names().find(name)
        alias = found[0] if found else guess_alias(name)
        slot = self.devices.by_alias(alias) if alias else None
        if slot is None:
            known = ", ".join(s.alias for s in self.devices.online()) or "none online"
            raise MCPError(types.INVALID_PARAMS, "Unknown tool: %s (no device %r; devices: %s)"
                           % (name, alias, known))
        if not slot.online:
            raise MCPError(types.INVALID_PARAMS, "Unknown tool: %s: device %s (%s) is offline"
                           % (name, slot.alias, slot.id))
        if found is None:
            raise MCPError(types.INVALID_PARAMS, "Unknown tool: %s (device %s has no such tool; %s "
                           "lists them)" % (name, slot.alias, LIST_DEVICES))
        return slot, found[1]

    async def call_tool(self, ctx, params):
        if params.name == LIST_DEVICES:
            devices = self.devices.info()
            listed = {"devices": devices}
            ports = self.devices.ports()
            if ports:  # where each --serial board stands: why one is not online, say
                listed["serial"] = ports
            return types.CallToolResult(content=[types.TextContent(text=json.dumps(listed if ports else devices))],
                                        structured_content=listed)
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
        log_requests = self.clients.log_requests.setdefault(slot.id, {})
        if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS and wanted in LEVELS:
            log_requests[id(ctx)] = (ctx, LEVELS.index(wanted))
        photos = slot.photos
        try:
            if log_requests:
                await self.clients.forward_level(slot)
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
        names = self.names()
        tools = [dict(entry, bridgeName=names.of[(slot.alias, name)]) for name, entry in slot.tools.items()
                 if isinstance(name, str)]
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
