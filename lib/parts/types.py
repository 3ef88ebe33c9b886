"""What each part type is, in one place: TYPES holds a type's runtime module, its options,
its tools (with their parameters) and the attributes its tools' descriptions show; rules()
holds what one of its options says about another; wire() sets up its pins and drivers.
The methods its tools call and its state() are in its runtime module's class. Adding a type
means its entry here, its branches of rules() and wire(), and its methods
(docs/recipes.md, "A part type").

Boot work: parts.check, parts.setup and parts.toolset read this module, and it leaves the
heap with them (parts.setup.make() and parts.toolset.register() drop it when done).
"""

from parts import log
from umcp.compat import const

# Kinds of option (parts.check checks a value by them): pins (an output, an input, both:
# a bus line, an ADC input), then the rest. Small ints under const(): no names on the heap.
_OUT = const(1)
_IN = const(2)
_IO = const(3)
_ADC = const(4)
_INT = const(5)
_NUMBER = const(6)
_BOOL = const(7)
_TEXT = const(8)
REQUIRED = "required"

# A tool's hints: (read_only, destructive, idempotent).
_READS = const((True, None, None))
_SETS = const((None, False, True))  # sets a state: again is the same
_ACTS = const((None, False, None))  # does something each time (a beep)

_INTEGER = const("integer")  # umcp's INTEGER and STRING: a parameter's type
_STRING = const("string")
_COLOR = const((("red", _INTEGER, 0, 255), ("green", _INTEGER, 0, 255), ("blue", _INTEGER, 0, 255)))
_SCREEN_TEXT = const((("text", _STRING, None, None, None, (
    "what to show: lines of up to %d characters, %d lines; longer lines wrap, a newline "
    "starts a line", "columns", "rows")),))
_INTERVAL = const(86400000)  # a sensor's longest interval_ms: a day

# Per type:
#   (its runtime module in parts, whose class it is (the module's name capitalized: Output),
#    options: ((option, kind or choices, default, lowest, highest), ...): "name", "type" and
#        "description" are every entry's;
#    tools: ((verb, description, hints, method, parameters, output schema), ...):
#        self.<name>.<verb> calls part.<method>(args). A description is a template, formatted
#        when a tools/list page is written (umcp.tool) with the part's label, or with the
#        attributes the last field names. Parameters: ((name, type, minimum, maximum,
#        default (None: required), description), ...), None: none; a bound (attribute, add)
#        is the part's attribute plus add, a description (template, attribute, ...) is
#        formatted with them. An output schema (JSON text) for a tool that answers an object;
#    the attributes the descriptions show, None: the label)
TYPES = {
    # The reference firmware's lamp: a model knows these tools.
    "relay": (
        "output",
        (("pin", _OUT, REQUIRED), ("invert", _BOOL, False)),
        (("get_state", "Get the power state of the %s", _READS, "state", None,
          '{"type":"object","properties":{"power":{"type":"boolean"}},"required":["power"]}'),
         ("turn_on", "Turn on the %s", _SETS, "turn_on", None, None),
         ("turn_off", "Turn off the %s", _SETS, "turn_off", None, None)),
        None),
    "pwm": (
        "output",
        (("pin", _OUT, REQUIRED), ("freq", _INT, 1000, 1, 100000), ("invert", _BOOL, False)),
        (("set_level", "Set the power of the %s in percent (0 is off, 100 is full).", _SETS,
          "set_level", (("level", _INTEGER, 0, 100),), None),),
        None),
    "strip": (
        "output",
        (("pin", _OUT, REQUIRED), ("count", _INT, 8, 1, 1024)),
        # No parameter descriptions where the names, ranges and the tool's description say
        # it all: each is in every prompt the tool list goes into, and on the heap.
        (("set_color", "Set every LED of the %s (%d LEDs) to one colour; 0,0,0 turns them off.",
          _SETS, "set_color", _COLOR, None),
         ("set_pixel", "Set one LED of the %s (%d LEDs, the first is index 0) to a colour.",
          _SETS, "set_pixel", (("index", _INTEGER, 0, ("count", -1)),) + _COLOR, None)),
        ("label", "count")),
    "servo": (
        "output",
        (("pin", _OUT, REQUIRED), ("min_us", _INT, 500, 100, 5000), ("max_us", _INT, 2500, 100, 5000),
         ("range", _INT, 180, 1, 360), ("freq", _INT, 50, 40, 400)),
        (("set_angle", "Turn the %s to an angle in degrees (0 to %d).", _SETS, "set_angle",
          (("angle", _INTEGER, 0, ("range", 0)),), None),),
        ("label", "range")),
    "buzzer": (
        "output",
        (("pin", _OUT, REQUIRED),),
        (("beep", "Sound the %s: a tone of a frequency (Hz) for a time (ms).", _ACTS, "beep",
          (("frequency", _INTEGER, 20, 20000, 2000), ("duration_ms", _INTEGER, 10, 5000, 200)), None),),
        None),
    "button": (  # no tool: its state is its resource
        "sensor",
        (("pin", _IN, REQUIRED), ("pull", ("up", "down", "none"), "up"), ("active", ("low", "high"), None),
         ("debounce_ms", _INT, 50, 0, 1000)),
        (),
        None),
    "analog": (
        "sensor",
        (("pin", _ADC, REQUIRED), ("min", _NUMBER, 0), ("max", _NUMBER, 100), ("unit", _TEXT, "%"),
         ("step", _NUMBER, None, 0, None), ("interval_ms", _INT, 2000, 100, _INTERVAL)),
        (("read", "Read the %s now: its value from %g to %g %s.", _READS, "tool_read", None, None),),
        ("label", "low", "high", "unit")),
    "dht": (
        "sensor",
        (("pin", _IO, REQUIRED), ("model", ("dht11", "dht22"), "dht22"),
         ("interval_ms", _INT, 10000, 2000, _INTERVAL)),
        (("read", "Read the %s: temperature in degrees Celsius and relative humidity in percent.",
          _READS, "tool_read", None, None),),
        None),
    "ds18b20": (
        "sensor",
        (("pin", _IO, REQUIRED), ("interval_ms", _INT, 10000, 1000, _INTERVAL)),
        (("read", "Read the %s: temperature in degrees Celsius.", _READS, "tool_read", None, None),),
        None),
    "battery": (
        "sensor",
        (("pin", _ADC, REQUIRED), ("divider", _NUMBER, 2.0, 1, 20), ("empty_v", _NUMBER, 3.3, 0, 60),
         ("full_v", _NUMBER, 4.2, 0, 60), ("interval_ms", _INT, 30000, 1000, _INTERVAL)),
        (("get_level", "The charge of the %s in percent, and its voltage.", _READS, "tool_read", None,
          None),),
        None),
    "oled": (
        "oled",
        (("sda", _IO, REQUIRED), ("scl", _IO, REQUIRED), ("i2c", _INT, 0, 0, 1),
         ("addr", _INT, 0x3C, 0x3C, 0x3D), ("width", (128,), 128), ("height", (64, 32), 64),
         ("status", _BOOL, False)),
        (("show_text", "Show text on the %s (a %dx%d OLED screen), replacing what it showed.",
          _SETS, "show_text", _SCREEN_TEXT, None),
         ("clear", "Clear the %s (a %dx%d OLED screen).", _SETS, "clear", None, None)),
        ("label", "width", "height")),
    "lcd": (
        "lcd",
        (("sck", _OUT, REQUIRED), ("mosi", _OUT, REQUIRED), ("dc", _OUT, REQUIRED), ("cs", _OUT, None),
         ("rst", _OUT, None), ("bl", _OUT, None), ("spi", (1, 2), 1),
         ("freq", _INT, 40000000, 1000000, 80000000), ("width", _INT, REQUIRED, 8, 320),
         ("height", _INT, REQUIRED, 8, 320), ("rotation", (0, 90, 180, 270), 0),
         ("x_offset", _INT, 0, 0, 312), ("y_offset", _INT, 0, 0, 312), ("invert", _BOOL, True),
         ("bgr", _BOOL, False), ("status", _BOOL, False)),
        (("show_text", "Show text on the %s (a %dx%d colour screen), replacing what it showed.",
          _SETS, "show_text", _SCREEN_TEXT, None),
         ("clear", "Clear the %s (a %dx%d colour screen).", _SETS, "clear", None, None)),
        ("label", "width", "height")),
}
# A board's own LCD (boards.setup.board_screen), type "display": made and wired as an lcd
# (parts.setup), with no tools.

_I2C_FREQ = const(400000)  # an OLED's bus


def rules(out):
    """What one option of a checked entry (`out`, every option's default filled in) says
    about another: PartError, a ValueError, raised by the caller's PartError class with
    the entry named. Also fills in an option whose default depends on another."""
    kind = out["type"]
    if kind == "servo" and out["min_us"] >= out["max_us"]:
        return "min_us (%d) must be below max_us (%d)" % (out["min_us"], out["max_us"])
    if kind == "servo" and out["max_us"] * out["freq"] >= 1000000:
        return "max_us %d is longer than one period at %d Hz" % (out["max_us"], out["freq"])
    if kind == "analog" and out["min"] == out["max"]:
        return "min and max must differ"
    if kind == "battery" and out["empty_v"] >= out["full_v"]:
        return "empty_v (%s) must be below full_v (%s)" % (out["empty_v"], out["full_v"])
    if kind == "lcd":
        # The controller's memory: 240x320, or 320x240 for a panel wider than high.
        memory = (320, 240) if out["width"] > out["height"] else (240, 320)
        if out["width"] + out["x_offset"] > memory[0] or out["height"] + out["y_offset"] > memory[1]:
            return "a %dx%d panel at offset %d,%d does not fit the controller's %dx%d pixels" % (
                out["width"], out["height"], out["x_offset"], out["y_offset"], memory[0], memory[1])
    if kind == "button" and out["active"] is None:
        out["active"] = "high" if out["pull"] == "down" else "low"
    return None


def wire(part, entry):
    """A made part's attributes, pins and drivers, from its checked entry (the OLED's panel
    set up here, again by the part after a loose wire). ValueError when the port refuses a
    pin or a setting. One function, not one a type: a name is heap for good once a module
    is loaded."""
    from machine import I2C, PWM, Pin  # (not at the top: parts.check runs off a board too)

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
        _screen(part, entry["width"], entry["height"], entry)
        part.addr = entry["addr"]
        part.i2c = I2C(entry["i2c"], sda=Pin(entry["sda"]), scl=Pin(entry["scl"]), freq=_I2C_FREQ)
        try:
            part.connect()
        except OSError as e:  # its tools say so, and try again at each call
            log.warning("%s (I2C %d at 0x%02X, SDA GPIO %d, SCL GPIO %d) does not answer: %r",
                        part.where, entry["i2c"], part.addr, entry["sda"], entry["scl"], e)
    elif kind == "lcd" or kind == "display":
        _wire_lcd(part, entry)
    elif kind in ("button", "analog", "battery", "dht", "ds18b20"):  # a sensor
        if kind == "button":
            entry["interval_ms"] = 100  # how soon a press reaches the log and the clients
        part.poll_ms = entry.get("interval_ms") or 1000
        _wire_sensor(part, entry, kind)
    else:
        raise ValueError("no wiring for the type %r (parts.types.wire)" % kind)


def _screen(part, width, height, entry):
    from parts.screen import CELL  # a screen's module has it loaded

    part.width, part.height = width, height
    part.columns, part.rows = width // CELL, height // CELL
    part.status = entry.get("status", False)


def _wire_lcd(part, entry):
    """The SPI bus, the panel's driver (set up, the board's `init` commands sent), the
    backlight on, the panel painted."""
    from drivers.st7789 import ST7789
    from machine import SPI, Pin

    # miso=None: the panel is never read, and the port would take the bus's default MISO pin.
    try:
        spi = SPI(entry["spi"], baudrate=entry["freq"], polarity=entry.get("polarity", 0),
                  phase=entry.get("phase", 0), sck=Pin(entry["sck"]), mosi=Pin(entry["mosi"]), miso=None)
    except OSError as e:  # the bus could not be set up: a bad entry, named
        raise ValueError("SPI %d on SCK GPIO %d, MOSI GPIO %d: %r" % (
            entry["spi"], entry["sck"], entry["mosi"], e))
    cs, rst, bl = entry["cs"], entry["rst"], entry["bl"]
    if entry.get("reset") is not None:  # a board's own panel reset another way (board_screen)
        entry["reset"]()
    part.display = ST7789(
        spi, Pin(entry["dc"], Pin.OUT, value=1), None if cs is None else Pin(cs, Pin.OUT, value=1),
        None if rst is None else Pin(rst, Pin.OUT, value=1), entry["width"], entry["height"],
        entry["x_offset"], entry["y_offset"], entry["rotation"], entry["invert"], entry["bgr"])
    for command, data in entry.get("init", ()):
        part.display.send(command, data)
    # Turned by 90 or 270 degrees, the text runs along the panel's other side.
    _screen(part, part.display.width, part.display.height, entry)
    part.backlight = None if bl is None else Pin(bl, Pin.OUT, value=1)
    part.repaint()


def _wire_sensor(part, entry, kind):
    from machine import ADC, Pin

    if kind == "button":
        part.active = 1 if entry["active"] == "high" else 0
        part.debounce_ms = entry["debounce_ms"]
        # Set before the interrupt is: its handler must not allocate.
        part.presses = part.counted = 0
        part.edge_ms = None
        pull = entry["pull"]
        if pull == "none":
            part.pin = Pin(entry["pin"], Pin.IN)
        else:
            part.pin = Pin(entry["pin"], Pin.IN, Pin.PULL_UP if pull == "up" else Pin.PULL_DOWN)
        part.pin.irq(part.edge, Pin.IRQ_RISING if part.active else Pin.IRQ_FALLING)
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
        part.lock = asyncio.Lock()  # one conversion at a time on the bus
