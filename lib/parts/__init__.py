"""Peripherals a board takes from config.json's "parts": small classes with their tools
(and, for sensors, a resource that tells subscribers of a change), a few modules holding
the types that are alike, so that ten parts cost little heap.

Types and their modules: `output` holds `relay` (on/off output), `pwm` (dimmer, fan),
`servo` (hobby servo) and `buzzer` (tones); `sensor` holds the Sensor base, serve() (their
upkeep), `button` (button or contact input), `analog` (ADC input, scaled), `battery`
(voltage through a divider), `dht` (DHT11/DHT22) and `ds18b20` (1-Wire thermometer);
`strip` (RGB LEDs, NeoPixel) and `oled` (I2C SSD1306) have their own. `check` checks the
entries before any hardware is touched (loaded for the boot only). A module is imported
only when config.json names one of its types.

    parts = build(entries, chip, taken)   # PartError: one line naming the entry
    part.register(server); part.state(); await parts.sensor.serve(parts, server)
"""

import sys

from umcp.compat import get_logger

TYPES = ("relay", "pwm", "strip", "servo", "buzzer", "button", "analog", "dht", "ds18b20",
         "battery", "oled")
URI = "device://parts/"  # + the part's name: a sensor's resource
# A tool's hints: (read_only, destructive, idempotent).
READS = (True, None, None)
SETS = (None, False, True)  # sets a state: again is the same
ACTS = (None, False, None)  # does something each time (a beep)

log = get_logger("parts")


class PartError(ValueError):
    """A config.json entry that cannot be used; the message names the entry."""


def module_of(kind):
    """The module (in parts) that holds a type."""
    if kind in ("relay", "pwm", "servo", "buzzer"):
        return "output"
    if kind in ("button", "analog", "battery", "dht", "ds18b20"):
        return "sensor"
    return kind


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
        name = module_of(entry["type"])
        module = getattr(__import__("parts." + name), name)
        try:
            made.append(module.make(entry))
        except ValueError as e:  # the port refused a pin or a setting
            raise PartError("%s: %s" % (entry["where"], e))
    return made


class Part:
    """What every part has: its name, its words for the model, its tools.

    TOOLS, a class's table: (verb, description template, hints, method) for each tool
    self.<name>.<verb>, which calls self.<method>(args) with the parameters
    self.properties(verb) gives (None: none). The templates are formatted with
    self.values() when a tools/list page is written (umcp.tool): a part keeps no
    description of its own on the heap."""

    poll_ms = 0  # sensors: how often serve() reads them
    TOOLS = ()

    def __init__(self, entry):
        self.name = entry["name"]
        self.kind = entry["type"]
        # The maker's words for it ("desk lamp"), else its name in words; the tools'
        # descriptions say "the <label>".
        label = entry.get("description") or self.name.replace("_", " ")
        self.label = label[4:] if label[:4] in ("the ", "The ") else label
        self.where = entry["where"]

    def values(self):
        """What the tools' description templates are formatted with."""
        return self.label

    def properties(self, verb):
        """The parameters (a PropertyList, shared by the parts of a type) of a tool."""
        return None

    def register(self, server):
        """Add this part's tools."""
        values = self.values()
        for verb, template, hints, method in self.TOOLS:
            server.add_tool("self.%s.%s" % (self.name, verb), (template, values),
                            self.properties(verb), getattr(self, method), read_only=hints[0],
                            destructive=hints[1], idempotent=hints[2])

    def state(self):
        """What get_device_status shows of it: from memory, never a slow hardware read."""
        return {}


_SHARED = {}  # name -> a PropertyList made by the first part that needs it


def shared(name, make):
    """The PropertyList `make()` gives, made once and shared by every part that asks."""
    found = _SHARED.get(name)
    if found is None:
        found = _SHARED[name] = make()
    return found
