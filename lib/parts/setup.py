"""The boot's work for config.json's parts, loaded for it and dropped again (parts.build,
parts.register): once parts.check has checked the entries, each part made and its pins
and drivers wired, and the tools each type offers (their names, the descriptions a model
reads, their parameters) registered. Nothing here runs once the tools are registered, so
none of its code stays on the heap; the runtime modules hold what the tools call.
"""

from machine import ADC, I2C, PWM, Pin

import parts
from umcp import INTEGER, STRING, Property, PropertyList
from umcp.compat import const

# type: (its runtime module in parts, its class there)
KINDS = {"relay": ("output", "Output"), "pwm": ("output", "Output"), "servo": ("output", "Output"),
         "buzzer": ("output", "Output"), "strip": ("strip", "Strip"),
         "button": ("sensor", "Sensor"), "analog": ("sensor", "Sensor"),
         "battery": ("sensor", "Sensor"), "dht": ("sensor", "Sensor"),
         "ds18b20": ("sensor", "Sensor"), "oled": ("oled", "Oled"), "lcd": ("lcd", "Lcd")}

# A tool's hints: (read_only, destructive, idempotent).
_READS = const((True, None, None))
_SETS = const((None, False, True))  # sets a state: again is the same
_ACTS = const((None, False, None))  # does something each time (a beep)
_I2C_FREQ = const(400000)  # an OLED's bus

# Per type: its tools, (verb, description, hints, method): self.<name>.<verb> calls
# part.<method>(args). A description is a template, formatted when a tools/list page is
# written (umcp.tool) with the part's label, or with the attributes VALUES names.
TOOLS = {
    # The reference firmware's lamp: a model knows these.
    "relay": (("get_state", "Get the power state of the %s", _READS, "state"),
              ("turn_on", "Turn on the %s", _SETS, "turn_on"),
              ("turn_off", "Turn off the %s", _SETS, "turn_off")),
    "pwm": (("set_level", "Set the power of the %s in percent (0 is off, 100 is full).", _SETS,
             "set_level"),),
    "servo": (("set_angle", "Turn the %s to an angle in degrees (0 to %d).", _SETS,
               "set_angle"),),
    "buzzer": (("beep", "Sound the %s: a tone of a frequency (Hz) for a time (ms).", _ACTS,
                "beep"),),
    "strip": (("set_color", "Set every LED of the %s (%d LEDs) to one colour; 0,0,0 turns them "
               "off.", _SETS, "set_color"),
              ("set_pixel", "Set one LED of the %s (%d LEDs, the first is index 0) to a colour.",
               _SETS, "set_pixel")),
    "analog": (("read", "Read the %s now: its value from %g to %g %s.", _READS, "tool_read"),),
    "battery": (("get_level", "The charge of the %s in percent, and its voltage.", _READS,
                 "tool_read"),),
    "dht": (("read", "Read the %s: temperature in degrees Celsius and relative humidity in "
             "percent.", _READS, "tool_read"),),
    "ds18b20": (("read", "Read the %s: temperature in degrees Celsius.", _READS, "tool_read"),),
    "oled": (("show_text", "Show text on the %s (a %dx%d OLED screen), replacing what it "
              "showed.", _SETS, "show_text"),
             ("clear", "Clear the %s (a %dx%d OLED screen).", _SETS, "clear")),
    "lcd": (("show_text", "Show text on the %s (a %dx%d colour screen), replacing what it "
             "showed.", _SETS, "show_text"),
            ("clear", "Clear the %s (a %dx%d colour screen).", _SETS, "clear")),
}
# Output schemas (JSON text, in flash when frozen) of the tools that answer an object:
# clients of 2025-06-18 and later get it and the answer as structuredContent (umcp.tool).
SCHEMAS = {"relay.get_state": '{"type":"object","properties":{"power":{"type":"boolean"}},'
                              '"required":["power"]}'}
VALUES = {"servo": ("label", "range"), "strip": ("label", "count"),
          "analog": ("label", "low", "high", "unit"), "oled": ("label", "width", "height"),
          "lcd": ("label", "width", "height")}


def make(entries):
    """parts.build's work once the entries are checked: each part made and wired."""
    made = []
    for entry in entries:
        kind = entry["type"]
        module, name = KINDS[kind]
        cls = getattr(getattr(__import__("parts." + module), module), name)
        try:
            part = cls(entry)
            _wire(part, entry)
        except ValueError as e:  # the port refused a pin or a setting
            raise parts.PartError("%s: %s" % (entry["where"], e))
        made.append(part)
    return made


def register(made, server):
    """parts.register's work: each part's tools, a type's parameters shared by its parts."""
    shared = {}
    for part in made:
        kind = part.kind
        names = VALUES.get(kind)
        values = part.label if names is None else tuple([getattr(part, name) for name in names])
        for verb, template, hints, method in TOOLS.get(kind, ()):
            server.add_tool("self.%s.%s" % (part.name, verb), (template, values),
                            _parameters(part, verb, shared), getattr(part, method),
                            read_only=hints[0], destructive=hints[1], idempotent=hints[2],
                            output_schema=SCHEMAS.get("%s.%s" % (kind, verb)))
        if part.poll_ms:
            part.server = server  # a tool's fresh reading tells the resource's subscribers


def module_of(kind):
    """The runtime module (in parts) that holds a type."""
    return KINDS[kind][0]


# -- the wiring -------------------------------------------------------------------------

def _wire(part, entry):
    """Each type's pins and drivers, on the part Part(entry) made (the OLED's panel set up
    here, again by the part after a loose wire; the LCD wires itself). One function, not one
    a type: a name is heap for good once a module is loaded."""
    kind = part.kind
    if kind == "relay":
        part.invert = entry["invert"]
        part.power = False
        part.pin = Pin(entry["pin"], Pin.OUT, value=1 if part.invert else 0)  # off at boot
    elif kind == "pwm":
        part.invert = entry["invert"]
        part.level = 0
        part.pwm = PWM(Pin(entry["pin"], Pin.OUT), freq=entry["freq"], duty_u16=65535 if part.invert else 0)  # off
    elif kind == "servo":
        part.min_us = entry["min_us"]
        part.max_us = entry["max_us"]
        part.range = entry["range"]
        part.pwm = PWM(Pin(entry["pin"], Pin.OUT), freq=entry["freq"], duty_u16=0)
    elif kind == "buzzer":
        part.pwm = PWM(Pin(entry["pin"], Pin.OUT), freq=2000, duty_u16=0)
    elif kind == "strip":
        from neopixel import NeoPixel

        part.count = entry["count"]
        part.leds = NeoPixel(Pin(entry["pin"], Pin.OUT), part.count)
        part.color = (0, 0, 0)
        part.leds.fill(part.color)
        part.leds.write()
    elif kind == "oled":
        part.addr = entry["addr"]
        part.bus = entry["i2c"]
        part.i2c = I2C(part.bus, sda=Pin(entry["sda"]), scl=Pin(entry["scl"]), freq=_I2C_FREQ)
        part.pins = (entry["sda"], entry["scl"])
        part.display = None
        try:
            part.connect()
        except OSError as e:  # its tools say so, and try again at each call
            parts.log.warning("%s does not answer: %r", part.where, e)
    elif kind != "lcd":  # a sensor
        if kind == "button":
            entry["interval_ms"] = 100  # how soon a press reaches the log and the clients
        part.poll_ms = entry.get("interval_ms") or 1000
        part.uri = parts.URI + part.name
        _wire_sensor(part, entry, kind)


def _wire_sensor(part, entry, kind):
    if kind == "button":
        part.active = 1 if entry["active"] == "high" else 0
        part.debounce_ms = entry["debounce_ms"]
        # Set before the interrupt is: its handler must not allocate.
        part.presses = part._counted = 0
        part._edge_ms = None
        pull = entry["pull"]
        if pull == "none":
            part.pin = Pin(entry["pin"], Pin.IN)
        else:
            part.pin = Pin(entry["pin"], Pin.IN, Pin.PULL_UP if pull == "up" else Pin.PULL_DOWN)
        part.pin.irq(part._edge, Pin.IRQ_RISING if part.active else Pin.IRQ_FALLING)
        part.reading = part.read()
    elif kind == "analog":
        part.low = entry["min"]
        part.high = entry["max"]
        part.unit = entry["unit"]
        step = entry["step"]  # default: 1 % of the range
        part.steps = (("value", abs(part.high - part.low) / 100 if step is None else step),)
        part.adc = ADC(Pin(entry["pin"]), atten=ADC.ATTN_11DB)
    elif kind == "battery":
        part.steps = (("level", 1),)
        part.divider = entry["divider"]
        part.empty = entry["empty_v"]
        part.full = entry["full_v"]
        part.adc = ADC(Pin(entry["pin"]), atten=ADC.ATTN_11DB)
    elif kind == "dht":
        import dht  # MicroPython's module: imports are absolute

        dht11 = entry["model"] == "dht11"
        part.steps = (("temperature_c", 0.1), ("humidity", 1))
        part.sensor = (dht.DHT11 if dht11 else dht.DHT22)(Pin(entry["pin"]))
        part.rest_ms = 1000 if dht11 else 2000  # the sensor's rest between two measurements
    else:  # ds18b20
        import asyncio

        import ds18x20
        import onewire

        part.steps = (("temperature_c", 0.1),)
        part.rest_ms = 1000
        part.sensors = ds18x20.DS18X20(onewire.OneWire(Pin(entry["pin"])))
        part.rom = None  # found at the first reading
        part._lock = asyncio.Lock()  # one conversion at a time on the bus


# -- the tools' parameters ---------------------------------------------------------------

def _parameters(part, verb, shared):
    """The PropertyList of a tool (None: it takes none), made once for the parts (of a
    type, and of a range or size) that can share it: `shared` holds them."""
    kind = part.kind
    if kind == "strip":
        color = _shared(shared, "color", lambda: [
            Property(name, INTEGER, minimum=0, maximum=255, description=name + " level, 0-255")
            for name in ("red", "green", "blue")])
        if verb == "set_color":
            return color
        top = part.count - 1  # the colour's Property objects serve the pixel's list too
        return _shared(shared, ("pixel", top), lambda: [Property(
            "index", INTEGER, minimum=0, maximum=top, description="which LED, 0 is the first")]
            + list(color))
    if kind == "pwm":
        return _shared(shared, "level", lambda: [Property(
            "level", INTEGER, minimum=0, maximum=100,
            description="percent of full power: 0 off, 100 full")])
    if kind == "servo":
        top = part.range
        return _shared(shared, ("angle", top), lambda: [Property(
            "angle", INTEGER, minimum=0, maximum=top, description="degrees, 0 to %d" % top)])
    if kind == "buzzer":
        return _shared(shared, "beep", lambda: [
            Property("frequency", INTEGER, default=2000, minimum=20, maximum=20000,
                     description="pitch in Hz (440 is the A above middle C)"),
            Property("duration_ms", INTEGER, default=200, minimum=10, maximum=5000,
                     description="how long, in milliseconds")])
    if kind in ("oled", "lcd") and verb == "show_text":
        size = (part.columns, part.rows)
        return _shared(shared, ("text", size), lambda: [Property("text", STRING, description=(
            "what to show: lines of up to %d characters, %d lines; longer lines wrap, a "
            "newline starts a line" % size))])
    return None


def _shared(shared, key, make):
    found = shared.get(key)
    if found is None:
        found = shared[key] = PropertyList(make())
    return found
