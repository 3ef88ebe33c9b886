"""A PWM output at a level 0-100 %: a dimmer, a fan, a motor through a driver.
self.<name>.set_level {level}; its level shows in self.get_device_status."""

from machine import PWM, Pin

import parts
from umcp import INTEGER, Property, PropertyList

_FULL = 65535
_LEVEL = None  # the tools' PropertyList, shared by every PWM part


def _level_properties():
    global _LEVEL
    if _LEVEL is None:
        _LEVEL = PropertyList([Property("level", INTEGER, minimum=0, maximum=100,
                                        description="percent of full power: 0 off, 100 full")])
    return _LEVEL


class Part(parts.Part):
    def __init__(self, entry):
        super().__init__(entry)
        self.invert = entry["invert"]
        self.level = 0
        self.pwm = PWM(Pin(entry["pin"], Pin.OUT), freq=entry["freq"], duty_u16=self._duty(0))

    def _duty(self, level):
        duty = level * _FULL // 100
        return _FULL - duty if self.invert else duty

    def register(self, server):
        self.tool(server, "set_level", "Set the power of the %s in percent (0 is off, 100 is full)."
                  % self.label, self.set_level, _level_properties(), idempotent=True,
                  destructive=False)

    def set_level(self, args):
        level = args["level"]
        self.pwm.duty_u16(self._duty(level))
        self.level = level
        return True

    def state(self):
        return {"level": self.level}
