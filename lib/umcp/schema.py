"""A tool's parameters as objects, for tools made at run time (a maker's add_tool(), a board
without a tool catalogue): Property, PropertyList. Their JSON Schema is written by
umcp.listing (property_schema, input_schema); a call's arguments are checked by
umcp.args, which the board keeps resident without this module where a catalogue holds
its tools."""

from .args import BOOLEAN, INTEGER, NUMBER, STRING, InvalidParams, check_arguments, check_value, is_int, is_number

_TYPES = (BOOLEAN, INTEGER, NUMBER, STRING)


class _Required:
    """Marks a property without a default value."""


_REQUIRED = _Required()


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
        return check_arguments(self._properties, arguments)


# The parameters of every tool that takes none (McpTool uses it for them all): one list
# for the heap's sake, so it cannot grow; add() fails.
NO_PROPERTIES = PropertyList()
NO_PROPERTIES._properties = ()
