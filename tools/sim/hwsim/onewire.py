"""Simulated `onewire` module: a 1-Wire bus per pin with simulated devices on it.

`sim_attach(pin, temperature)` puts a DS18B20 on the pin (ROM 28-..., made from the pin
and its place on the bus) and returns it; `.temperature` is what it measures, `.failing`
True makes it stop answering (no presence pulse: reset(True) raises OneWireError, as on a
board whose sensor came loose). ds18x20.py (the simulated driver) reads these devices.
"""

import machine


class OneWireError(Exception):
    pass


class _Device:
    def __init__(self, rom, temperature):
        self.rom = rom
        self.temperature = temperature
        self.failing = False
        self.converted = False  # a DS18B20 reads 85.0 until its first conversion
        self.conversions = 0


class OneWire:
    SEARCH_ROM = 0xF0
    MATCH_ROM = 0x55
    SKIP_ROM = 0xCC

    def __init__(self, pin):
        self.pin = pin
        self._id = pin.id if hasattr(pin, "id") else pin
        if hasattr(pin, "init"):
            pin.init(pin.OPEN_DRAIN, pin.PULL_UP)

    def devices(self):
        """The simulated devices answering on this bus (not MicroPython's API)."""
        machine.sim_before_input()
        return [d for d in _buses.get(self._id, ()) if not d.failing]

    def reset(self, required=False):
        present = bool(self.devices())
        if required and not present:
            raise OneWireError
        return present

    def scan(self):
        return [bytearray(d.rom) for d in self.devices()]


def _crc8(data):
    crc = 0
    for byte in data:
        for _ in range(8):
            mix = (crc ^ byte) & 1
            crc >>= 1
            if mix:
                crc ^= 0x8C
            byte >>= 1
    return crc


# --- simulation control (not part of MicroPython's onewire) ---

def sim_reset():
    _buses.clear()


def sim_attach(pin, temperature=21.5):
    bus = _buses.setdefault(pin, [])
    body = bytes((0x28, pin & 0xFF, len(bus), 0x5A, 0x12, 0x34, 0x56))
    device = _Device(body + bytes((_crc8(body),)), temperature)
    bus.append(device)
    return device


def sim_devices(pin):
    return _buses.get(pin, [])


_buses = {}
