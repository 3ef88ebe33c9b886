"""Small drivers for the peripherals umcp's tools act on."""


def check_percent(name, value):
    """`value` if it is an int in 0..100, else ValueError naming `name`."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        raise ValueError("%s must be an integer 0..100, got %r" % (name, value))
    return value
