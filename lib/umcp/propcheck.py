"""The checks a tool's Property passes as it is made and joins its PropertyList
(umcp.schema): loaded while tools are made, at the board's start, and dropped after it
(umcpfw.app): a session makes no properties, and their checks need no heap meanwhile.
Imports nothing: umcp.schema hands it what it needs."""


def checked_enum(name, type, minimum, maximum, enum, types, is_int, is_number):
    """ValueError for a mistake in a Property's arguments (`types`: the type names it may
    have; is_int and is_number: umcp.schema's); else its enum as a tuple, or None."""
    if not isinstance(name, str) or not name:
        raise ValueError("property name must be a non-empty string")
    if type not in types:
        raise ValueError("property %s: unknown type %r" % (name, type))
    numeric = type == "integer" or type == "number"
    if not numeric and (minimum is not None or maximum is not None):
        raise ValueError("property %s: minimum/maximum apply to numbers and integers only" % name)
    for bound in (minimum, maximum):
        if bound is not None and not (is_int(bound) if type == "integer" else is_number(bound)):
            raise ValueError("property %s: minimum/maximum must be %ss" % (name, type))
    if minimum is not None and maximum is not None and minimum > maximum:
        raise ValueError("property %s: minimum %s is above maximum %s" % (name, minimum, maximum))
    if enum is None:
        return None
    if type != "string":
        raise ValueError("property %s: enum applies to strings only" % name)
    enum = tuple(enum)
    if not enum or not all(isinstance(value, str) for value in enum):
        raise ValueError("property %s: enum must list one string or more" % name)
    return enum


def check_addable(properties, prop, kind):
    """ValueError unless `prop` is a `kind` (umcp.schema's Property) whose name none of
    `properties` has."""
    if not isinstance(prop, kind):
        raise ValueError("not a Property: %r" % (prop,))
    for known in properties:
        if known.name == prop.name:
            raise ValueError("duplicate property " + prop.name)
