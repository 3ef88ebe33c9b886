"""A strip of RGB LEDs (WS2812, "NeoPixel"), through MicroPython's neopixel module.
self.<name>.set_color {red, green, blue} (every LED; 0,0,0 is off), set_pixel {index, red,
green, blue}; self.get_device_status shows {"leds", "color"} (null once the LEDs differ)."""

from machine import Pin
from neopixel import NeoPixel

import parts
from umcp import INTEGER, Property, PropertyList

_COLOR = None  # red, green, blue: shared by every strip
_PIXEL = None  # index, red, green, blue (the index's maximum is the longest strip's)


def _rgb():
    return [Property(name, INTEGER, minimum=0, maximum=255, description=name + " level, 0-255")
            for name in ("red", "green", "blue")]


def _properties(count):
    global _COLOR, _PIXEL
    if _COLOR is None:
        _COLOR = PropertyList(_rgb())
    if _PIXEL is None or _PIXEL["index"].maximum < count - 1:
        _PIXEL = PropertyList([Property("index", INTEGER, minimum=0, maximum=count - 1,
                                        description="which LED, 0 is the first")] + _rgb())
    return _COLOR, _PIXEL


class Part(parts.Part):
    def __init__(self, entry):
        super().__init__(entry)
        self.count = entry["count"]
        self.leds = NeoPixel(Pin(entry["pin"], Pin.OUT), self.count)
        self.color = (0, 0, 0)  # of every LED; None once set_pixel made them differ
        self.leds.fill(self.color)
        self.leds.write()

    def register(self, server):
        color, pixel = _properties(self.count)
        self.tool(server, "set_color", "Set every LED of the %s (%d LEDs) to one colour; 0,0,0 "
                  "turns them off." % (self.label, self.count), self.set_color, color,
                  idempotent=True, destructive=False)
        self.tool(server, "set_pixel", "Set one LED of the %s to a colour (index 0 to %d)."
                  % (self.label, self.count - 1), self.set_pixel, pixel, idempotent=True,
                  destructive=False)

    def set_color(self, args):
        self.color = (args["red"], args["green"], args["blue"])
        self.leds.fill(self.color)
        self.leds.write()
        return True

    def set_pixel(self, args):
        index = args["index"]
        if index >= self.count:  # the shared schema may allow a longer strip's indexes
            raise ValueError("index must be 0 to %d" % (self.count - 1))
        self.leds[index] = (args["red"], args["green"], args["blue"])
        self.leds.write()
        self.color = None
        return True

    def state(self):
        return {"leds": self.count, "color": None if self.color is None else list(self.color)}
