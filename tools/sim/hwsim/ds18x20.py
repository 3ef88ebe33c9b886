"""Simulated `ds18x20` module: MicroPython's DS18X20 driver over onewire.py's simulated bus.

convert_temp() starts a conversion on every sensor of the bus (the real one takes up to
750 ms: callers wait before read_temp()); read_temp(rom) gives that sensor's temperature
in 1/16 degree steps, 85.0 before its first conversion (the DS18B20's power-on value), and
raises onewire.OneWireError when the sensor does not answer.
"""

from onewire import OneWireError

_FAMILIES = (0x10, 0x22, 0x28)


class DS18X20:
    def __init__(self, onewire):
        self.ow = onewire

    def scan(self):
        return [rom for rom in self.ow.scan() if rom[0] in _FAMILIES]

    def convert_temp(self):
        self.ow.reset(True)
        for device in self.ow.devices():
            device.converted = True
            device.conversions += 1

    def read_temp(self, rom):
        self.ow.reset(True)
        for device in self.ow.devices():
            if device.rom == bytes(rom):
                if not device.converted:
                    return 85.0
                return round(device.temperature * 16) / 16
        raise OneWireError
