"""An analog input (a potentiometer, a light or soil sensor) read by the ADC over its full
range (0 to about 3.1 V) and scaled to min..max in the maker's unit. self.<name>.read,
and the resource device://parts/<name>; subscribers hear of a change of `step` or more
(default: 1 % of the range)."""

from machine import ADC, Pin

import parts

_FULL = 65535


class Part(parts.Sensor):
    def __init__(self, entry):
        super().__init__(entry)
        self.low = entry["min"]
        self.high = entry["max"]
        self.unit = entry["unit"]
        self.step = entry["step"] if entry["step"] is not None else abs(self.high - self.low) / 100
        self.adc = ADC(Pin(entry["pin"]), atten=ADC.ATTN_11DB)

    def register(self, server):
        super().register(server)
        self.tool(server, "read", "Read the %s now: its value from %s to %s %s."
                  % (self.label, _short(self.low), _short(self.high), self.unit), self.read_tool,
                  read_only=True)

    def read(self):
        raw = self.adc.read_u16()
        value = self.low + (self.high - self.low) * raw / _FULL
        return {"value": round(value, 2), "unit": self.unit, "raw": raw}

    def changed(self, old, new):
        return abs(new["value"] - old["value"]) >= self.step

    async def read_tool(self, args):
        return await self.fresh()


def _short(number):
    return "%d" % number if number == int(number) else "%s" % number
