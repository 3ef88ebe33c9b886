"""What a model reads of the parts' tools: the descriptions of the tools and of their
parameters, as templates. Loaded while a tools/list entry is written (parts.Part.describe)
and dropped again: on a board that runs .mpy files a module's strings are heap objects
while it is loaded, and these would otherwise stay there for the whole session
(parts.toolset registers the tools).
"""

# Per type, per tool or parameter: the template, formatted with the part's label and the
# attributes ATTRIBUTES names for its type.
TEXTS = {
    # The reference firmware's lamp: a model knows these.
    "relay": {"get_state": "Get the power state of the %(label)s",
              "turn_on": "Turn on the %(label)s",
              "turn_off": "Turn off the %(label)s"},
    "pwm": {"set_level": "Set the power of the %(label)s in percent (0 is off, 100 is full).",
            "level": "percent of full power: 0 off, 100 full"},
    "servo": {"set_angle": "Turn the %(label)s to an angle in degrees (0 to %(range)d).",
              "angle": "degrees, 0 to %(range)d"},
    "buzzer": {"beep": "Sound the %(label)s: a tone of a frequency (Hz) for a time (ms).",
               "frequency": "pitch in Hz (440 is the A above middle C)",
               "duration_ms": "how long, in milliseconds"},
    "strip": {"set_color": "Set every LED of the %(label)s (%(count)d LEDs) to one colour; "
                           "0,0,0 turns them off.",
              "set_pixel": "Set one LED of the %(label)s (%(count)d LEDs, the first is index "
                           "0) to a colour.",
              "index": "which LED, 0 is the first",
              "red": "red level, 0-255", "green": "green level, 0-255",
              "blue": "blue level, 0-255"},
    "analog": {"read": "Read the %(label)s now: its value from %(low)g to %(high)g %(unit)s."},
    "battery": {"get_level": "The charge of the %(label)s in percent, and its voltage."},
    "dht": {"read": "Read the %(label)s: temperature in degrees Celsius and relative humidity "
                    "in percent."},
    "ds18b20": {"read": "Read the %(label)s: temperature in degrees Celsius."},
    "oled": {"show_text": "Show text on the %(label)s (a %(width)dx%(height)d OLED screen), "
                          "replacing what it showed.",
             "clear": "Clear the %(label)s (a %(width)dx%(height)d OLED screen)."},
    "lcd": {"show_text": "Show text on the %(label)s (a %(width)dx%(height)d colour screen), "
                         "replacing what it showed.",
            "clear": "Clear the %(label)s (a %(width)dx%(height)d colour screen)."},
}
_SCREEN_TEXT = ("what to show: lines of up to %(columns)d characters, %(rows)d lines; longer "
                "lines wrap, a newline starts a line")
TEXTS["oled"]["text"] = TEXTS["lcd"]["text"] = _SCREEN_TEXT
ATTRIBUTES = {"servo": ("range",), "strip": ("count",), "analog": ("low", "high", "unit"),
              "oled": ("width", "height", "columns", "rows"),
              "lcd": ("width", "height", "columns", "rows")}


def describe(part, key):
    """The description of `part`'s tool or parameter `key`."""
    values = {"label": part.label}
    for name in ATTRIBUTES.get(part.kind, ()):
        values[name] = getattr(part, name)
    return TEXTS[part.kind][key] % values
