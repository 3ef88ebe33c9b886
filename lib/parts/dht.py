"""A DHT11 or DHT22 (AM2302) temperature and humidity sensor, through MicroPython's own
dht module. self.<name>.read, and the resource device://parts/<name>; a sensor that does
not answer makes the tool return an error saying so (and the resource carries it)."""

import dht as driver  # MicroPython's module, not this one: imports are absolute

from machine import Pin

import parts

# The sensors need this long between two measurements.
_REST_MS = {"dht11": 1000, "dht22": 2000}


class Part(parts.Sensor):
    def __init__(self, entry):
        super().__init__(entry)
        self.model = entry["model"]
        make = driver.DHT11 if self.model == "dht11" else driver.DHT22
        self.sensor = make(Pin(entry["pin"]))
        self.rest_ms = _REST_MS[self.model]

    def register(self, server):
        super().register(server)
        self.tool(server, "read", "Read the %s: temperature in degrees Celsius and relative "
                  "humidity in percent." % self.label, self.read_tool, read_only=True)

    def read(self):
        self.sensor.measure()  # a few ms; OSError when the sensor does not answer
        return {"temperature_c": self.sensor.temperature(), "humidity": self.sensor.humidity()}

    def changed(self, old, new):
        return abs(new["temperature_c"] - old["temperature_c"]) >= 0.1 or \
            abs(new["humidity"] - old["humidity"]) >= 1

    async def read_tool(self, args):
        return await self.fresh(self.rest_ms)
