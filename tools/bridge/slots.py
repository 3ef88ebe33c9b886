"""The devices behind the bridge: one Slot per Device-Id ever seen, kept across reconnects,
and their onboarding (initialize, then every page of their tool, resource and template
lists) each time one connects."""

import asyncio

from .naming import BRIDGE, default_alias, unique_alias
from ..hub.xiaozhi import DeviceError, DeviceGone, ProtocolViolation, background

DEVICE_PROTOCOL_VERSION = "2025-06-18"
# How long the first listing waits for the boards named with --serial, so that a client that
# lists once (many do) sees their tools. Taking a board (Ctrl-C, the raw REPL, a soft reset,
# the probe) and the firmware's start take about 3 s on an ESP32; 10 s leave room for a slow
# start without holding a client long for a board that is not coming (one that comes later
# is announced with list_changed, as any device that connects).
SERIAL_WAIT_S = 10.0
POLL_S = 0.25  # how often a waiting list looks at where the serial ports stand


class Slot:
    """One device, known by its Device-Id, across its connections."""

    def __init__(self, device_id, alias):
        self.id = device_id
        self.alias = alias
        self.device = None      # the current connection (xiaozhi.Device), None while away
        self.ready = False      # initialized and listed
        self.tools = {}         # device tool name -> its tools/list entry, as the device sent it
        self.resources = []     # resources/list entries (device URIs)
        self.templates = []     # resources/templates/list entries
        self.level = None       # the logging/setLevel we last sent this connection
        self.photo = None       # (jpeg bytes, mime type, answer) of the last upload
        self.photos = 0         # uploads so far

    @property
    def online(self):
        return self.device is not None and self.ready

    def info(self):
        device = self.device
        return {"alias": self.alias, "device_id": self.id, "online": self.online,
                "transport": getattr(device, "transport", "websocket") if device else None,
                "server_info": device.server_info if device else None,
                "tools": len(self.tools) if self.online else 0,
                "resources": len(self.resources) if self.online else 0}


class DeviceSlots:
    """Every device seen since start (`slots`: Device-Id -> Slot).

    Hooks the bridge sets: `on_listed(slot)`, a coroutine run once a connection's lists
    are in and before it counts as online (what the clients asked for goes on to the
    device); `on_changed()`, a coroutine run whenever a device came, went, or changed its
    lists."""

    def __init__(self, aliases=None, user_tools=False, device_wait=10.0, expect=0, list_ttl=5.0, log=None):
        self.aliases = dict(aliases or {})  # device id -> alias given on the command line
        self.user_tools = user_tools  # also list the devices' user-only tools (withUserTools)
        self.device_wait = device_wait  # how long a list waits for devices still onboarding
        self.expect = expect  # the first list waits (up to device_wait) for this many devices online
        self.list_ttl_ms = int(list_ttl * 1000)
        self.log = log or (lambda text: None)
        self.slots = {}
        self.on_listed = None
        self.on_changed = None
        self.ports = list  # -> the serial ports' status() (the bridge's --serial boards)
        self.serial_wait = SERIAL_WAIT_S
        self._serial_until = None  # when the first listing stops waiting for the serial boards
        self._changed = asyncio.Condition()

    def slot(self, device_id):
        """The slot of `device_id`, made (and its alias chosen) the first time."""
        slot = self.slots.get(device_id)
        if slot is None:
            taken = {s.alias for s in self.slots.values()} | {BRIDGE}
            alias = unique_alias(device_id, self.aliases.get(device_id) or default_alias(device_id), taken)
            slot = self.slots[device_id] = Slot(device_id, alias)
            self.log("%s is %r" % (device_id, alias))
        return slot

    def current(self, device):
        """The slot whose connection `device` is (None for a connection since replaced)."""
        slot = self.slots.get(device.id)
        return slot if slot is not None and slot.device is device else None

    def online(self):
        return sorted((s for s in self.slots.values() if s.online), key=lambda s: s.alias)

    def by_alias(self, alias):
        return next((s for s in self.slots.values() if s.alias == alias), None)

    def info(self):
        """Every slot's info(), by alias: what bridge__list_devices answers."""
        return [slot.info() for slot in sorted(self.slots.values(), key=lambda s: s.alias)]

    def onboarding(self):
        """Whether a connected device is not listed yet."""
        return any(s.device is not None and not s.ready for s in self.slots.values())

    def list_ttl(self):
        """How long (ms) a client may keep a list of what the devices offer. Tool and
        resource lists change only when a device comes, goes or says its list changed, and
        each of those is published (listen streams, list_changed). So a list stays good
        until then: list_ttl, but 0 while a device is still onboarding."""
        return 0 if self.onboarding() else self.list_ttl_ms

    async def onboard(self, device, vision):
        """A device connected: initialize it (`vision`: {url, token}), list everything it
        has, and count it online."""
        slot = self.slot(device.id)
        slot.device, slot.ready = device, False
        try:
            result = await device.initialize(vision, DEVICE_PROTOCOL_VERSION)
            await self.fetch_lists(slot, device)
            if self.on_listed is not None:
                await self.on_listed(slot)
        except (DeviceError, DeviceGone, ProtocolViolation, asyncio.TimeoutError) as error:
            self.log("%s: onboarding failed: %s" % (device.id, error or "timed out"))
            if slot.device is device:
                slot.device = None
            await self.changed()
            return
        if slot.device is not device:
            return  # replaced meanwhile
        slot.ready = True
        self.log("%s (%s): ready, %s, %d tools, %d resources" % (
            slot.alias, device.id, result.get("serverInfo"), len(slot.tools), len(slot.resources)))
        await self.changed()

    async def fetch_lists(self, slot, device):
        params = {"withUserTools": True} if self.user_tools else None
        tools = await device.list_all("tools/list", "tools", params)
        slot.tools = {tool.get("name"): tool for tool in tools if isinstance(tool, dict)}
        if device.capabilities.get("resources") is not None:
            slot.resources = await device.list_all("resources/list", "resources")
            try:
                slot.templates = await device.list_all("resources/templates/list", "resourceTemplates")
            except DeviceError:
                slot.templates = []
        else:
            slot.resources, slot.templates = [], []

    async def relist(self, slot, device):
        """The device said a list changed: fetch them again."""
        try:
            await self.fetch_lists(slot, device)
        except (DeviceError, DeviceGone, ProtocolViolation, asyncio.TimeoutError) as error:
            self.log("%s: listing again failed: %s" % (slot.alias, error or "timed out"))
        await self.changed()

    def gone(self, device):
        slot = self.current(device)
        if slot is None:
            return  # a replaced connection: the new one is onboarding
        slot.device, slot.ready, slot.level = None, False, None
        self.log("%s (%s) went away" % (slot.alias, device.id))
        background(self.changed())

    async def changed(self):
        async with self._changed:
            self._changed.notify_all()
        if self.on_changed is not None:
            await self.on_changed()

    def waiting_ports(self):
        """The --serial ports whose board is not online yet and may still come (the bridge
        has not given up on it)."""
        waiting = []
        for status in self.ports():
            if status["state"].startswith("gave up"):
                continue
            slot = self.slots.get(status["device_id"]) if status["device_id"] else None
            if slot is None or not slot.online:
                waiting.append(status["port"])
        return waiting

    async def wait_settled(self, timeout=None):
        """Until no connected device is still onboarding and at least `expect` devices are
        online (at most `timeout`, default device_wait); the first listing (and those that
        come while it waits) also until every --serial board is online or given up on, at
        most serial_wait: said in the log."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (timeout or self.device_wait)
        if self._serial_until is None:
            ports = self.waiting_ports()
            self._serial_until = loop.time() + self.serial_wait if ports else 0
            for port in ports:
                self.log("waiting up to %g s for the board on %s" % (self.serial_wait, port))

        def devices_settled():
            return not self.onboarding() and len(self.online()) >= self.expect

        async with self._changed:
            while True:
                now = loop.time()
                until = deadline if not devices_settled() else 0
                if now < self._serial_until and self.waiting_ports():
                    until = max(until, self._serial_until)
                if now >= until:
                    break
                try:  # woken by a device's change; the ports' states are looked at each POLL_S
                    await asyncio.wait_for(self._changed.wait(), min(until - now, POLL_S))
                except asyncio.TimeoutError:
                    pass
        waiting = self.waiting_ports() if self._serial_until else []
        if self._serial_until and (not waiting or loop.time() >= self._serial_until):
            self._serial_until = 0  # the first listing is over: no list waits for them again
            for port in waiting:
                self.log("the board on %s is not serving after %g s: listed without it (its tools "
                         "come with list_changed when it does)" % (port, self.serial_wait))
        # `expect` is for the first listing only: later a board that is off must not make
        # every list wait.
        self.expect = 0
