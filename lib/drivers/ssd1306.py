"""SSD1306 OLED controller on I2C (128x64 and 128x32 modules): a framebuf.FrameBuffer of the
panel's size (MONO_VLSB: one byte per 8-row page and column, as the controller's RAM is laid
out). Draw with the FrameBuffer methods (text, fill, rect, line, blit...), then show()
sends the whole frame: the column and page window in one write, the frame in another
(writevto, so the buffer is sent as it is, never copied).

The API is micropython-lib's ssd1306.SSD1306_I2C's (show, poweron, poweroff, contrast,
invert, rotate), so code written for that driver runs on this one. That driver is not in
the stock ESP32 firmware (it would need a `mip install`, and make deploy installs nothing
behind the maker's back); this one sends the set-up and the window as one I2C write each
instead of one write per command byte, and names its registers as const().
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


class SSD1306(framebuf.FrameBuffer):
    def __init__(self, i2c, width=128, height=64, addr=ADDRESS, external_vcc=False):
        self.i2c = i2c
        self.addr = addr
        self.width = width
        self.height = height
        self.external_vcc = external_vcc
        self.pages = height // 8
        self.buffer = bytearray(self.pages * width)
        super().__init__(self.buffer, width, height, framebuf.MONO_VLSB)
        first = (128 - width) // 2  # a narrower panel sits in the middle columns
        self._window = bytes((_COMMANDS, _COLUMN_WINDOW, first, first + width - 1,
                              _PAGE_WINDOW, 0, self.pages - 1))
        self._frame = [bytes((_DATA,)), self.buffer]  # one list for every show()
        self._command = bytearray(3)
        self.init_display()

    def init_display(self):
        """Set the controller up (OSError when it does not answer), then show a blank frame."""
        self.i2c.writeto(self.addr, bytes((
            _COMMANDS, _DISPLAY_OFF, _MEMORY_MODE, 0, _START_LINE, _SEGMENT_REMAP | 1,
            _MULTIPLEX, self.height - 1, _SCAN_DOWN | 8, _OFFSET, 0,
            _COM_PINS, 0x02 if self.width > 2 * self.height else 0x12,
            _CLOCK, 0x80, _PRECHARGE, 0x22 if self.external_vcc else 0xF1, _VCOM_LEVEL, 0x30,
            _CONTRAST, 0xFF, _FOLLOW_RAM, _NORMAL,
            _CHARGE_PUMP, 0x10 if self.external_vcc else 0x14, _DISPLAY_OFF | 1)))
        self.fill(0)
        self.show()

    def show(self):
        """Send the frame buffer to the panel."""
        self.i2c.writeto(self.addr, self._window)
        self.i2c.writevto(self.addr, self._frame)

    def _send(self, *command):
        buf = self._command
        buf[0] = _COMMANDS
        for i, byte in enumerate(command):
            buf[i + 1] = byte
        self.i2c.writeto(self.addr, memoryview(buf)[:len(command) + 1])

    def poweroff(self):
        self._send(_DISPLAY_OFF)

    def poweron(self):
        self._send(_DISPLAY_OFF | 1)

    def contrast(self, value):
        """0..255."""
        self._send(_CONTRAST, value & 0xFF)

    def invert(self, inverted):
        """Light pixels dark and dark ones light (the whole panel, RAM untouched)."""
        self._send(_NORMAL | (1 if inverted else 0))

    def rotate(self, upright):
        """As micropython-lib's: rotate(False) turns the picture by 180 degrees (a module
        mounted upside down), rotate(True) puts back the set-up's orientation."""
        self._send(_SCAN_DOWN | (8 if upright else 0))
        self._send(_SEGMENT_REMAP | (1 if upright else 0))
