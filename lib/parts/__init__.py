"""Peripherals a board takes from config.json's "parts": small classes with their tools
(and, for sensors, a resource that tells subscribers of a change).

What a part does at run time is in the module of its kind, imported only when config.json
names one of its types and then resident: `output` (relay, pwm, strip, servo, buzzer),
`sensor` (button, analog, battery, dht, ds18b20, and serve() that reads them), `oled`
(I2C SSD1306) and `lcd` (SPI ST7789/ILI9341), both on `screen`. Making the parts is boot
work, in modules loaded for it and dropped again one at a time, all reading `types` (what
each type is: options, wiring and tools, one entry a type): `check` (the entries checked
before any hardware is touched), `setup` (the parts made and wired) and `toolset` (their
tools registered; the sensors' resources at a client's first resources/*):

    entries = check.entries(config_parts, chip, taken)  # PartError: one line naming the entry
    made = setup.make(entries); toolset.register(made, server)
    part.state(); await sensor.serve(made, server)
"""

from umcp.compat import get_logger

URI = "device://parts/"  # + the part's name: a sensor's resource

log = get_logger("parts")


class PartError(ValueError):
    """A config.json entry that cannot be used; the message names the entry."""


class Part:
    """What every part has: its name, its kind (its type), its words for the model (`label`:
    the maker's ("desk lamp"), else its name in words; None: a board's own part; the tools'
    descriptions say "the <label>") and where config.json has it (`index`), all set by
    parts.setup, which makes and wires the parts (boot work: no constructor stays on the
    heap). A type's class adds what its tools call (parts.toolset says which) and its
    state()."""

    poll_ms = 0  # sensors: how often serve() reads them
    status = False  # screens: the board's status screen ("status": true)

    def place(self):
        """Where config.json has it, for messages: "config.json parts[2] (relay 'lamp')"."""
        index = self.index
        return "%s (%s '%s')" % ("config.json parts[%d]" % index if index >= 0 else
                                 "the board's own part", self.kind, self.name)

    # Made when a message needs it: no string of its own on the heap.
    where = property(place)

    def state(self, args=None):
        """What get_device_status shows of it: from memory, never a slow hardware read
        (also a tool's callback, as a relay's get_state)."""
        return {}
