"""The boot's work for config.json's parts, loaded for it and dropped again (boards.add_parts):
once parts.check has checked the entries, each part made, its attributes set and its pins
and drivers wired (a board's own LCD too: boards.setup.board_screen). Nothing here runs once
the parts are made, so none of its code stays on the heap: the runtime classes have no
constructors, their modules hold what the tools call, and parts.toolset registers the
tools (which type offers which, and what each calls).
"""

from machine import ADC, I2C, PWM, Pin

import parts
from umcp.compat import const

# type: (its runtime module in parts, its class there)
KINDS = {"relay": ("output", "Output"), "pwm": ("output", "Output"), "servo": ("output", "Output"),
         "buzzer": ("output", "Output"), "strip": ("output", "Output"),
         "button": ("sensor", "Sensor"), "analog": ("sensor", "Sensor"),
         "battery": ("sensor", "Sensor"), "dht": ("sensor", "Sensor"),
         "ds18b20": ("sensor", "Sensor"), "oled": ("oled", "Oled"), "lcd": ("lcd", "Lcd"),
         "display": ("lcd", "Lcd")}  # display: a board's own LCD (no tools of its own)

_I2C_FREQ = const(400000)  # an OLED's bus


def make(entries):
    """The parts of `entries` (parts.check.entries' answer), each made and wired."""
    made = []
    for entry in entries:
        kind = entry["type"]
        module, name = KINDS[kind]
        part = getattr(getattr(__import__("parts." + module), module), name)()
        part.name = entry["name"]
        part.kind = kind
        part.label = entry.get("label")
        part.index = entry["index"]  # where config.json has it: Part.where says it in words
        try:
            _wire(part, entry)
        except ValueError as e:  # the port refused a pin or a setting
            raise parts.PartError("%s: %s" % (entry["where"], e))
        made.append(part)
    return made


def module_of(kind):
    """The runtime module (in parts) that holds a type."""
    return KINDS[kind][0]


# -- the wiring -------------------------------------------------------------------------

def _wire(part, entry):
    """Each type's attributes, pins and drivers (the OLED's panel set up here, again by the
    part after a loose wire). One function, not one a type: a name is heap for good once a
    module is loaded."""
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
            parts.log.warning("%s (I2C %d at 0x%02X, SDA GPIO %d, SCL GPIO %d) does not answer: %r",
                              part.where, entry["i2c"], part.addr, entry["sda"], entry["scl"], e)
    elif kind == "lcd" or kind == "display":
        _wire_lcd(part, entry)
    else:  # a sensor
        if kind == "button":
            entry["interval_ms"] = 100  # how soon a press reaches the log and the clients
        part.poll_ms = entry.get("interval_ms") or 1000
        _wire_sensor(part, entry, kind)


def _screen(part, width, height, entry):
    from parts.screen import CELL  # a screen's module has it loaded

    part.width, part.height = width, height
    part.columns, part.rows = width // CELL, height // CELL
    part.status = entry.get("status", False)


def _wire_lcd(part, entry):
    """The SPI bus, the panel's driver (set up, the board's `init` commands sent), the
    backlight on, the panel painted."""
    from drivers.st7789 import ST7789
    from machine import SPI

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
