"""Peripherals a board takes from config.json's "parts": small classes with their tools
(and, for sensors, a resource that tells subscribers of a change).

What a part does at run time is in the module of its kind, resident while the firmware
runs: `output` (relay, pwm, servo, buzzer: one class), `sensor` (button, analog, battery,
dht, ds18b20: one class, and serve() that reads them), `strip` (RGB LEDs, NeoPixel), `oled` (I2C
SSD1306), `lcd` (SPI ST7789/ILI9341), both on `screen` (what text screens share). How parts are made and which tools they offer is boot work, in modules that
leave the heap once it is done: `check` (the entries checked before any hardware is
touched), `setup` (the parts made, their pins and drivers wired) and `toolset` (their
tools registered), one at a time. A runtime module is imported only when config.json names one of its types.

    parts = build(entries, chip, taken)   # PartError: one line naming the entry
    register(parts, server); part.state(); await parts.sensor.serve(parts, server)
"""

from umcp.compat import call_then_forget, get_logger

URI = "device://parts/"  # + the part's name: a sensor's resource

log = get_logger("parts")


class PartError(ValueError):
    """A config.json entry that cannot be used; the message names the entry."""


def build(entries, chip=None, taken=None, names=(), builtin=()):
    """The parts for config.json's "parts" list (after the board's `builtin` ones), checked
    first (check.entries: PartError names the entry) against the chip's pins (the running
    chip's, else `chip`, else esp32), the pins the board itself uses (`taken`: {pin: what})
    and the board's own tool namespaces (`names`)."""
    # One boot-only module at a time, each off the heap again after its call: the boot's
    # peak stays low and none of their code stays resident.
    entries = call_then_forget("parts.check", "entries", entries, chip, taken, names, builtin)
    return call_then_forget("parts.setup", "make", entries)


def register(parts, server):
    """Add the parts' tools to the server (parts.toolset, loaded for this only)."""
    call_then_forget("parts.toolset", "register", parts, server)


class Part:
    """What every part has: its name, its words for the model, where config.json has it.
    A type's class adds what its tools call (parts.toolset says which) and its state()."""

    poll_ms = 0  # sensors: how often serve() reads them
    status = False  # screens: the board's status screen ("status": true)

    def __init__(self, entry):
        self.name = entry["name"]
        self.kind = entry["type"]
        # The maker's words for it ("desk lamp"), else its name in words (parts.check
        # makes it; the tools' descriptions say "the <label>"); None: a board's own part.
        self.label = entry.get("label")
        self.index = entry["index"]  # where config.json has it: `where` says it in words

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
