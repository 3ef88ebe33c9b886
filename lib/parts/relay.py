"""An on/off output: a relay, a lamp, a MOSFET switch. Tools as the reference's lamp:
self.<name>.turn_on, turn_off, get_state ({"power": bool}). `invert`: the output is on at
the low level (most relay modules)."""

from machine import Pin

import parts

POWER_SCHEMA = '{"type":"object","properties":{"power":{"type":"boolean"}},"required":["power"]}'


class Part(parts.Part):
    def __init__(self, entry):
        super().__init__(entry)
        self.invert = entry["invert"]
        self.power = False
        self.pin = Pin(entry["pin"], Pin.OUT, value=1 if self.invert else 0)  # off at boot

    def register(self, server):
        label = self.label
        self.tool(server, "get_state", "Get the power state of the %s" % label, self.get_state,
                  read_only=True, output_schema=POWER_SCHEMA)
        self.tool(server, "turn_on", "Turn on the %s" % label, self.turn_on, idempotent=True,
                  destructive=False)
        self.tool(server, "turn_off", "Turn off the %s" % label, self.turn_off, idempotent=True,
                  destructive=False)

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
