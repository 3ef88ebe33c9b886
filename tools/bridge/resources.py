"""The bridge's resources: its own (bridge://devices, the panel ui://umcp/panel) and every
online device's as umcp://ALIAS/SCHEME/REST, listed in one page and read on the device.
Lists carry the slots' TTL; a read is good for now only (ttlMs 0). An unknown or offline
URI is -32002 on the legacy revisions, -32602 on 2026-07-28."""

import asyncio
import json

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from . import app as panel_app
from .calls import SHOW_PANEL
from .naming import from_bridge_uri, to_bridge_uri
from ..hub.xiaozhi import DeviceError, DeviceGone

DEVICES_URI = "bridge://devices"
RESOURCE_NOT_FOUND_LEGACY = -32002  # 2024-11-05..2025-11-25; 2026-07-28 uses -32602


class ResourceHandlers:
    def __init__(self, devices, log):
        self.devices = devices  # DeviceSlots
        self.log = log

    def not_found(self, ctx, uri, why=""):
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

    def _devices_entries(self, listed, key, model, what):
        """Every online device's `listed` entries (slot.resources or slot.templates) as
        `model`, their `key` URI made the bridge's; one that does not validate is left out."""
        entries = []
        for slot in self.devices.online():
            for entry in getattr(slot, listed):
                try:
                    entries.append(model.model_validate(dict(entry, **{key: to_bridge_uri(slot.alias, entry[key])})))
                except (KeyError, TypeError, ValueError) as error:
                    self.log("%s: %s left out: %s" % (slot.alias, what, error))
        return entries

    async def list_resources(self, ctx, params):
        if params is not None and params.cursor:
            raise MCPError(types.INVALID_PARAMS, "invalid cursor %r" % params.cursor)
        await self.devices.wait_settled()
        resources = [self._devices_resource(), self._panel_resource()]
        resources += self._devices_entries("resources", "uri", types.Resource, "resource")
        return types.ListResourcesResult(resources=resources, ttl_ms=self.devices.list_ttl(), cache_scope="private")

    async def list_templates(self, ctx, params):
        await self.devices.wait_settled()
        templates = self._devices_entries("templates", "uriTemplate", types.ResourceTemplate, "resource template")
        return types.ListResourceTemplatesResult(resource_templates=templates, ttl_ms=self.devices.list_ttl(),
                                                 cache_scope="private")

    async def list_prompts(self, ctx, params):
        return types.ListPromptsResult(prompts=[], ttl_ms=self.devices.list_ttl(), cache_scope="private")

    def _resolve_uri(self, ctx, uri):
        parsed = from_bridge_uri(uri)
        slot = self.devices.by_alias(parsed[0]) if parsed else None
        if slot is None:
            raise self.not_found(ctx, uri, " (no such device)" if parsed else "")
        if not slot.online:
            raise self.not_found(ctx, uri, ": device %s (%s) is offline" % (slot.alias, slot.id))
        return slot, parsed[1]

    async def read_resource(self, ctx, params):
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
                raise self.not_found(ctx, uri) from None
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
