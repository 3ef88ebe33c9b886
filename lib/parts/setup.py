"""The boot's work for config.json's parts, loaded for it and dropped again (boards.add_parts):
once parts.check has checked the entries, each part made as its type's runtime class says
and wired (parts.types.wire: its attributes, pins and drivers; a board's own LCD too:
boards.setup.board_screen). Nothing here runs once the parts are made, so none of its code
stays on the heap: the runtime classes have no constructors, and parts.toolset registers
the tools.
"""

import parts
from parts.types import TYPES, wire
from umcp.compat import forget_modules


def make(entries):
    """The parts of `entries` (parts.check.entries' answer), each made and wired; a
    PartError naming the entry when the port refuses a pin or a setting."""
    made = []
    for entry in entries:
        kind = entry["type"]
        module = module_of(kind)
        # Its class: the module's name capitalized (no name of its own in the table).
        part = getattr(getattr(__import__("parts." + module), module), module[0].upper() + module[1:])()
        part.name = entry["name"]
        part.kind = kind
        part.label = entry.get("label")
        part.index = entry["index"]  # where config.json has it: Part.where says it in words
        try:
            wire(part, entry)
        except ValueError as e:  # the port refused a pin or a setting
            raise parts.PartError("%s: %s" % (entry["where"], e))
        made.append(part)
    # parts.check loaded the types' table for these entries: it goes with this module.
    forget_modules("parts.types")
    return made


def module_of(kind):
    """The runtime module (in parts) that holds a type ("display": a board's own LCD)."""
    found = TYPES.get(kind)
    return "lcd" if found is None and kind == "display" else found[0]
