"""A DS18B20 1-Wire thermometer, through MicroPython's onewire and ds18x20 modules (the
first sensor found on the pin). A reading takes 750 ms of conversion, awaited, so the main
loop runs on meanwhile. self.<name>.read, and the resource device://parts/<name>."""

import asyncio

import ds18x20
import onewire
from machine import Pin

import parts

_CONVERSION_S = 0.75  # at 12 bits


class Part(parts.Sensor):
    def __init__(self, entry):
        super().__init__(entry)
        self.sensors = ds18x20.DS18X20(onewire.OneWire(Pin(entry["pin"])))
        self.rom = None  # found at the first reading, again after the sensor went away
        self._lock = asyncio.Lock()  # one conversion at a time on the bus

    def register(self, server):
        super().register(server)
        self.tool(server, "read", "Read the %s: temperature in degrees Celsius." % self.label,
                  self.read_tool, read_only=True)

    async def read(self):
        async with self._lock:
            if self.rom is None:
                found = self.sensors.scan()
                if not found:
                    raise OSError("no DS18B20 found")
                self.rom = found[0]
            try:
                self.sensors.convert_temp()
                await asyncio.sleep(_CONVERSION_S)
                celsius = self.sensors.read_temp(self.rom)
            except Exception:
                self.rom = None  # look for it again next time
                raise
        return {"temperature_c": round(celsius, 2)}

    def changed(self, old, new):
        return abs(new["temperature_c"] - old["temperature_c"]) >= 0.1

    async def read_tool(self, args):
        return await self.fresh(1000)
