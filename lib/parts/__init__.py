"""Peripherals a board takes from config.json's "parts": one module per type, each a small
class with its tools (and, for sensors, a resource that tells subscribers of a change).

Types and their modules: `relay` (on/off output), `pwm` (dimmer, fan), `strip` (RGB LEDs,
NeoPixel), `servo` (hobby servo), `buzzer` (tones), `button` (button or contact input),
`analog` (ADC input, scaled), `dht` (DHT11/DHT22), `ds18b20` (1-Wire thermometer),
`battery` (voltage through a divider), `oled` (I2C SSD1306). `check` checks the entries
before any hardware is touched (loaded for the boot only). A type's module is imported
only when config.json names it.

    parts = build(entries, chip, taken)   # PartError: one line naming the entry
    part.register(server); part.state(); await serve(parts, server)
"""

import asyncio
import sys

from umcp.compat import get_logger, iscoroutine, ticks_diff, ticks_ms

TYPES = ("relay", "pwm", "strip", "servo", "buzzer", "button", "analog", "dht", "ds18b20",
         "battery", "oled")
URI = "device://parts/"  # + the part's name: a sensor's resource

log = get_logger("parts")


class PartError(ValueError):
    """A config.json entry that cannot be used; the message names the entry."""


def build(entries, chip=None, taken=None, names=(), builtin=()):
    """The parts for config.json's "parts" list (after the board's `builtin` ones), checked
    first (check.entries: PartError names the entry) against the chip's pins (the running
    chip's, else `chip`, else esp32), the pins the board itself uses (`taken`: {pin: what})
    and the board's own tool namespaces (`names`)."""
    from parts import check

    try:
        entries = check.entries(entries, chip, taken, names, builtin)
    finally:  # only the boot needs it: its bytecode leaves the heap
        sys.modules.pop("parts.check", None)
        if hasattr(sys.modules["parts"], "check"):
            delattr(sys.modules["parts"], "check")
    made = []
    for entry in entries:
        module = getattr(__import__("parts." + entry["type"]), entry["type"])
        try:
            made.append(module.Part(entry))
        except ValueError as e:  # the port refused a pin or a setting
            raise PartError("%s: %s" % (entry["where"], e))
    return made


class Part:
    """What every part has: its name, its words for the model, its tools' names."""

    poll_ms = 0  # sensors: how often serve() reads them

    def __init__(self, entry):
        self.name = entry["name"]
        self.kind = entry["type"]
        # The maker's words for it ("desk lamp"), else its name in words; the tools'
        # descriptions say "the <label>".
        label = entry.get("description") or self.name.replace("_", " ")
        self.label = label[4:] if label[:4] in ("the ", "The ") else label
        self.where = entry["where"]

    def tool(self, server, verb, description, callback, properties=None, **hints):
        """Add the tool self.<name>.<verb>."""
        server.add_tool("self.%s.%s" % (self.name, verb), description, properties, callback,
                        **hints)

    def register(self, server):
        """Add this part's tools."""

    def state(self):
        """What get_device_status shows of it: from memory, never a slow hardware read."""
        return {}


class Sensor(Part):
    """A part read on a schedule: its resource device://parts/<name> holds the last reading
    (and the error, while reading fails); serve() reads it every poll_ms and tells the
    resource's subscribers when it changed."""

    def __init__(self, entry):
        super().__init__(entry)
        self.poll_ms = entry.get("interval_ms") or 1000
        self.uri = URI + self.name
        self.reading = None  # the last good reading (a dict), or None
        self.error = None  # why the last read failed, or None
        self.last = None  # ticks_ms of the last poll
        self.event = None  # something to tell every client (a button press), or None
        self.server = None  # set by register()

    def register(self, server):
        self.server = server

    def read(self):
        """A fresh reading (a dict), or an exception (the part does not answer). May be a
        coroutine function."""
        raise NotImplementedError

    def changed(self, old, new):
        """Whether subscribers should hear of the new reading."""
        return old != new

    async def poll(self):
        """Read now; True when the resource changed (a reading moved, an error came or
        went). Never raises: a part that stops answering keeps the firmware running."""
        old, failed = self.reading, self.error
        try:
            reading = self.read()
            if iscoroutine(reading):
                reading = await reading
        except Exception as e:
            self.error = "%s did not answer: %s" % (self.where, _describe(e))
            if failed is None:
                log.warning("%s", self.error)
            return failed != self.error
        self.error = None
        if failed is not None:
            log.info("%s answers again", self.where)
        self.reading = reading
        return failed is not None or old is None or self.changed(old, reading)

    async def fresh(self, max_age_ms=0):
        """The reading for a tool: the last one if it is younger than max_age_ms, else a
        new one (its subscribers told when it changed). RuntimeError (the tool's error for
        the model) when the part does not answer."""
        if self.reading is None or self.last is None or self.error is not None or \
                ticks_diff(ticks_ms(), self.last) >= max_age_ms:
            self.last = ticks_ms()
            if await self.poll() and self.server is not None:
                self.server.resource_updated(self.uri)
        if self.error is not None:
            raise RuntimeError(self.error)
        return self.reading

    def state(self):
        if self.error is not None:
            return {"error": self.error}
        return self.reading or {}

    def resource(self, server):
        server.add_resource(self.uri, self.name, self.read_resource, mime_type="application/json",
                            description="%s: %s; updated when it changes" % (self.label, self.kind))

    def read_resource(self):
        return self.state()


def _describe(e):
    name = type(e).__name__
    return "%s %s" % (name, e.args[0]) if e.args else name


async def serve(parts, server):
    """The parts' upkeep on the main loop: each sensor read every poll_ms (a read never
    blocks the loop for long: slow ones await), its subscribers told of changes, a
    part's event (a button press) told to every client. Returns at once without sensors."""
    sensors = [part for part in parts if part.poll_ms]
    while sensors:
        now = ticks_ms()
        wait = 60000
        for part in sensors:
            since = None if part.last is None else ticks_diff(now, part.last)
            if since is None or since >= part.poll_ms:
                part.last = now
                if await part.poll():
                    server.resource_updated(part.uri)
                event, part.event = part.event, None
                if event is not None:
                    await server.log("info", event, "parts")
                since = 0
            wait = min(wait, part.poll_ms - since)
        await asyncio.sleep(max(wait, 10) / 1000)
