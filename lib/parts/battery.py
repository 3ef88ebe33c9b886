"""A battery's voltage through a resistor divider on an ADC pin, as a level in percent
(linear from empty_v to full_v). self.<name>.get_level, the resource
device://parts/<name>; the board's status shows the level as the CoreS3's does."""

from machine import ADC, Pin

import parts


class Part(parts.Sensor):
    def __init__(self, entry):
        super().__init__(entry)
        self.divider = entry["divider"]
        self.empty = entry["empty_v"]
        self.full = entry["full_v"]
        self.adc = ADC(Pin(entry["pin"]), atten=ADC.ATTN_11DB)

    def register(self, server):
        super().register(server)
        self.tool(server, "get_level", "The charge of the %s in percent, and its voltage."
                  % self.label, self.get_level, read_only=True)

    def read(self):
        volts = self.adc.read_uv() * self.divider / 1000000
        level = (volts - self.empty) * 100 / (self.full - self.empty)
        return {"level": int(max(0, min(100, level)) + 0.5), "voltage": round(volts, 2)}

    def changed(self, old, new):
        return old["level"] != new["level"]

    async def get_level(self, args):
        return await self.fresh()
