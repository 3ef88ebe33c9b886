"""Outputs at run time: what the board drives on a pin (parts.setup makes them,
parts.toolset says which tools call what). In one module, and one class (Output), because
they are alike and small.

- relay: on/off (a relay, a lamp, a MOSFET switch); `invert`: on is the low level (most
  relay modules). switch(on) is also how a maker's module drives it.
- pwm: a level 0-100 % (a dimmer, a fan, a motor through a driver).
- strip: RGB LEDs (WS2812, "NeoPixel") through MicroPython's neopixel module: one colour for
  all, or one LED; get_device_status shows {"leds", "color"} (null once the LEDs differ).
- servo: an angle, as a pulse of min_us..max_us every period (50 Hz); no pulse until the
  first call, so the servo stays where it is at boot.
- buzzer: a tone that starts at once, the call answering; a task of its own ends it (a
  long beep does not hold the other calls).
"""

import asyncio

import parts
from umcp.compat import const

_FULL = const(65535)
_HALF = const(32768)  # a square wave: the loudest a piezo gets


class Output(parts.Part):
    """Every output type is this class: parts.toolset registers the methods a type's
    tools call (a class each would cost more heap than their few lines), and parts.setup
    sets what they drive: relay: invert, pin; pwm: invert, pwm; strip: count, leds (a
    neopixel.NeoPixel), color (of every LED, None once set_pixel made them differ); servo:
    min_us, max_us, range, pwm; buzzer: pwm."""

    power = level = angle = None  # a relay's, a PWM output's, a servo's state
    sounding = False  # a buzzer's
    _end = None  # the task that ends a buzzer's tone

    def switch(self, on):
        """A relay on or off (also how a maker's module drives it)."""
        self.pin.value(1 if on != self.invert else 0)
        self.power = on
        return True

    def turn_on(self, args):
        return self.switch(True)

    def turn_off(self, args):
        return self.switch(False)

    def set_level(self, args):
        level = args["level"]
        duty = level * _FULL // 100
        self.pwm.duty_u16(_FULL - duty if self.invert else duty)
        self.level = level
        return True

    def pulse_us(self, angle):
        return self.min_us + (self.max_us - self.min_us) * angle // self.range

    def set_angle(self, args):
        angle = args["angle"]
        self.pwm.duty_ns(self.pulse_us(angle) * 1000)
        self.angle = angle
        return True

    def beep(self, args):
        if self._end is not None:
            self._end.cancel()
        self.pwm.freq(args["frequency"])
        self.pwm.duty_u16(_HALF)
        self.sounding = True
        self._end = asyncio.create_task(self._silence(args["duration_ms"]))
        return {"frequency": args["frequency"], "duration_ms": args["duration_ms"]}

    async def _silence(self, ms):
        # A newer beep cancels this task during the sleep and keeps the tone going.
        await asyncio.sleep(ms / 1000)
        self.pwm.duty_u16(0)
        self.sounding = False
        self._end = None

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
        kind = self.kind
        if kind == "strip":
            return {"leds": self.count, "color": None if self.color is None else list(self.color)}
        if kind == "relay":
            return {"power": self.power}
        if kind == "pwm":
            return {"level": self.level}
        if kind == "servo":
            angle = self.angle
            return {"angle": angle, "pulse_us": None if angle is None else self.pulse_us(angle)}
        if kind != "buzzer":
            raise ValueError(kind)  # a type without its branch here
        return {"sounding": self.sounding}
