"""A strip of RGB LEDs (WS2812, "NeoPixel") at run time, through MicroPython's neopixel
module (parts.setup makes it, parts.toolset says which tools call what).
get_device_status shows {"leds", "color"} (null once the LEDs differ)."""

import parts


class Strip(parts.Part):
    # count, leds (a neopixel.NeoPixel), color (of every LED, None once set_pixel made
    # them differ): set by parts.setup

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

    def state(self, args=None):
        return {"leds": self.count, "color": None if self.color is None else list(self.color)}
