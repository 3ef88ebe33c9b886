"""A piezo buzzer on a PWM pin. self.<name>.beep {frequency, duration_ms}: the tone starts
at once and the call answers; a task of its own ends it (a long beep does not hold the
other calls)."""

import asyncio

from machine import PWM, Pin

import parts
from umcp import INTEGER, Property, PropertyList

_HALF = 32768  # a square wave: the loudest a piezo gets


class Part(parts.Part):
    def __init__(self, entry):
        super().__init__(entry)
        self.pwm = PWM(Pin(entry["pin"], Pin.OUT), freq=2000, duty_u16=0)
        self.sounding = False
        self._end = None  # the task that ends the tone

    def register(self, server):
        beep = PropertyList([
            Property("frequency", INTEGER, default=2000, minimum=20, maximum=20000,
                     description="pitch in Hz (440 is the A above middle C)"),
            Property("duration_ms", INTEGER, default=200, minimum=10, maximum=5000,
                     description="how long, in milliseconds")])
        self.tool(server, "beep", "Sound the %s: a tone of a frequency (Hz) for a time (ms)."
                  % self.label, self.beep, beep, destructive=False)

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
