"""The boot's work for the parts' tools, loaded for it and dropped again (parts.register):
the tools each type offers (their names, the descriptions a model reads, their parameters)
registered on the server once parts.setup has made the parts. Nothing here runs once the
tools are registered, so none of its code stays on the heap; the runtime modules hold what
the tools call. Apart from parts.setup so that the boot never holds both at once.
"""

from umcp import INTEGER, STRING, Property, PropertyList
from umcp.compat import const

# A tool's hints: (read_only, destructive, idempotent).
_READS = const((True, None, None))
_SETS = const((None, False, True))  # sets a state: again is the same
_ACTS = const((None, False, None))  # does something each time (a beep)

# Per type: its tools, (verb, hints, method): self.<name>.<verb> calls part.<method>(args).
# Their descriptions and their parameters' are parts.texts', read only while a tools/list
# entry is written.
TOOLS = {
    # The reference firmware's lamp: a model knows these.
    "relay": (("get_state", _READS, "state"), ("turn_on", _SETS, "turn_on"),
              ("turn_off", _SETS, "turn_off")),
    "pwm": (("set_level", _SETS, "set_level"),),
    "servo": (("set_angle", _SETS, "set_angle"),),
    "buzzer": (("beep", _ACTS, "beep"),),
    "strip": (("set_color", _SETS, "set_color"), ("set_pixel", _SETS, "set_pixel")),
    "analog": (("read", _READS, "tool_read"),),
    "battery": (("get_level", _READS, "tool_read"),),
    "dht": (("read", _READS, "tool_read"),),
    "ds18b20": (("read", _READS, "tool_read"),),
    "oled": (("show_text", _SETS, "show_text"), ("clear", _SETS, "clear")),
    "lcd": (("show_text", _SETS, "show_text"), ("clear", _SETS, "clear")),
}
# Output schemas (JSON text, in flash when frozen) of the tools that answer an object:
# clients of 2025-06-18 and later get it and the answer as structuredContent (umcp.tool).
SCHEMAS = {"relay.get_state": '{"type":"object","properties":{"power":{"type":"boolean"}},'
                              '"required":["power"]}'}


def register(made, server):
    """parts.register's work: each part's tools, a type's parameters shared by its parts."""
    shared = {}
    for part in made:
        kind = part.kind
        for verb, hints, method in TOOLS.get(kind, ()):
            # (part, verb): the description is made from parts.texts as an entry is written.
            server.add_tool("self.%s.%s" % (part.name, verb), (part, verb),
                            _parameters(part, verb, shared), getattr(part, method),
                            read_only=hints[0], destructive=hints[1], idempotent=hints[2],
                            output_schema=SCHEMAS.get("%s.%s" % (kind, verb)))
        if part.poll_ms:
            part.server = server  # a tool's fresh reading tells the resource's subscribers


# -- the tools' parameters ---------------------------------------------------------------

def _parameters(part, verb, shared):
    """The PropertyList of a tool (None: it takes none), made once for the parts (of a
    type, and of a range or size) that can share it: `shared` holds them. A parameter's
    description is (part, name): parts.texts makes it as an entry is written."""
    kind = part.kind
    if kind == "strip":
        color = _shared(shared, "color", lambda: [
            Property(name, INTEGER, minimum=0, maximum=255, description=(part, name))
            for name in ("red", "green", "blue")])
        if verb == "set_color":
            return color
        top = part.count - 1  # the colour's Property objects serve the pixel's list too
        return _shared(shared, ("pixel", top), lambda: [Property(
            "index", INTEGER, minimum=0, maximum=top, description=(part, "index"))]
            + list(color))
    if kind == "pwm":
        return _shared(shared, "level", lambda: [Property(
            "level", INTEGER, minimum=0, maximum=100, description=(part, "level"))])
    if kind == "servo":
        top = part.range
        return _shared(shared, ("angle", top), lambda: [Property(
            "angle", INTEGER, minimum=0, maximum=top, description=(part, "angle"))])
    if kind == "buzzer":
        return _shared(shared, "beep", lambda: [
            Property("frequency", INTEGER, default=2000, minimum=20, maximum=20000,
                     description=(part, "frequency")),
            Property("duration_ms", INTEGER, default=200, minimum=10, maximum=5000,
                     description=(part, "duration_ms"))])
    if kind in ("oled", "lcd") and verb == "show_text":
        return _shared(shared, ("text", part.columns, part.rows), lambda: [
            Property("text", STRING, description=(part, "text"))])
    return None


def _shared(shared, key, make):
    found = shared.get(key)
    if found is None:
        found = shared[key] = PropertyList(make())
    return found
