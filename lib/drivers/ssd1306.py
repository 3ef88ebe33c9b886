"""SSD1306 OLED controller on I2C (128x64 and 128x32 modules), for lines of text: no frame
buffer of the panel in memory. The controller's RAM is 8-row pages, one byte per page and
column; a line of framebuf's 8x8 text is exactly one page, so each line is drawn into one
page-sized framebuf.FrameBuffer (MONO_VLSB: the RAM's layout, `width` bytes) and sent as it
is (writevto: never copied), top to bottom in one window. Everything is allocated once.

Not micropython-lib's ssd1306.SSD1306_I2C (that one keeps a whole frame, 1 KB, and is not in
the stock ESP32 firmware): this one sends the set-up and the window as one I2C write each,
and names its registers as const(). `command(*codes)` sends any other command (contrast
0x81 and its level, display off 0xAE / on 0xAF...).
"""

import framebuf

from umcp.compat import const

ADDRESS = const(0x3C)  # 0x3D with the module's address jumper moved

_COMMANDS = const(0x00)  # control byte: a run of command bytes follows
_DATA = const(0x40)  # control byte: display RAM data follows
_CONTRAST = const(0x81)
_FOLLOW_RAM = const(0xA4)
_NORMAL = const(0xA6)  # 0xA7: inverted
_DISPLAY_OFF = const(0xAE)  # 0xAF: on
_MEMORY_MODE = const(0x20)  # then 0: horizontal addressing
_COLUMN_WINDOW = const(0x21)  # then first, last column
_PAGE_WINDOW = const(0x22)  # then first, last page
_START_LINE = const(0x40)
_SEGMENT_REMAP = const(0xA0)  # | 1: column 127 is SEG0
_MULTIPLEX = const(0xA8)
_SCAN_DOWN = const(0xC0)  # | 8: COM scan from the last row
_OFFSET = const(0xD3)
_COM_PINS = const(0xDA)
_CLOCK = const(0xD5)
_PRECHARGE = const(0xD9)
_VCOM_LEVEL = const(0xDB)
_CHARGE_PUMP = const(0x8D)


class SSD1306:
    def __init__(self, i2c, width=128, height=64, addr=ADDRESS, external_vcc=False):
        """Set the controller up and blank it: OSError when it does not answer."""
        self.i2c = i2c
        self.addr = addr
        self.width = width
        self.pages = height // 8
        page = bytearray(width)
        self._page = framebuf.FrameBuffer(page, width, 8, framebuf.MONO_VLSB)
        self._data = [bytes((_DATA,)), page]  # one list for every page sent
        first = (128 - width) // 2  # a narrower panel sits in the middle columns
        # Horizontal addressing in this window: the pages follow one another.
        self._window = bytes((_COMMANDS, _COLUMN_WINDOW, first, first + width - 1,
                              _PAGE_WINDOW, 0, self.pages - 1))
        self.command(
            _DISPLAY_OFF, _MEMORY_MODE, 0, _START_LINE, _SEGMENT_REMAP | 1,
            _MULTIPLEX, height - 1, _SCAN_DOWN | 8, _OFFSET, 0,
            _COM_PINS, 0x02 if width > 2 * height else 0x12,
            _CLOCK, 0x80, _PRECHARGE, 0x22 if external_vcc else 0xF1, _VCOM_LEVEL, 0x30,
            _CONTRAST, 0xFF, _FOLLOW_RAM, _NORMAL,
            _CHARGE_PUMP, 0x10 if external_vcc else 0x14, _DISPLAY_OFF | 1)
        self.text(())

    def text(self, lines):
        """The whole panel: line i on page i (8 rows, from the left; characters beyond the
        width cut), the pages below the last line blank."""
        i2c, addr, page, data = self.i2c, self.addr, self._page, self._data
        i2c.writeto(addr, self._window)
        for row in range(self.pages):
            page.fill(0)
            if row < len(lines):
                page.text(lines[row], 0, 0, 1)
            i2c.writevto(addr, data)

    def invert(self, inverted):
        """Light pixels dark and dark ones light (the whole panel, RAM untouched)."""
        self.command(_NORMAL | (1 if inverted else 0))

    def command(self, *codes):
        """Command bytes (and their arguments) in one write."""
        self.i2c.writeto(self.addr, bytes((_COMMANDS,) + codes))
