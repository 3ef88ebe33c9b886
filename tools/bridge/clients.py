"""What the bridge's MCP clients asked for, and how it reaches them and the devices.

- Events go to both eras (`publish`): the 2026-07-28 listen streams (the subscription
  bus) and each remembered 2024-11-05..2025-11-25 session (LegacyClient, keyed on the
  connection its notifications/initialized came on: `ctx.session` is made per request).
- Subscriptions are counted per bridge URI over both eras (2025 subscribe/unsubscribe,
  2026 listen filters for the stream's life): the first subscriber subscribes on the
  device, the last one leaving unsubscribes; a reconnecting device is subscribed again.
- Log messages from a device go, on 2026-07-28, to the calls in flight to it that asked
  (`_meta` logLevel: `log_requests`), and to each 2025 session whose logging/setLevel lets
  them through; each device is asked for the most verbose level any client wants.
"""

import asyncio
import warnings
from collections import Counter

import mcp_types as types
from mcp.server.subscriptions import ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from .naming import from_bridge_uri
from ..hub.xiaozhi import DeviceError, DeviceGone, background

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class LegacyClient:
    """What a 2024-11-05..2025-11-25 connection asked for. Its `session` is the one its
    notifications/initialized came with: its standalone channel outlives any request."""

    def __init__(self, session):
        self.session = session
        self.level = None  # None: no logging/setLevel yet -> every message
        self.uris = set()  # bridge URIs it subscribed to


class Clients:
    def __init__(self, devices, bus, log):
        self.devices = devices  # DeviceSlots
        self.bus = bus  # the SDK's InMemorySubscriptionBus: the 2026 listen streams
        self.log = log
        self.listen = ListenHandler(bus)
        self.legacy = {}  # id(connection) -> LegacyClient
        self.log_requests = {}  # device id -> {id(ctx): (ctx, level index)}: 2026 calls that opted in to logs
        self._subscribed = Counter()  # bridge URI -> subscribers (legacy sessions + listen streams)

    # ---- 2024-11-05..2025-11-25 sessions

    def legacy_client(self, ctx):
        if ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None
        # ctx.session is made per request; the connection is what lasts (no public accessor).
        connection = ctx.session._connection
        key = id(connection)
        client = self.legacy.get(key)
        if client is None:
            client = self.legacy[key] = LegacyClient(ctx.session)
            # The SDK unwinds the connection's exit stack when the session ends (stdio EOF,
            # HTTP DELETE or idle timeout): forget the client and its subscriptions then.
            connection.exit_stack.callback(self.forget, key)
        return client

    def forget(self, key):
        client = self.legacy.pop(key, None)
        if client is not None:
            for uri in client.uris:
                background(self._count_subscription(uri, -1))

    async def client_ready(self, ctx, params):
        self.legacy_client(ctx)

    # ---- events

    async def publish(self, event, send, wanted=lambda client: True):
        """`event` to the 2026 listen streams, `send(client)` to the legacy sessions that want it."""
        await self.bus.publish(event)
        for key, client in list(self.legacy.items()):
            if wanted(client):
                try:
                    await send(client)
                except Exception as error:  # that client went away: forget it
                    self.log("dropping a client session: %r" % error)
                    self.forget(key)

    async def resource_updated(self, uri):
        await self.publish(ResourceUpdated(uri=uri), lambda c: c.session.send_resource_updated(uri),
                           lambda c: uri in c.uris)

    # ---- subscriptions

    async def subscribe(self, ctx, params):
        # Any URI: a device that is away (or not yet seen) may bring it; it is subscribed to
        # on the device when it (re)connects.
        uri = str(params.uri)
        client = self.legacy_client(ctx)
        if client is not None and uri not in client.uris:
            client.uris.add(uri)
            await self._count_subscription(uri, +1)
        return types.EmptyResult()

    async def unsubscribe(self, ctx, params):
        uri = str(params.uri)
        client = self.legacy_client(ctx)
        if client is not None and uri in client.uris:
            client.uris.discard(uri)
            await self._count_subscription(uri, -1)
        return types.EmptyResult()

    async def listen_request(self, ctx, params):
        """subscriptions/listen (2026-07-28): the SDK's handler serves the stream; we forward
        its resource subscriptions to the devices for as long as it lasts."""
        notifications = params.notifications
        uris = list(dict.fromkeys(notifications.resource_subscriptions or [])) if notifications else []
        for uri in uris:
            await self._count_subscription(uri, +1)
        try:
            return await self.listen(ctx, params)
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

    async def device_listed(self, slot):
        """What the clients asked for, passed on to a device that (re)connected."""
        if slot.device.capabilities.get("logging") is not None:
            await self.forward_level(slot)
        for uri, count in list(self._subscribed.items()):
            parsed = from_bridge_uri(uri)
            if count and parsed and parsed[0] == slot.alias:
                await self._device_subscription(slot, parsed[1], True)

    # ---- logging

    async def device_log(self, slot, params):
        level = params.get("level") if params.get("level") in LEVELS else "info"
        rank = LEVELS.index(level)
        logger = params.get("logger")
        logger = "%s/%s" % (slot.alias, logger) if logger else slot.alias
        data = params.get("data")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            # 2026-07-28: only on the stream of a running call to this device that opted in.
            for ctx, wanted in list(self.log_requests.get(slot.id, {}).values()):
                if rank >= wanted:
                    try:
                        await ctx.session.send_log_message(level, data, logger, related_request_id=ctx.request_id)
                    except Exception as error:
                        self.log("a log message was not delivered: %r" % error)
            # Older revisions: every session whose logging/setLevel lets it through.
            for key, client in list(self.legacy.items()):
                if client.level is None or rank >= LEVELS.index(client.level):
                    try:
                        await client.session.send_log_message(level, data, logger)
                    except Exception as error:
                        self.log("dropping a client session: %r" % error)
                        self.forget(key)

    def _wanted_level(self, slot):
        """The most verbose level any client wants from this device (None: nobody said)."""
        ranks = [LEVELS.index(c.level) if c.level else 0 for c in self.legacy.values()]
        ranks += [rank for _, rank in self.log_requests.get(slot.id, {}).values()]
        return LEVELS[min(ranks)] if ranks else None

    async def forward_level(self, slot):
        """logging/setLevel to the device when what the clients want changed."""
        device, level = slot.device, self._wanted_level(slot)
        if device is None or level is None or level == slot.level:
            return
        if device.capabilities.get("logging") is None:
            return
        await device.request("logging/setLevel", {"level": level})
        slot.level = level

    async def set_level(self, ctx, params):
        """logging/setLevel (2024-11-05..2025-11-25)."""
        client = self.legacy_client(ctx)
        if client is not None:
            client.level = params.level
        for slot in self.devices.online():
            try:
                await self.forward_level(slot)
            except (DeviceError, DeviceGone, asyncio.TimeoutError) as error:
                self.log("%s: logging/setLevel failed: %s" % (slot.alias, error or "timed out"))
        return types.EmptyResult()
