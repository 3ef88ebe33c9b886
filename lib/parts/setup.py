"""The boot's work for config.json's parts, loaded for it and dropped again (parts.build):
once parts.check has checked the entries, each part made and its pins and drivers wired.
Nothing here runs once the parts are made, so none of its code stays on the heap; the
runtime modules hold what the tools call, and parts.toolset registers the tools (which
type offers which, and what each calls).
"""

from machine import ADC, I2C, PWM, Pin

import parts
from umcp.compat import const

# type: (its runtime module in parts, its class there)
KINDS = {"relay": ("output", "Output"), "pwm": ("output", "Output"), "servo": ("output", "Output"),
         "buzzer": ("output", "Output"), "strip": ("strip", "Strip"),
         "button": ("sensor", "Sensor"), "analog": ("sensor", "Sensor"),
         "battery": ("sensor", "Sensor"), "dht": ("sensor", "Sensor"),
         "ds18b20": ("sensor", "Sensor"), "oled": ("oled", "Oled"), "lcd": ("lcd", "Lcd")}

_I2C_FREQ = const(400000)  # an OLED's bus


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
