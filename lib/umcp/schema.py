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
    """One named parameter of a tool.

    :param name: The argument's name.
    :param type: BOOLEAN, INTEGER, NUMBER or STRING. A NUMBER reaches the callback as a
                 float (an int argument counts).
    :param default: The value when the call leaves the argument out; without one the
                    property is required. It must fit the range and enum.
    :param minimum: The smallest value allowed (integers and numbers only).
    :param maximum: The largest value allowed (integers and numbers only).
    :param description: What the argument means, for the model (optional).
    :param enum: The values allowed, a tuple of strings (strings only).
    :raises ValueError: When the arguments do not fit together, at once.
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
        """Check one argument against this property.

        :param value: The argument as the call gave it.
        :returns: The value as the callback gets it (a NUMBER's as a float).
        :raises InvalidParams: When it does not fit, naming the bound it breaks.
        """
        return check_value(value, self.name, self.type, self.minimum, self.maximum, self.enum)

    def row(self):
        """The property as a parameter table's row (umcp.catalogue): (name, type, required,
        default, minimum, maximum, enum)."""
        return (self.name, self.type, self.required, self.default, self.minimum, self.maximum,
                self.enum)


class PropertyList:
    """The ordered parameters of one tool, each name once.

    :param properties: The Property objects, in the order tools/list shows them.
    :raises ValueError: When one is not a Property or a name repeats.
    """

    def __init__(self, properties=()):
        self._properties = []
        for prop in properties:
            self.add(prop)

    def add(self, prop):
        """Add a parameter after the others.

        :param prop: A Property.
        :raises ValueError: When it is not a Property or its name is taken.
        """
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
        """Check a call's arguments against these parameters.

        :param arguments: The call's ``arguments`` (a dict, or None for none).
        :returns: A dict of every parameter, defaults filled in.
        :raises InvalidParams: For a missing, unknown or unfitting argument.
        """
        return check_arguments(self._properties, arguments)


# The parameters of every tool that takes none (McpTool uses it for them all): one list
# for the heap's sake, so it cannot grow; add() fails.
NO_PROPERTIES = PropertyList()
NO_PROPERTIES._properties = ()
