"""Tool parameters and the strict checking of call arguments. Their JSON Schema is
written by umcp.listing (property_schema, input_schema), which a connected device needs
only while a tools/list page is written."""

BOOLEAN = "boolean"
INTEGER = "integer"
NUMBER = "number"
STRING = "string"

_TYPES = (BOOLEAN, INTEGER, NUMBER, STRING)
_INF = float("inf")


class InvalidParams(ValueError):
    """Arguments that do not fit a tool's schema (JSON-RPC -32602)."""


class _Required:
    """Marks a property without a default value."""


_REQUIRED = _Required()


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


class Property:
    """One named parameter of a tool: boolean, integer, number or string.

    A property without a default is required. Only integers and numbers take a
    range, only strings an `enum` (the values allowed, a tuple of strings), and a
    default must fit them: each mistake raises ValueError when the tool is built.
    A NUMBER's callback gets a float (an int argument counts).
    """

    # What most properties leave unset, as class attributes: an instance keeps only what it
    # sets (each attribute costs its instance heap, for the whole session).
    enum = None  # the strings allowed, when the property has an enum
    minimum = None
    maximum = None
    description = None
    required = True
    default = None

    def __init__(self, name, type, default=_REQUIRED, minimum=None, maximum=None, description=None,
                 enum=None):
        from .propcheck import checked_enum  # while tools are made only (umcp.propcheck)

        enum = checked_enum(name, type, minimum, maximum, enum, _TYPES, is_int, is_number)
        if enum is not None:
            self.enum = enum  # set only when given: the class's None costs no heap
        self.name = name
        self.type = type
        if minimum is not None:
            self.minimum = minimum
        if maximum is not None:
            self.maximum = maximum
        if description is not None:
            self.description = description
        if default is not _REQUIRED:
            self.required = False
            try:
                default = self.check(default)  # as the callback gets it (a NUMBER's: a float)
            except InvalidParams as e:
                raise ValueError("default of " + str(e))
            if default is not None:
                self.default = default

    def check(self, value):
        """Return `value` as the callback gets it, or raise InvalidParams naming the bound."""
        return check_value(value, self.name, self.type, self.minimum, self.maximum, self.enum)

    def row(self):
        """The property as a parameter table's row (umcp.catalogue): (name, type, required,
        default, minimum, maximum, enum)."""
        return (self.name, self.type, self.required, self.default, self.minimum, self.maximum,
                self.enum)


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


def check_arguments(rows, arguments):
    """Call arguments checked against a parameter table (rows as Property.row() gives
    them); returned with every default filled in.

    Unknown argument names are refused rather than ignored: a misspelt optional argument
    would otherwise silently fall back to its default.
    """
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, dict):
        raise InvalidParams("arguments must be an object")
    for given in arguments:
        for row in rows:
            if row[0] == given:
                break
        else:
            raise InvalidParams("unknown argument " + given)
    values = {}
    for name, type, required, default, minimum, maximum, enum in rows:
        if name in arguments:
            values[name] = check_value(arguments[name], name, type, minimum, maximum, enum)
        elif required:
            raise InvalidParams("missing required argument " + name)
        else:
            values[name] = default
    return values


class PropertyList:
    """The ordered parameters of one tool; names are unique."""

    def __init__(self, properties=()):
        self._properties = []
        for prop in properties:
            self.add(prop)

    def add(self, prop):
        from .propcheck import check_addable  # while tools are made only (umcp.propcheck)

        check_addable(self._properties, prop, Property)
        self._properties.append(prop)

    def __iter__(self):
        return iter(self._properties)

    def __len__(self):
        return len(self._properties)

    def __getitem__(self, name):
        for prop in self._properties:
            if prop.name == name:
                return prop
        raise KeyError(name)

    def validate(self, arguments):
        """Check call arguments; return them with every default filled in (check_arguments)."""
        return check_arguments([prop.row() for prop in self._properties], arguments)


# The parameters of every tool that takes none (McpTool uses it for them all): one list
# for the heap's sake, so it cannot grow; add() fails.
NO_PROPERTIES = PropertyList()
NO_PROPERTIES._properties = ()
