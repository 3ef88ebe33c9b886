"""Outputs: a pin and a value mapped onto it. In one module because they are alike and
small (one module's overhead instead of four).

- relay: on/off (a relay, a lamp, a MOSFET switch); the reference lamp's tools turn_on,
  turn_off, get_state ({"power"}). `invert`: on is the low level (most relay modules).
- pwm: a level 0-100 % (a dimmer, a fan, a motor through a driver): set_level {level}.
- servo: an angle, as a pulse of min_us..max_us every period (50 Hz): set_angle {angle};
  no pulse until the first call, so the servo stays where it is at boot.
- buzzer: a tone, beep {frequency, duration_ms}: it starts at once and the call answers;
  a task of its own ends it (a long beep does not hold the other calls).
"""

import asyncio

from machine import PWM, Pin

import parts
from umcp import INTEGER, Property, PropertyList
from umcp.compat import const

_FULL = const(65535)
_HALF = const(32768)  # a square wave: the loudest a piezo gets


def make(entry):
    kind = entry["type"]
    if kind == "relay":
        return Relay(entry)
    if kind == "pwm":
        return Pwm(entry)
    return Servo(entry) if kind == "servo" else Buzzer(entry)


class Relay(parts.Part):
    TOOLS = (("get_state", "Get the power state of the %s", parts.READS, "get_state"),
             ("turn_on", "Turn on the %s", parts.SETS, "turn_on"),
             ("turn_off", "Turn off the %s", parts.SETS, "turn_off"))

    def __init__(self, entry):
        super().__init__(entry)
        self.invert = entry["invert"]
        self.power = False
        self.pin = Pin(entry["pin"], Pin.OUT, value=1 if self.invert else 0)  # off at boot

    def switch(self, on):
        self.pin.value(1 if on != self.invert else 0)
        self.power = on
        return True

    def turn_on(self, args):
        return self.switch(True)

    def turn_off(self, args):
        return self.switch(False)

    def get_state(self, args):
        return {"power": self.power}

    def state(self):
        return {"power": self.power}


def _level():
    return PropertyList([Property("level", INTEGER, minimum=0, maximum=100,
                                  description="percent of full power: 0 off, 100 full")])


class Pwm(parts.Part):
    TOOLS = (("set_level", "Set the power of the %s in percent (0 is off, 100 is full).",
              parts.SETS, "set_level"),)

    def __init__(self, entry):
        super().__init__(entry)
        self.invert = entry["invert"]
        self.level = 0
        self.pwm = PWM(Pin(entry["pin"], Pin.OUT), freq=entry["freq"], duty_u16=self._duty(0))

    def _duty(self, level):
        duty = level * _FULL // 100
        return _FULL - duty if self.invert else duty

    def properties(self, verb):
        return parts.shared("level", _level)

    def set_level(self, args):
        level = args["level"]
        self.pwm.duty_u16(self._duty(level))
        self.level = level
        return True

    def state(self):
        return {"level": self.level}


class Servo(parts.Part):
    TOOLS = (("set_angle", "Turn the %s to an angle in degrees (0 to %d).", parts.SETS,
              "set_angle"),)

    def __init__(self, entry):
        super().__init__(entry)
        self.min_us = entry["min_us"]
        self.max_us = entry["max_us"]
        self.range = entry["range"]
        self.angle = None
        self.pwm = PWM(Pin(entry["pin"], Pin.OUT), freq=entry["freq"], duty_u16=0)

    def values(self):
        return (self.label, self.range)

    def properties(self, verb):
        # Shared by the servos of one range (most have 180 degrees).
        top = self.range
        return parts.shared(top, lambda: PropertyList([Property(
            "angle", INTEGER, minimum=0, maximum=top, description="degrees, 0 to %d" % top)]))

    def pulse_us(self, angle):
        return self.min_us + (self.max_us - self.min_us) * angle // self.range

    def set_angle(self, args):
        angle = args["angle"]
        self.pwm.duty_ns(self.pulse_us(angle) * 1000)
        self.angle = angle
        return True

    def state(self):
        pulse = None if self.angle is None else self.pulse_us(self.angle)
        return {"angle": self.angle, "pulse_us": pulse}


def _beep():
    return PropertyList([
        Property("frequency", INTEGER, default=2000, minimum=20, maximum=20000,
                 description="pitch in Hz (440 is the A above middle C)"),
        Property("duration_ms", INTEGER, default=200, minimum=10, maximum=5000,
                 description="how long, in milliseconds")])


class Buzzer(parts.Part):
    TOOLS = (("beep", "Sound the %s: a tone of a frequency (Hz) for a time (ms).", parts.ACTS,
              "beep"),)

    def __init__(self, entry):
        super().__init__(entry)
        self.pwm = PWM(Pin(entry["pin"], Pin.OUT), freq=2000, duty_u16=0)
        self.sounding = False
        self._end = None  # the task that ends the tone

    def properties(self, verb):
        return parts.shared("beep", _beep)

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

    def state(self):
        return {"sounding": self.sounding}
