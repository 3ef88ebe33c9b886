"""SSD1306 OLED controller on I2C (128x64 and 128x32 modules), for lines of text: no frame
buffer of the panel in memory. The controller's RAM is 8-row pages, one byte per page and
column; a line of framebuf's 8x8 text is exactly one page, so each line is drawn into one
page-sized framebuf.FrameBuffer (MONO_VLSB: the RAM's layout) and sent as it is (writevto:
never copied), top to bottom in one window.

Functions for what is rare: setup() sends the set-up and returns the data lines are drawn
with (the window's command, the page, the write that sends it); theme() and command(i2c,
addr, *codes) send commands (contrast 0x81 and its level, display off 0xAE...). The OLED
part (parts.oled) keeps that data and draws with its text(), loading this module only for a
set-up (the boot, a panel back after a loose wire) or a theme, and dropping it again.
Not micropython-lib's ssd1306.SSD1306_I2C (it keeps a whole frame, 1 KB, and is not in the
stock ESP32 firmware): the set-up and the window go as one I2C write each.
"""

import framebuf

from drivers import check_theme
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


def setup(i2c, width=128, height=64, addr=ADDRESS, inverted=False, external_vcc=False):
    """Set the controller at `addr` up, blank, the whole panel inverted (light: dark text on
    a lit panel) or not. Returns what text() draws with: (the command opening the panel as
    one window, the page-sized FrameBuffer a line is drawn in, the writevto list sending that
    page: parts.oled's text() takes it). OSError when it does not answer."""
    pages = height // 8
    page = bytearray(width)
    first = (128 - width) // 2  # a narrower panel sits in the middle columns
    # Horizontal addressing in this window: the pages follow one another.
    drawing = (bytes((_COMMANDS, _COLUMN_WINDOW, first, first + width - 1, _PAGE_WINDOW, 0, pages - 1)),
               framebuf.FrameBuffer(page, width, 8, framebuf.MONO_VLSB), [bytes((_DATA,)), page])
    command(
        i2c, addr, _DISPLAY_OFF, _MEMORY_MODE, 0, _START_LINE, _SEGMENT_REMAP | 1,
        _MULTIPLEX, height - 1, _SCAN_DOWN | 8, _OFFSET, 0,
        _COM_PINS, 0x02 if width > 2 * height else 0x12,
        _CLOCK, 0x80, _PRECHARGE, 0x22 if external_vcc else 0xF1, _VCOM_LEVEL, 0x30,
        _CONTRAST, 0xFF, _FOLLOW_RAM, _NORMAL | (1 if inverted else 0),
        _CHARGE_PUMP, 0x10 if external_vcc else 0x14, _DISPLAY_OFF | 1)
    i2c.writeto(addr, drawing[0])  # blank: the page is
    for _ in range(pages):
        i2c.writevto(addr, drawing[2])
    return drawing


def theme(i2c, addr, theme):
    """The UI theme `theme` (drivers.THEMES; ValueError for another) on the whole panel:
    light inverts it (dark text on a lit panel), its RAM unchanged."""
    command(i2c, addr, _NORMAL | (1 if check_theme(theme) == "light" else 0))


def command(i2c, addr, *codes):
    """Command bytes (and their arguments) in one write."""
    i2c.writeto(addr, bytes((_COMMANDS,) + codes))
