"""Simulated `neopixel` module: a strip of RGB(W) pixels whose writes are recorded.

`sim_strip(pin)` is the strip on a pin number; its `frames` lists what the last FRAMES_KEPT
write()s sent (each a list of pixel tuples; a simhistory.History, `.count` of all).
`sim_reset()` forgets all strips.
"""

from simhistory import History

FRAMES_KEPT = 8


class NeoPixel:
    ORDER = (1, 0, 2, 3)

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin.id if hasattr(pin, "id") else pin
        self.n = n
        self.bpp = bpp
        self.pixels = [(0,) * bpp for _ in range(n)]
        self.frames = History(FRAMES_KEPT)
        _strips[self.pin] = self

    def __len__(self):
        return self.n

    def __setitem__(self, i, value):
        if len(value) != self.bpp:
            raise ValueError("pixel needs %d values" % self.bpp)
        self.pixels[i] = tuple(value)

    def __getitem__(self, i):
        return self.pixels[i]

    def fill(self, value):
        for i in range(self.n):
            self[i] = value

    def write(self):
        self.frames.append(list(self.pixels))


# --- simulation control (not part of MicroPython's neopixel) ---

def sim_reset():
    _strips.clear()


def sim_strip(pin):
    return _strips.get(pin)


def sim_strips():
    """{pin number: its strip}."""
    return _strips


_strips = {}
