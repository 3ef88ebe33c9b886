"""What the parts offer clients, registered once and dropped again: their tools at boot
(register(), from Board.register_tools: each type's tools as parts.types lists them, their
names, descriptions and parameters), once parts.setup has made the parts, and the sensors'
resources at a client's first resources/* request (resources(), through Board's
add_resources_later). Nothing here runs in between, so none of its code stays on the heap;
the runtime modules hold what the tools call. Apart from parts.setup so that the boot never
holds both at once.
"""

from umcp import Property, PropertyList
from umcp.compat import forget_modules


def register(made, server):
    """Each part's tools; the parts whose parameters come out the same share their
    PropertyList (and a parameter its Property)."""
    from parts.types import TYPES  # (here: a sensor's resources need none of it)

    shared = {}
    for part in made:
        kind = part.kind
        found = TYPES.get(kind)
        if found is None:  # a board's own part (its display): no tools
            continue
        names = found[3]
        values = part.label if names is None else tuple([getattr(part, name) for name in names])
        for verb, template, hints, method, parameters, schema in found[2]:
            server.add_tool("self.%s.%s" % (part.name, verb), (template, values),
                            None if parameters is None else _parameters(part, parameters, shared),
                            getattr(part, method), read_only=hints[0], destructive=hints[1],
                            idempotent=hints[2], output_schema=schema)
    forget_modules("parts.types")  # the table goes with this module


def resources(made, server):
    """Each sensor's resource, device://parts/<name>: its state(), updated when it changes."""
    for part in made:
        if part.poll_ms:
            server.add_resource(part.uri, part.name, part.state, mime_type="application/json",
                                description="%s: %s; updated when it changes" % (part.label, part.kind))


# -- the tools' parameters ---------------------------------------------------------------

def _parameters(part, tool, shared):
    """The PropertyList of a tool's parameters (`tool`: parts.types' form), made once for
    the parts whose parameters come out the same (a type's, of a range or size): `shared`
    holds them, and each Property."""
    made = []
    for name, kind, low, high, *more in tool:
        # A bound (attribute, add) is the part's attribute plus add; a description
        # (template, attribute, ...) is formatted with the part's attributes.
        default = more[0] if more else None
        description = more[1] if len(more) > 1 else None
        if isinstance(low, tuple):
            low = getattr(part, low[0]) + low[1]
        if isinstance(high, tuple):
            high = getattr(part, high[0]) + high[1]
        if isinstance(description, tuple):
            description = description[0] % tuple([getattr(part, field) for field in description[1:]])
        made.append((name, kind, low, high, default, description))
    key = tuple(made)
    found = shared.get(key)
    if found is None:
        properties = []
        for resolved in made:
            prop = shared.get(resolved)
            if prop is None:
                name, kind, low, high, default, description = resolved
                if default is None:
                    prop = Property(name, kind, minimum=low, maximum=high, description=description)
                else:
                    prop = Property(name, kind, default, low, high, description)
                shared[resolved] = prop
            properties.append(prop)
        found = shared[key] = PropertyList(properties)
    return found
