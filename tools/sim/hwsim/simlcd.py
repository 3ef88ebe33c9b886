"""A simulated SPI colour LCD controller of the MIPI DCS family (ST7789, ILI9341,
ILI9342C) and its panel: attach one with
simspi.attach(simlcd.Panel(240, 320, sck=18, mosi=23, dc=16, cs=5)).

It reads the bus as the chip does: a byte written while the DC pin is low is a command,
while it is high the command's parameters or, after RAMWR (0x2C), pixels (RGB565,
big-endian, with COLMOD 0x55), written at the address counter inside the window CASET and
RASET set (columns first, then rows, wrapping), mapped onto the controller's memory as
MADCTL says (MV exchanges rows and columns, MX and MY mirror them). Its memory is 240x320
(320x240 for a panel wider than high, as the ILI9342C's); only the glass, `width` x
`height` at `x_offset`/`y_offset` in it, is kept: `ram`, width*height*2 bytes, row by row,
each pixel as sent (big-endian). Pixels written outside it are counted (`outside`).
`commands` keeps the last COMMANDS_KEPT command bytes (a simhistory.History, `.count` of
all); `on`, `awake`, `inverted`, `madctl`, `colmod` are the state those commands set.
`pixel(x, y)` reads the glass in its own orientation.
"""

import machine
from simhistory import History

COMMANDS_KEPT = 64
_PARAMETERS_KEPT = 16  # a command's parameters kept; more are ignored
_SWRESET = 0x01
_RAMWR = 0x2C


class Panel:
    def __init__(self, width, height, x_offset=0, y_offset=0, sck=None, mosi=None, dc=None,
                 cs=None, memory=None):
        self.width = width
        self.height = height
        self.x_offset = x_offset
        self.y_offset = y_offset
        self.sck, self.mosi, self.dc, self.cs = sck, mosi, dc, cs
        self.memory = memory or ((320, 240) if width > height else (240, 320))
        self.ram = bytearray(width * height * 2)
        self.commands = History(COMMANDS_KEPT)
        self.pixels = 0  # pixels written, in the glass or not
        self.outside = 0  # of those, the ones outside the glass
        self._reset()

    def _reset(self):
        self.on = False
        self.awake = False
        self.inverted = False
        self.madctl = 0
        self.colmod = 0x66  # 18 bits a pixel after reset
        self.columns = (0, self.memory[0] - 1)
        self.rows = (0, self.memory[1] - 1)
        self._command = None
        self._parameters = []
        self._at = None  # (column, row) of the address counter while RAMWR runs
        self._high = None  # the first byte of a pixel whose second has not come yet

    def _pin(self, pin):
        found = machine.sim_pin(pin)
        return found.value() if found is not None else 0

    def selected(self):
        return self.cs is None or self._pin(self.cs) == 0

    def receive(self, data):
        if self._pin(self.dc) == 0:
            for byte in data:
                self._begin(byte)
        elif self._command == _RAMWR:
            self._pixels(data)
        elif self._command is not None:
            for byte in data:
                if len(self._parameters) < _PARAMETERS_KEPT:
                    self._parameters.append(byte)
            self._apply()

    def _begin(self, command):
        self.commands.append(command)
        self._command = command
        self._parameters = []
        self._high = None
        if command == _SWRESET:
            self._reset()
        elif command == 0x11:
            self.awake = True
        elif command == 0x10:
            self.awake = False
        elif command in (0x20, 0x21):
            self.inverted = command == 0x21
        elif command in (0x28, 0x29):
            self.on = command == 0x29
        elif command == _RAMWR:
            self._at = [self.columns[0], self.rows[0]]

    def _apply(self):
        command, got = self._command, self._parameters
        if command in (0x2A, 0x2B) and len(got) >= 4:
            window = (got[0] << 8 | got[1], got[2] << 8 | got[3])
            if command == 0x2A:
                self.columns = window
            else:
                self.rows = window
        elif command == 0x36 and got:
            self.madctl = got[0]
        elif command == 0x3A and got:
            self.colmod = got[0]

    def _pixels(self, data):
        at = self._at
        c0, c1 = self.columns
        r0, r1 = self.rows
        madctl = self.madctl
        mw, mh = self.memory
        width, height, ram = self.width, self.height, self.ram
        high = self._high
        for byte in data:
            if high is None:
                high = byte
                continue
            column, row = at
            if madctl & 0x20:
                column, row = row, column
            if madctl & 0x40:
                column = mw - 1 - column
            if madctl & 0x80:
                row = mh - 1 - row
            x, y = column - self.x_offset, row - self.y_offset
            self.pixels += 1
            if 0 <= x < width and 0 <= y < height:
                i = (y * width + x) * 2
                ram[i] = high
                ram[i + 1] = byte
            else:
                self.outside += 1
            high = None
            if at[0] >= c1:
                at[0] = c0
                at[1] = r0 if at[1] >= r1 else at[1] + 1
            else:
                at[0] += 1
        self._high = high

    def pixel(self, x, y):
        """The RGB565 colour at (x, y) of the glass, in its own orientation."""
        i = (y * self.width + x) * 2
        return self.ram[i] << 8 | self.ram[i + 1]
