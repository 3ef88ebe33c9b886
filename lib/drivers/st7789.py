"""SPI colour LCD controllers of the MIPI DCS family (ST7789): ST7789 (240x240, 240x320,
135x240 panels), ILI9341 and ILI9342C (320x240: the ESP32-S3-BOX-3's, the M5Stack
CoreS3's). They share the commands used here: CASET, RASET, RAMWR, MADCTL, COLMOD,
SLPOUT, DISPON, INVON.

No frame buffer of the panel's size: text is drawn one line of 8x8 characters at a time
into a 1-bit line buffer, turned into colour a few rows at a time in one small RGB565
strip and sent into one RAMWR window per line. Everything is allocated once, in the
constructor; the class says how orientation and colours are handled.
"""

import framebuf

from umcp.compat import const

_SWRESET = const(0x01)
_SLPOUT = const(0x11)
_NORON = const(0x13)
_INVOFF = const(0x20)
_INVON = const(0x21)
_DISPON = const(0x29)
_CASET = const(0x2A)
_RASET = const(0x2B)
_RAMWR = const(0x2C)
_MADCTL = const(0x36)
_COLMOD = const(0x3A)
_COLMOD_16BIT = const(0x55)  # RGB565 on both the RGB and the MCU interface
_MADCTL_MY = const(0x80)  # rows from the bottom
_MADCTL_MX = const(0x40)  # columns from the right
_MADCTL_MV = const(0x20)  # rows and columns exchanged
_MADCTL_BGR = const(0x08)  # the panel's subpixels in BGR order
_CELL = const(8)  # framebuf's text: 8x8 pixels a character
STRIP_ROWS = const(4)  # rows of colour pixels sent per SPI write: width * 8 bytes of heap
# Per rotation: MADCTL, and how the window's offsets come from the glass's place in memory.
_ROTATIONS = {0: 0, 90: _MADCTL_MV | _MADCTL_MX, 180: _MADCTL_MX | _MADCTL_MY,
              270: _MADCTL_MV | _MADCTL_MY}

BLACK = const(0x0000)
WHITE = const(0xFFFF)


def rgb565(red, green, blue):
    """A colour from 0-255 levels."""
    return (red & 0xF8) << 8 | (green & 0xFC) << 3 | blue >> 3


def _swapped(color):
    return (color & 0xFF) << 8 | (color >> 8) & 0xFF


class ST7789:
    """One panel on its SPI bus.

    Text goes into a 1-bit line buffer (width/8 bytes a row), turned into colour
    STRIP_ROWS rows at a time in one RGB565 strip (framebuf's blit with a two-colour
    palette); fill_rect streams the strip filled with one colour. Pixels go out
    big-endian, as the controller reads them (COLMOD 16 bits): framebuf's RGB565 keeps
    them little-endian, so the colours put into it are byte-swapped first.

    The panel's own orientation is `width` x `height` (its glass), at `x_offset` and
    `y_offset` in the controller's memory (240x320, or 320x240 for a panel wider than
    high: the ILI9342C); `rotation` (0, 90, 180, 270 degrees clockwise) turns the
    picture, MADCTL's MV/MX/MY doing the work, so that text reads upright on a panel
    mounted turned.
    """

    def __init__(self, spi, dc, cs=None, rst=None, width=240, height=240, x_offset=0,
                 y_offset=0, rotation=0, invert=True, bgr=False):
        """`spi`: a machine.SPI; `dc`, `cs`, `rst`: machine.Pin outputs (cs and rst may be
        None: tied on the module). `invert`: INVON, which IPS panels (most ST7789s) need
        for true colours. ValueError for a rotation that is not 0, 90, 180 or 270."""
        if rotation not in _ROTATIONS:
            raise ValueError("rotation must be 0, 90, 180 or 270, got %r" % (rotation,))
        self.spi = spi
        self.dc = dc
        self.cs = cs
        self.rst = rst
        memory = (320, 240) if width > height else (240, 320)
        turned = rotation in (90, 270)
        self.width = height if turned else width
        self.height = width if turned else height
        # The column and row addresses of logical (0, 0), as the rotation's MADCTL maps them.
        free_x = memory[0] - width - x_offset
        free_y = memory[1] - height - y_offset
        self._origin = {0: (x_offset, y_offset), 90: (y_offset, free_x),
                        180: (free_x, free_y), 270: (free_y, x_offset)}[rotation]
        self._madctl = _ROTATIONS[rotation] | (_MADCTL_BGR if bgr else 0)
        self._invert = invert
        self._mono = framebuf.FrameBuffer(bytearray((self.width + 7) // 8 * _CELL), self.width, _CELL,
                                          framebuf.MONO_HLSB)
        self._strip_buf = bytearray(self.width * STRIP_ROWS * 2)
        self._strip = framebuf.FrameBuffer(self._strip_buf, self.width, STRIP_ROWS, framebuf.RGB565)
        self._palette = framebuf.FrameBuffer(bytearray(4), 2, 1, framebuf.RGB565)
        self._window = bytearray(4)  # a window's addresses; its first byte: a command
        self._byte = memoryview(self._window)[:1]
        if cs is not None:
            cs.value(1)
        dc.value(1)
        self.init_display()

    def init_display(self):
        """Reset, wake, set 16-bit colour, orientation and inversion, switch on."""
        from time import sleep

        if self.rst is not None:
            self.rst.value(0)
            sleep(0.01)
            self.rst.value(1)
        else:
            self._command(_SWRESET)
        sleep(0.12)  # the controller's reset time
        self._command(_SLPOUT)
        sleep(0.12)  # out of sleep: the supply settles before the next command
        self._command(_COLMOD, _COLMOD_16BIT)
        self._command(_MADCTL, self._madctl)
        self._command(_INVON if self._invert else _INVOFF)
        self._command(_NORON)
        self._command(_DISPON)

    def _command(self, command, argument=None):
        """One command byte, and its one argument byte."""
        buf = self._window
        if self.cs is not None:
            self.cs.value(0)
        self.dc.value(0)
        buf[0] = command
        self.spi.write(self._byte)
        if argument is not None:
            self.dc.value(1)
            buf[0] = argument
            self.spi.write(self._byte)
        if self.cs is not None:
            self.cs.value(1)

    def send(self, command, data):
        """A command and its parameter bytes: a panel's own settings (power, gamma) that a
        board sends after init_display()."""
        if self.cs is not None:
            self.cs.value(0)
        self.dc.value(0)
        self._window[0] = command
        self.spi.write(self._byte)
        self.dc.value(1)
        self.spi.write(data)
        if self.cs is not None:
            self.cs.value(1)

    def _open(self, x, y, w, h):
        """CASET, RASET and RAMWR for the window; the caller sends its pixels, then _close()."""
        cs, dc, spi, window = self.cs, self.dc, self.spi, self._window
        if cs is not None:
            cs.value(0)
        for command, start, size in ((_CASET, x + self._origin[0], w), (_RASET, y + self._origin[1], h)):
            dc.value(0)
            window[0] = command
            spi.write(self._byte)
            end = start + size - 1
            window[0], window[1], window[2], window[3] = start >> 8, start & 0xFF, end >> 8, end & 0xFF
            dc.value(1)
            spi.write(window)
        dc.value(0)
        window[0] = _RAMWR
        spi.write(self._byte)
        dc.value(1)

    def _close(self):
        if self.cs is not None:
            self.cs.value(1)

    def fill_rect(self, x, y, w, h, color):
        """A rectangle of one colour (RGB565), cut to the panel."""
        x0, y0 = max(x, 0), max(y, 0)
        w, h = min(x + w, self.width) - x0, min(y + h, self.height) - y0
        if w <= 0 or h <= 0:
            return
        self._strip.fill(_swapped(color))
        left = w * h * 2
        step = len(self._strip_buf) // (w * 2) * w * 2  # whole rows of the window
        strip = memoryview(self._strip_buf)
        self._open(x0, y0, w, h)
        while left > 0:
            piece = min(left, step)
            self.spi.write(strip[:piece])
            left -= piece
        self._close()

    def fill(self, color):
        self.fill_rect(0, 0, self.width, self.height, color)

    def text_line(self, text, y, color, background):
        """One line of 8x8 characters across the whole width at row `y`, the rest of the
        line in the background colour; characters beyond the width are cut."""
        mono, strip, palette = self._mono, self._strip, self._palette
        mono.fill(0)
        mono.text(text, 0, 0, 1)
        palette.pixel(0, 0, _swapped(background))
        palette.pixel(1, 0, _swapped(color))
        rows = min(_CELL, self.height - y)
        if rows <= 0:
            return
        self._open(0, y, self.width, rows)
        width2 = self.width * 2
        buf = memoryview(self._strip_buf)
        for top in range(0, rows, STRIP_ROWS):
            strip.blit(mono, 0, -top, -1, palette)
            self.spi.write(buf[:min(STRIP_ROWS, rows - top) * width2])
        self._close()
