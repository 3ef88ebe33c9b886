"""A hobby servo on a PWM pin: its angle is a pulse of min_us..max_us every period (50 Hz).
self.<name>.set_angle {angle}; self.get_device_status shows {"angle", "pulse_us"}. Until
the first set_angle no pulse goes out: the servo stays where it is at boot."""

from machine import PWM, Pin

import parts
from umcp import INTEGER, Property, PropertyList


class Part(parts.Part):
    def __init__(self, entry):
        super().__init__(entry)
        self.min_us = entry["min_us"]
        self.max_us = entry["max_us"]
        self.range = entry["range"]
        self.angle = None
        self.pwm = PWM(Pin(entry["pin"], Pin.OUT), freq=entry["freq"], duty_u16=0)

    def register(self, server):
        angle = PropertyList([Property("angle", INTEGER, minimum=0, maximum=self.range,
                                       description="degrees, 0 to %d" % self.range)])
        self.tool(server, "set_angle", "Turn the %s to an angle in degrees (0 to %d)."
                  % (self.label, self.range), self.set_angle, angle, idempotent=True,
                  destructive=False)

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
