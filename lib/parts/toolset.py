"""What the parts offer clients, registered once and dropped again: their tools at boot
(register(), from Board.register_tools: the tools each type offers, their names, the
descriptions a model reads, their parameters), once parts.setup has made the parts, and the
sensors' resources at a client's first resources/* request (resources(), through Board's
add_resources_later). Nothing here runs in between, so none of its code stays on the heap;
the runtime modules hold what the tools call. Apart from parts.setup so that the boot never
holds both at once.
"""

from umcp import INTEGER, STRING, Property, PropertyList
from umcp.compat import const

# A tool's hints: (read_only, destructive, idempotent).
_READS = const((True, None, None))
_SETS = const((None, False, True))  # sets a state: again is the same
_ACTS = const((None, False, None))  # does something each time (a beep)

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


def register(made, server):
    """Each part's tools, a type's parameters shared by its parts."""
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


def resources(made, server):
    """Each sensor's resource, device://parts/<name>: its state(), updated when it changes."""
    for part in made:
        if part.poll_ms:
            server.add_resource(part.uri, part.name, part.state, mime_type="application/json",
                                description="%s: %s; updated when it changes" % (part.label, part.kind))


# -- the tools' parameters ---------------------------------------------------------------

def _parameters(part, verb, shared):
    """The PropertyList of a tool (None: it takes none), made once for the parts (of a
    type, and of a range or size) that can share it: `shared` holds them."""
    kind = part.kind
    if kind == "strip":
        # No parameter descriptions where the names, ranges and the tool's description say
        # it all: each is in every prompt the tool list goes into, and on the heap.
        color = _shared(shared, "color", lambda: [
            Property(name, INTEGER, minimum=0, maximum=255) for name in ("red", "green", "blue")])
        if verb == "set_color":
            return color
        top = part.count - 1  # the colour's Property objects serve the pixel's list too
        return _shared(shared, ("pixel", top), lambda: [Property("index", INTEGER, minimum=0, maximum=top)]
                       + list(color))
    if kind == "pwm":
        return _shared(shared, "level", lambda: [Property("level", INTEGER, minimum=0, maximum=100)])
    if kind == "servo":
        top = part.range
        return _shared(shared, ("angle", top), lambda: [Property("angle", INTEGER, minimum=0, maximum=top)])
    if kind == "buzzer":
        return _shared(shared, "beep", lambda: [
            Property("frequency", INTEGER, default=2000, minimum=20, maximum=20000),
            Property("duration_ms", INTEGER, default=200, minimum=10, maximum=5000)])
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
