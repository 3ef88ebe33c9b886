"""config.json's "parts" entries checked before any hardware is touched: each entry's type,
name, pins and options, against the chip's GPIOs and the pins already in use. Loaded for
the boot only (boards.add_parts drops it again). A problem is a PartError naming the entry:

    config.json parts[2] (relay 'lamp'): GPIO 34 is input-only on the esp32: an output needs another pin
"""

import sys

from parts import PartError, log
from parts.types import REQUIRED, TYPES, rules
from umcp.compat import const

# parts.types' kinds of option (const(): no names on the heap; the tables test holds the
# two to the same values).
_OUT = const(1)
_IN = const(2)
_IO = const(3)
_ADC = const(4)
_INT = const(5)
_NUMBER = const(6)
_BOOL = const(7)
_TEXT = const(8)
# Tool namespaces of the common tools (self.<name>.*): a part may not take them.
_RESERVED = const(("audio_speaker", "screen", "camera", "assets", "system", "network"))
_NAME_CHARS = const("abcdefghijklmnopqrstuvwxyz0123456789_")
_NAME_MAX = const(24)  # self.<name>.<verb> stays well within MCP's tool name limit
_TEXT_MAX = const(60)

_FLASH = const("wired to the flash chip")
_FLASH_PSRAM = const("wired to the flash/PSRAM")
_TX = const("the serial console's TX (the REPL and make deploy need it)")
_RX = const("the serial console's RX (the REPL and make deploy need it)")
_D_MINUS = const("the USB D- line")
_D_PLUS = const("the USB D+ line")

# Per chip (ESP-IDF's GPIO summaries): its GPIO ranges; its flash (and PSRAM) pins, first
# to last; the other pins that are not free (the serial console, the native USB); the
# input-only ones; the ADC pins the firmware can read (ADC1: ADC2 stops while Wi-Fi is on).
CHIPS = {
    "esp32": {"gpio": ((0, 19), (21, 23), (25, 27), (32, 39)), "flash": (6, 11, _FLASH),
              "busy": {1: _TX, 3: _RX}, "input_only": (34, 39), "adc": (32, 39)},
    "esp32s2": {"gpio": ((0, 21), (26, 46)), "flash": (26, 32, _FLASH_PSRAM),
                "busy": {19: _D_MINUS, 20: _D_PLUS}, "input_only": (46, 46), "adc": (1, 10)},
    "esp32s3": {"gpio": ((0, 21), (26, 48)), "flash": (26, 32, _FLASH_PSRAM),
                "busy": {19: _D_MINUS, 20: _D_PLUS, 43: _TX, 44: _RX}, "input_only": None,
                "adc": (1, 10)},
    "esp32c3": {"gpio": ((0, 21),), "flash": (12, 17, _FLASH),
                "busy": {18: _D_MINUS, 19: _D_PLUS, 20: _RX, 21: _TX}, "input_only": None,
                "adc": (0, 4)},
    "esp32c6": {"gpio": ((0, 30),), "flash": (24, 30, _FLASH),
                "busy": {12: _D_MINUS, 13: _D_PLUS, 16: _TX, 17: _RX}, "input_only": None,
                "adc": (0, 6)},
}
_DEFAULT_CHIP = const("esp32")


def running_chip():
    """The chip the firmware runs on ("esp32s3"...; chip_of()), None off a board."""
    return chip_of(getattr(sys.implementation, "_machine", ""))


def chip_of(machine):
    """"esp32s3"... from a board's sys.implementation._machine: "... with ESP32S3" up to
    MicroPython 1.27, "... with ESP32-S3" since; None off an ESP32 (the unix port, the
    WebAssembly build's "JS with Emscripten"). An ESP32 CHIPS does not know is returned
    too: its pins are then the port's to check (_pin())."""
    chip = machine.split(" with ")[-1].strip().lower().replace("-", "") if " with " in machine else ""
    return chip if chip.startswith("esp32") else None


def entries(parts, chip=None, taken=None, names=(), builtin=()):
    """The entries (the board's `builtin` ones first), checked, with every option's default
    filled in, "where" (the entry's name for messages) and "index" (its place in
    config.json's list; the board's own: below 0) added. `chip`: config.json's, for
    where the running chip cannot be told; `taken`: {pin: what the board uses it for};
    `names`: the board's own tool namespaces."""
    if parts is None:
        parts = []
    if not isinstance(parts, list):
        raise PartError('config.json "parts" must be a list of objects, got %s' % _kind(parts))
    if chip is not None and chip not in CHIPS:
        raise PartError('config.json "chip" %r is not one of %s' % (chip, ", ".join(sorted(CHIPS))))
    chip = running_chip() or chip or _DEFAULT_CHIP
    if chip not in CHIPS:  # a newer chip: machine.Pin refuses a pin it lacks (parts.setup)
        log.warning("GPIO checks: the %s is not one umcp knows the pins of (%s); the "
                          "port checks them", chip, ", ".join(sorted(CHIPS)))
    pins = {}  # pin -> who uses it
    for pin, what in (taken or {}).items():
        pins[pin] = "the board's " + what
    buses = {}  # I2C bus -> (sda, scl, who)
    addresses = {}  # (bus, address) -> who
    seen = {}  # part name -> where
    checked = []
    for index, entry in enumerate(list(builtin) + parts):
        index -= len(builtin)
        where = "config.json parts[%d]" % index if index >= 0 else "the board's own part"
        if not isinstance(entry, dict):
            raise PartError("%s must be an object like {\"type\": \"relay\", \"name\": \"lamp\", "
                            "\"pin\": 2}, got %s" % (where, _kind(entry)))
        kind = entry.get("type")
        if kind not in TYPES:
            raise PartError("%s: unknown type %r; the types are %s" % (where, kind, ", ".join(sorted(TYPES))))
        name = entry.get("name")
        problem = _bad_name(name, names)
        if problem:
            raise PartError("%s (%s): %s" % (where, kind, problem))
        where = "%s (%s '%s')" % (where, kind, name)
        if name in seen:
            raise PartError("%s: the name '%s' is taken by %s" % (where, name, seen[name]))
        seen[name] = where
        out = {"type": kind, "name": name, "where": where, "index": index}
        options = TYPES[kind][1]
        try:
            _options(entry, options, out, chip)
            problem = rules(out)
        except PartError as e:
            raise PartError("%s: %s" % (where, e))
        if problem:
            raise PartError("%s: %s" % (where, problem))
        if kind == "oled":
            _bus(out, where, pins, buses, addresses)
        else:
            for option in options:
                if option[1] in (_OUT, _IN, _IO, _ADC):
                    pin = out[option[0]]
                    if pin is None:  # an optional pin left out (an LCD's cs, rst, bl)
                        continue
                    if pin in pins:
                        raise PartError("%s: GPIO %d is already used by %s" % (where, pin, pins[pin]))
                    pins[pin] = where
        checked.append(out)
    return checked


def _options(entry, options, out, chip):
    known = ["type", "name", "description"] + [option[0] for option in options]
    for key in entry:
        if key not in known:
            raise PartError("unknown option %r (%s takes %s)" % (key, out["type"], ", ".join(known[2:])))
    description = entry.get("description")
    if description is not None:
        if not isinstance(description, str) or not 0 < len(description) <= _TEXT_MAX or \
                [c for c in description if c < " "]:
            raise PartError("description must be text of 1 to %d characters on one line" % _TEXT_MAX)
        out["description"] = description
    # The maker's words for it ("desk lamp"), else its name in words: the tools'
    # descriptions say "the <label>" (parts.Part keeps it).
    label = description or out["name"].replace("_", " ")
    out["label"] = label[4:] if label[:4] in ("the ", "The ") else label
    for option in options:
        key, kind, default = option[0], option[1], option[2]
        value = entry.get(key, default)
        if value is REQUIRED:
            raise PartError("%r is missing" % key)
        if value is not None:
            _value(key, kind, value, option[3:], chip)
            if kind == _NUMBER:
                value = float(value)
        out[key] = value


def _value(key, kind, value, bounds, chip):
    if isinstance(kind, tuple):
        if value not in kind or isinstance(value, bool):
            raise PartError("%s must be one of %s, got %r" % (key, ", ".join(repr(c) for c in kind), value))
        return
    if kind in (_OUT, _IN, _IO, _ADC):
        _pin(key, kind, value, chip)
        return
    if kind == _BOOL:
        if not isinstance(value, bool):
            raise PartError("%s must be true or false, got %r" % (key, value))
        return
    if kind == _TEXT:
        if not isinstance(value, str) or not 0 < len(value) <= 12:
            raise PartError("%s must be text of 1 to 12 characters, got %r" % (key, value))
        return
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and (value != value or value in (float("inf"), float("-inf"))):
        number = False  # NaN and the infinities (Python's json reads them) are no setting
    if not number or kind == _INT and value != int(value):
        raise PartError("%s must be %s, got %r" % (key, "a whole number" if kind == _INT else "a number", value))
    low = bounds[0] if bounds else None
    high = bounds[1] if len(bounds) > 1 else None
    if low is not None and value < low or high is not None and value > high:
        raise PartError("%s must be %s..%s, got %r" % (key, low, "" if high is None else high, value))


def _pin(key, kind, pin, chip):
    if not isinstance(pin, int) or isinstance(pin, bool):
        raise PartError("%s must be a GPIO number, got %r" % (key, pin))
    table = CHIPS.get(chip)
    if table is None:  # not known here (entries() said so): the port checks the pin
        return
    if not [r for r in table["gpio"] if r[0] <= pin <= r[1]]:
        raise PartError("%s: GPIO %d does not exist on the %s (its GPIOs: %s)"
                        % (key, pin, chip, ", ".join("%d-%d" % r for r in table["gpio"])))
    first, last, flash = table["flash"]
    busy = flash if first <= pin <= last else table["busy"].get(pin)
    if busy:
        raise PartError("%s: GPIO %d is %s on the %s; pick another" % (key, pin, busy, chip))
    only = table["input_only"]
    if kind in (_OUT, _IO) and only and only[0] <= pin <= only[1]:
        raise PartError("%s: GPIO %d is input-only on the %s: %s needs a pin that can drive"
                        % (key, pin, chip, "an output" if kind == _OUT else "a bus line"))
    adc = table["adc"]
    if kind == _ADC and not adc[0] <= pin <= adc[1]:
        raise PartError("%s: GPIO %d has no ADC the firmware can read on the %s (ADC2 stops "
                        "while Wi-Fi is on): use one of GPIO %d-%d" % (key, pin, chip, adc[0], adc[1]))


def _bus(out, where, pins, buses, addresses):
    """An I2C part: its two lines may be shared with the other parts on the same bus."""
    bus, sda, scl = out["i2c"], out["sda"], out["scl"]
    if sda == scl:
        raise PartError("%s: sda and scl must be two pins, both are GPIO %d" % (where, sda))
    known = buses.get(bus)
    if known is None:
        for pin in (sda, scl):
            if pin in pins:
                raise PartError("%s: GPIO %d is already used by %s" % (where, pin, pins[pin]))
            pins[pin] = where
        buses[bus] = (sda, scl, where)
    elif known[:2] != (sda, scl):
        raise PartError("%s: I2C %d is on GPIO %d/%d for %s; put it there, or on the other bus"
                        % (where, bus, known[0], known[1], known[2]))
    if (bus, out["addr"]) in addresses:
        raise PartError("%s: address 0x%02X on I2C %d is taken by %s"
                        % (where, out["addr"], bus, addresses[(bus, out["addr"])]))
    addresses[(bus, out["addr"])] = where


def _bad_name(name, names):
    if not isinstance(name, str) or not name:
        return '"name" is missing: give it a short name like "lamp" (its tools are self.<name>.*)'
    if len(name) > _NAME_MAX or [c for c in name if c not in _NAME_CHARS] or name[0] not in _NAME_CHARS[:26]:
        return "name %r must be 1 to %d of a-z, 0-9 and _, starting with a letter" % (name, _NAME_MAX)
    if name in _RESERVED or name in names:
        return "the name %r is taken by the firmware's own tools (self.%s.*)" % (name, name)
    return None


def _kind(value):
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return repr(value)
