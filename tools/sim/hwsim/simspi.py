"""The simulated machine.SPI (machine loads this module at the first use of machine.SPI:
a board without an SPI part never does) and the devices on its lines.

A device attached with attach(device) names its pins (`sck`, `mosi`), says with
`selected()` whether its chip select is low, and gets with `receive(buf)` what an SPI on
those two pins writes meanwhile, as a panel wired there would (simlcd.Panel). `spi(id)` is
the last SPI made for a bus; fail(id) makes every write on that bus raise OSError (EIO), as
a bus that broke would; machine.sim_reset() calls reset().
"""


class SPI:
    """A controller SPI bus: write() hands the bytes to every attached device on the same
    SCK and MOSI pins whose chip select is low (or that has none). Reads return zeros. A
    pin not given is the bus's default one, as on the ESP32 port (SPI(1): SCK 14, MOSI 13,
    MISO 12; SPI(2): 18, 23, 19); None: no pin (`miso=None` for a panel never read)."""

    MSB = 0
    LSB = 1
    _DEFAULT_PINS = {1: (14, 13, 12), 2: (18, 23, 19)}

    def __init__(self, id, baudrate=500000, *, polarity=0, phase=0, bits=8, firstbit=0, sck=-1,
                 mosi=-1, miso=-1):
        if id not in self._DEFAULT_PINS:
            raise ValueError("SPI(%s) doesn't exist" % (id,))
        self.id = id
        self.baudrate = baudrate
        self.polarity, self.phase = polarity, phase
        self.sck, self.mosi, self.miso = [
            default if given == -1 else getattr(given, "id", given)  # a machine.Pin, or its number
            for given, default in zip((sck, mosi, miso), self._DEFAULT_PINS[id])]
        self.bytes_written = 0
        _buses[id] = self

    def write(self, buf):
        if self.id in _failing:
            raise OSError(5)  # EIO
        self.bytes_written += len(buf)
        for device in _devices:
            if device.sck == self.sck and device.mosi == self.mosi and device.selected():
                device.receive(buf)

    def read(self, nbytes, write=0):
        return bytes(nbytes)

    def readinto(self, buf, write=0):
        for i in range(len(buf)):
            buf[i] = 0

    def deinit(self):
        pass


def attach(device):
    """Wire `device` to the SPI pins it names; returns it."""
    _devices.append(device)
    return device


def devices():
    """The devices attached, in order."""
    return _devices


def spi(bus_id):
    """The last SPI made for `bus_id` (its sck, mosi, miso, baudrate), or None."""
    return _buses.get(bus_id)


def fail(bus_id, failing=True):
    """Writes on bus `bus_id` raise OSError from now on (or no longer)."""
    if failing:
        _failing.add(bus_id)
    else:
        _failing.discard(bus_id)


def reset():
    global _devices, _buses, _failing
    _devices = []
    _buses = {}
    _failing = set()


reset()
