"""Sensors at run time: button, analog, battery, dht and ds18b20 parts, read on a schedule
into a resource, device://parts/<name>, whose subscribers hear of each change; serve() is
their upkeep (parts.setup makes them, parts.toolset says which tools call what). In one
module because they are alike and small.

A button's press is caught by the pin's interrupt however short, counted, logged and told
to every client as a log notification; an analog input tells subscribers of a move of
`step` or more; a DS18B20's conversion is awaited, so the main loop runs on meanwhile. A
sensor that does not answer makes its tool return an error saying so (and the resource
carries it); the device carries on. Each type's options, tools and readings:
docs/boards.md, "The generic board and its parts", and docs/device.md.
"""

import asyncio

import parts
from umcp.compat import const, iscoroutine, ticks_diff, ticks_ms

_FULL = const(65535)


class Sensor(parts.Part):
    """A part read on a schedule: its resource holds the last reading (and the error,
    while reading fails); serve() reads it every poll_ms and tells the resource's
    subscribers when it changed. Its tool calls tool_read(): a reading no older than
    rest_ms. Every sensor type is this class: read() does what its `kind` reads.
    Besides what each type reads with (see read()), parts.setup sets poll_ms and, where a
    type has them, steps and rest_ms."""

    rest_ms = 0
    # (key, step): a reading tells subscribers when a key moved by its step or more;
    # None: when the reading differs at all.
    steps = None
    reading = None  # the last good reading (a dict), or None
    error = None  # why the last read failed, or None
    last = None  # ticks_ms of the last poll
    event = None  # something to tell every client (a button press), or None
    server = None  # the server its tool is registered with
    # None, or (limits, seen): after a good reading of serve()'s that is outside the limits
    # (a list of (key, low, high): reading[key] below low or above high), seen(part) is
    # called (umcpfw.events: a watched part loads the watcher's code only then).
    watch = None

    async def poll(self):
        """Read now; True when the resource changed (a reading moved, an error came or
        went). Never raises: a part that stops answering keeps the firmware running."""
        old, failed = self.reading, self.error
        try:
            reading = self.read()
            if iscoroutine(reading):
                reading = await reading
        except Exception as e:
            name = type(e).__name__
            self.error = "%s did not answer: %s" % (
                self.where, "%s %s" % (name, e.args[0]) if e.args else name)
            if failed is None:
                parts.log.warning("%s", self.error)
            return failed != self.error
        self.error = None
        if failed is not None:
            parts.log.info("%s answers again", self.where)
        self.reading = reading
        if failed is not None or old is None:
            return True
        if self.steps is None:  # whether subscribers should hear of the new reading
            return old != reading
        for key, step in self.steps:
            if abs(reading[key] - old[key]) >= step:
                return True
        return False

    async def tool_read(self, args):
        """The reading for its tool: the last one if it is younger than rest_ms, else a new
        one (its subscribers told when it changed). RuntimeError (the tool's error for the
        model) when the part does not answer."""
        if self.reading is None or self.last is None or self.error is not None or \
                ticks_diff(ticks_ms(), self.last) >= self.rest_ms:
            self.last = ticks_ms()
            if await self.poll() and self.server is not None:
                self.server.resource_updated(self.uri)
        if self.error is not None:
            raise RuntimeError(self.error)
        return self.reading

    @property
    def uri(self):
        """Its resource's URI, device://parts/<name> (made when needed: no string kept)."""
        return parts.URI + self.name

    def state(self, args=None):
        if self.error is not None:
            return {"error": self.error}
        return self.reading or {}

    def read(self):
        """A fresh reading (a dict), or an exception (the part does not answer); a
        coroutine for a DS18B20. One method for the five types, by `kind`: a class each
        would cost more heap than their few lines (parts.setup sets what each reads with)."""
        kind = self.kind
        if kind == "button":
            presses = self.presses
            if presses != self.counted:
                parts.log.info("%s pressed (%d)", self.where, presses)
                self.event = {"part": self.name, "event": "pressed", "presses": presses}
                self.counted = presses
            return {"pressed": self.pin.value() == self.active, "presses": presses}
        if kind == "analog":
            raw = self.adc.read_u16()
            value = self.low + (self.high - self.low) * raw / _FULL
            return {"value": round(value, 2), "unit": self.unit, "raw": raw}
        if kind == "battery":
            volts = self.adc.read_uv() * self.divider / 1000000
            level = (volts - self.empty) * 100 / (self.full - self.empty)
            return {"level": int(max(0, min(100, level)) + 0.5), "voltage": round(volts, 2)}
        if kind == "dht":
            self.sensor.measure()  # a few ms; OSError when the sensor does not answer
            return {"temperature_c": self.sensor.temperature(), "humidity": self.sensor.humidity()}
        if kind != "ds18b20":
            raise ValueError(kind)  # a type without its branch here
        return self._convert()

    def edge(self, pin):
        # A button's interrupt: count and return, nothing more (a hard IRQ may not allocate).
        now = ticks_ms()
        if self.edge_ms is None or ticks_diff(now, self.edge_ms) >= self.debounce_ms:
            self.presses += 1
        self.edge_ms = now

    async def _convert(self):
        # A DS18B20's reading: the first sensor found on the bus (again after it went away),
        # one conversion at a time, awaited (750 ms) so that the main loop runs on.
        async with self.lock:
            if self.rom is None:
                found = self.sensors.scan()
                if not found:
                    raise OSError("no DS18B20 found")
                self.rom = found[0]
            try:
                self.sensors.convert_temp()
                await asyncio.sleep(0.75)  # the conversion at 12 bits
                celsius = self.sensors.read_temp(self.rom)
            except Exception:
                self.rom = None  # look for it again next time
                raise
        return {"temperature_c": round(celsius, 2)}

async def serve(made, server):
    """The parts' upkeep on the main loop (Board.upkeep: the application's task): each
    sensor read every poll_ms (a read never blocks the loop for long: slow ones await), its
    subscribers told of changes, a part's event (a button press) told to every client, its
    `watch` told of a reading outside its limits.
    Nothing ends it but cancellation: an error (no heap for a notice) is logged, and the
    sensors are read on. Returns at once without sensors."""
    sensors = [part for part in made if part.poll_ms]
    while sensors:
        now = ticks_ms()
        wait = 60000
        for part in sensors:
            since = None if part.last is None else ticks_diff(now, part.last)
            if since is None or since >= part.poll_ms:
                part.last = now
                try:
                    if await part.poll():
                        server.resource_updated(part.uri)
                    watch = part.watch
                    if watch is not None and part.error is None:
                        for key, low, high in watch[0]:
                            if not low <= part.reading[key] <= high:
                                watch[1](part)
                                break
                    event = part.event
                    if event is not None:
                        part.event = None
                        await server.log("info", event, "parts")
                except Exception as e:
                    parts.log.warning("%s: %r", part.where, e)
                since = 0
            wait = min(wait, part.poll_ms - since)
        await asyncio.sleep(max(wait, 10) / 1000)
