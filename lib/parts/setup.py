"""The boot's work for config.json's parts, loaded for it and dropped again (boards.add_parts):
once parts.check has checked the entries, each part made as its type's runtime class says
and wired (parts.types.wire: its attributes, pins and drivers; a board's own LCD too:
boards.setup.board_screen). Nothing here runs once the parts are made, so none of its code
stays on the heap: the runtime classes have no constructors, and parts.toolset registers
the tools.
"""

import parts
from parts.types import BOARDS_OWN, TYPES, wire


def make(entries):
    """The parts of `entries` (parts.check.entries' answer), each made and wired; a
    PartError naming the entry when the port refuses a pin or a setting."""
    made = []
    for entry in entries:
        kind = entry["type"]
        module, name = runtime_of(kind)
        part = getattr(getattr(__import__("parts." + module), module), name)()
        part.name = entry["name"]
        part.kind = kind
        part.label = entry.get("label")
        part.index = entry["index"]  # where config.json has it: Part.where says it in words
        try:
            wire(part, entry)
        except ValueError as e:  # the port refused a pin or a setting
            raise parts.PartError("%s: %s" % (entry["where"], e))
        made.append(part)
    return made


def runtime_of(kind):
    """(the runtime module in parts that holds a type, its class there)."""
    found = TYPES.get(kind)
    return found[:2] if found is not None else BOARDS_OWN[kind]


def module_of(kind):
    """The runtime module (in parts) that holds a type."""
    return runtime_of(kind)[0]
