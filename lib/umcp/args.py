"""Call arguments checked against a tool's parameters: their types, InvalidParams, and
check_arguments() over umcp.schema's Property objects or a parameter table's rows (as a
tool catalogue holds them: umcp.catalogue). What a connected device runs for each call,
resident; the parameters as objects (Property, PropertyList) are umcp.schema's, for
tools made at run time."""

BOOLEAN = "boolean"
INTEGER = "integer"
NUMBER = "number"
STRING = "string"

_INF = float("inf")


class InvalidParams(ValueError):
    """Raised for arguments that do not fit a tool's parameters. The client gets -32602
    (an ``isError`` result from revision 2025-11-25 on) with its message."""


def is_int(value):
    # bool is an int on CPython (not on MicroPython); a JSON `true` is never an integer.
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value):
    """An int or a finite float, never a bool: what a NUMBER property accepts."""
    if isinstance(value, float):
        return value == value and value != _INF and value != -_INF  # NaN is unequal to itself
    return is_int(value)


def _kind(value):
    """The JSON type name of a decoded value, for error messages."""
    if isinstance(value, bool):
        return "boolean"
    if is_int(value) or isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def _quoted(text, limit=40):
    """A client's string for an error message: quoted, and cut when long."""
    if len(text) > limit:
        text = text[:limit] + "..."
    return '"%s"' % text


def check_value(value, name, type, minimum=None, maximum=None, enum=None):
    """`value` as a callback gets it for a parameter of this name, type, range and enum, or
    InvalidParams naming the bound (Property.check; umcp.catalogue's rows)."""
    if type == BOOLEAN:
        if isinstance(value, bool):
            return value
    elif type == STRING:
        if isinstance(value, str):
            if enum is not None and value not in enum:
                raise InvalidParams("%s: %s is not one of %s" % (name, _quoted(value), ", ".join(enum)))
            return value
    elif type == NUMBER:
        # A JSON true is no number; NaN and the infinities (Python's json reads them) are refused.
        if is_number(value):
            value = float(value)
            if minimum is not None and value < minimum:
                raise InvalidParams("%s: %s is below the minimum %s" % (name, value, minimum))
            if maximum is not None and value > maximum:
                raise InvalidParams("%s: %s is above the maximum %s" % (name, value, maximum))
            return value
        if isinstance(value, float):
            raise InvalidParams("%s: expected a finite number, got %s" % (name, value))
    else:
        # JSON Schema counts 5.0 as an integer; 5.5, inf and nan are not.
        if isinstance(value, float) and value % 1 == 0:
            value = int(value)
        if is_int(value):
            if minimum is not None and value < minimum:
                raise InvalidParams("%s: %d is below the minimum %d" % (name, value, minimum))
            if maximum is not None and value > maximum:
                raise InvalidParams("%s: %d is above the maximum %d" % (name, value, maximum))
            return value
    raise InvalidParams("%s: expected %s, got %s" % (name, type, _kind(value)))


def check_arguments(params, arguments):
    """Check a call's arguments against a tool's parameters. Unknown argument names are
    refused rather than ignored: a misspelt optional argument would otherwise silently
    fall back to its default.

    :param params: umcp.schema's Property objects, or a parameter table's rows as a tool
                   catalogue holds them (name, type, required, default, minimum, maximum,
                   enum); either is read where it is, nothing allocated but the values.
    :param arguments: The call's ``arguments``: a dict, or None for none.
    :returns: A dict of every parameter, defaults filled in.
    :raises InvalidParams: For arguments that are not an object, or a missing, unknown or
                           unfitting argument.
    """
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, dict):
        raise InvalidParams("arguments must be an object")
    for given in arguments:
        for param in params:
            if (param[0] if isinstance(param, list) else param.name) == given:
                break
        else:
            raise InvalidParams("unknown argument " + given)
    values = {}
    for param in params:
        if isinstance(param, list):
            name, type, required, default, minimum, maximum, enum = param
        else:
            name = param.name
            type = param.type
            required = param.required
            default = param.default
            minimum = param.minimum
            maximum = param.maximum
            enum = param.enum
        if name in arguments:
            values[name] = check_value(arguments[name], name, type, minimum, maximum, enum)
        elif required:
            raise InvalidParams("missing required argument " + name)
        else:
            values[name] = default
    return values
