"""What a model reads of the parts' tools: their descriptions, as templates. Loaded while a
tools/list entry is written (parts.Part.describe) and dropped again: on a board that runs
.mpy files a module's strings are heap objects while it is loaded, and these would
otherwise stay there for the whole session (parts.toolset registers the tools).
"""

# Per type, per tool: the template, formatted with the part's label, or with the
# attributes VALUES names.
TOOLS = {
    # The reference firmware's lamp: a model knows these.
    "relay": {"get_state": "Get the power state of the %s",
              "turn_on": "Turn on the %s",
              "turn_off": "Turn off the %s"},
    "pwm": {"set_level": "Set the power of the %s in percent (0 is off, 100 is full)."},
    "servo": {"set_angle": "Turn the %s to an angle in degrees (0 to %d)."},
    "buzzer": {"beep": "Sound the %s: a tone of a frequency (Hz) for a time (ms)."},
    "strip": {"set_color": "Set every LED of the %s (%d LEDs) to one colour; 0,0,0 turns them off.",
              "set_pixel": "Set one LED of the %s (%d LEDs, the first is index 0) to a colour."},
    "analog": {"read": "Read the %s now: its value from %g to %g %s."},
    "battery": {"get_level": "The charge of the %s in percent, and its voltage."},
    "dht": {"read": "Read the %s: temperature in degrees Celsius and relative humidity in "
                    "percent."},
    "ds18b20": {"read": "Read the %s: temperature in degrees Celsius."},
    "oled": {"show_text": "Show text on the %s (a %dx%d OLED screen), replacing what it showed.",
             "clear": "Clear the %s (a %dx%d OLED screen)."},
    "lcd": {"show_text": "Show text on the %s (a %dx%d colour screen), replacing what it "
                         "showed.",
            "clear": "Clear the %s (a %dx%d colour screen)."},
}
VALUES = {"servo": ("label", "range"), "strip": ("label", "count"),
          "analog": ("label", "low", "high", "unit"), "oled": ("label", "width", "height"),
          "lcd": ("label", "width", "height")}


def describe(part, verb):
    """The description of `part`'s tool `verb`."""
    names = VALUES.get(part.kind)
    values = part.label if names is None else tuple([getattr(part, name) for name in names])
    return TOOLS[part.kind][verb] % values
