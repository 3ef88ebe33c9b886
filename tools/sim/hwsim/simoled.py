"""A simulated SSD1306 OLED controller on I2C: attach one with
machine.sim_attach_i2c(bus, 0x3C, simoled.SSD1306(128, 64)).

It keeps what the chip keeps: its display RAM (GDDRAM, 8 pages of 128 columns, one byte
per page and column with the top row in bit 0), the addressing set by commands (horizontal,
vertical and page modes; column and page windows), display on/off, contrast, inversion.
The I2C control byte says what follows: 0x00 a run of commands, 0x40 display data, 0x80 one
command (then another control byte). `commands` keeps the last COMMANDS_KEPT command bytes
(a simhistory.History, `.count` of all) and `data_bytes` counts the data written.
`pixel(x, y)` reads the RAM as the frame buffer a driver drew it in; `rows()` gives it as
strings of "#" and ".".
"""

from simhistory import History

COMMANDS_KEPT = 64
_PAGES = 8
_COLUMNS = 128
# Commands followed by argument bytes, and how many.
_ARGUMENTS = {0x81: 1, 0x20: 1, 0x21: 2, 0x22: 2, 0xA8: 1, 0xD3: 1, 0xDA: 1, 0xD5: 1,
              0xD9: 1, 0xDB: 1, 0x8D: 1, 0xAD: 1, 0x26: 6, 0x27: 6, 0x29: 5, 0x2A: 5, 0xA3: 2}


class SSD1306:
    def __init__(self, width=128, height=64):
        self.width = width
        self.height = height
        self.ram = bytearray(_PAGES * _COLUMNS)
        self.commands = History(COMMANDS_KEPT)
        self.data_bytes = 0
        self.on = False
        self.contrast = 0x7F
        self.inverted = False
        self.mode = 2  # page addressing after reset
        self.columns = (0, _COLUMNS - 1)
        self.pages = (0, _PAGES - 1)
        self.column = 0
        self.page = 0
        self._pending = None  # [command, arguments so far] while its arguments come
        self.regs = {}  # machine.I2CDevice's interface, unused
        self.writes = self.commands

    # machine.I2C hands each write over as (first byte, the rest)
    def write(self, control, data):
        if control & 0x40:
            self._data(data)
        elif control & 0x80:  # Co=1: one command byte, then control/command pairs
            self._command(data[0] if data else None)
            for i in range(1, len(data) - 1, 2):
                self.write(data[i], data[i + 1:i + 2])
        else:
            for byte in data:
                self._command(byte)

    def read(self, reg, n):
        return bytes(n)  # the status read of the SSD1306 is not simulated

    def _command(self, byte):
        if byte is None:
            return
        self.commands.append(byte)
        if self._pending is not None:
            self._pending[1].append(byte)
            if len(self._pending[1]) == _ARGUMENTS[self._pending[0]]:
                command, arguments = self._pending
                self._pending = None
                self._apply(command, arguments)
            return
        if byte in _ARGUMENTS:
            self._pending = [byte, []]
            return
        if byte in (0xAE, 0xAF):
            self.on = byte == 0xAF
        elif byte in (0xA6, 0xA7):
            self.inverted = byte == 0xA7
        elif 0xB0 <= byte <= 0xB7:
            self.page = byte & 7
        elif byte < 0x10:
            self.column = self.column & 0xF0 | byte
        elif byte < 0x20:
            self.column = self.column & 0x0F | (byte & 0x0F) << 4

    def _apply(self, command, arguments):
        if command == 0x81:
            self.contrast = arguments[0]
        elif command == 0x20:
            self.mode = arguments[0] & 3
        elif command == 0x21:
            self.columns = (arguments[0] & 0x7F, arguments[1] & 0x7F)
            self.column = self.columns[0]
        elif command == 0x22:
            self.pages = (arguments[0] & 7, arguments[1] & 7)
            self.page = self.pages[0]

    def _data(self, data):
        for byte in data:
            self.ram[self.page * _COLUMNS + self.column] = byte
            self.data_bytes += 1
            self._advance()

    def _advance(self):
        c0, c1 = self.columns
        p0, p1 = self.pages
        if self.mode == 0:  # horizontal: along the page, then the next page
            if self.column >= c1:
                self.column = c0
                self.page = p0 if self.page >= p1 else self.page + 1
            else:
                self.column += 1
        elif self.mode == 1:  # vertical: down the pages, then the next column
            if self.page >= p1:
                self.page = p0
                self.column = c0 if self.column >= c1 else self.column + 1
            else:
                self.page += 1
        else:  # page mode: along the page only
            self.column = (self.column + 1) % _COLUMNS

    def pixel(self, x, y):
        return self.ram[(y >> 3) * _COLUMNS + x] >> (y & 7) & 1

    def rows(self):
        return ["".join("#" if self.pixel(x, y) else "." for x in range(self.width))
                for y in range(self.height)]
