# The SPI colour LCD (drivers.st7789, parts.lcd) on the simulated panel (hwsim's simlcd:
# the controller's commands and pixel windows over the simulated SPI): text read back off
# the panel against this runtime's own framebuf rendering of it, at every rotation and
# offset; the part's tools, themes and bad entries; the status view on it. Runs under
# pytest and inside MicroPython (unix port, WebAssembly).

import framebuf
import hwsim
import machine
import simspi
from drivers.st7789 import ST7789, STRIP_ROWS
from parts import PartError
from parts.check import entries
from portable_support import ToolClient, generic_board

WHITE = 0xFFFF
BLACK = 0x0000
RED = 0xF800
TFT = {"type": "lcd", "name": "tft", "sck": 18, "mosi": 23, "dc": 16, "cs": 5, "rst": 17, "bl": 4,
       "width": 320, "height": 240}


def _to_glass(rotation, width, height):
    """Where a logical pixel lands on the glass (the panel in its own orientation), for a
    picture turned `rotation` degrees clockwise."""
    if rotation == 90:
        return lambda x, y: (width - 1 - y, x)
    if rotation == 180:
        return lambda x, y: (width - 1 - x, height - 1 - y)
    if rotation == 270:
        return lambda x, y: (y, height - 1 - x)
    return lambda x, y: (x, y)


def _rendered(text):
    """`text` as this runtime's framebuf draws it: a 1-bit cell row."""
    width = 8 * max(len(text), 1)
    cells = framebuf.FrameBuffer(bytearray(width), width, 8, framebuf.MONO_HLSB)
    cells.text(text, 0, 0, 1)
    return cells, width


def _reads(panel, text, row, color, background, rotation=0, columns=None):
    """Whether the panel shows `text` on text row `row` (and nothing else on that row), in
    `color` on `background`; `columns`: the line's width in characters."""
    cells, width = _rendered(text)
    glass = _to_glass(rotation, panel.width, panel.height)
    line = (columns or len(text)) * 8
    for y in range(8):
        for x in range(line):
            on = x < width and cells.pixel(x, y)
            if panel.pixel(*glass(x, row * 8 + y)) != (color if on else background):
                return False
    return True


def _panel():
    return simspi.devices()[-1]


def _problem(parts, chip="esp32"):
    try:
        entries(parts, chip)
    except PartError as e:
        return str(e)
    return None


def test_text_reads_upright_at_every_rotation_and_offset():
    # A 135x240 ST7789 sits at 52,40 in the controller's 240x320 memory; the ILI9342C is 320x240.
    for width, height, x_offset, y_offset in ((135, 240, 52, 40), (320, 240, 0, 0), (240, 240, 0, 80)):
        for rotation in (0, 90, 180, 270):
            hwsim.reset()
            hwsim.solder([{"type": "lcd", "sck": 18, "mosi": 23, "dc": 16, "width": width, "height": height,
                           "x_offset": x_offset, "y_offset": y_offset}])
            spi = machine.SPI(1, sck=machine.Pin(18), mosi=machine.Pin(23))
            lcd = ST7789(spi, machine.Pin(16, machine.Pin.OUT), None, None, width, height, x_offset,
                         y_offset, rotation)
            panel = _panel()
            assert panel.on and panel.awake and panel.colmod == 0x55, (width, rotation)
            assert (lcd.width, lcd.height) == ((height, width) if rotation in (90, 270) else (width, height))
            lcd.fill(BLACK)
            lcd.text_line("Hi 42", 8, WHITE, BLACK)
            lcd.fill_rect(lcd.width - 3, lcd.height - 2, 3, 2, RED)  # the far corner, clipped fill
            where = (width, height, rotation)
            assert _reads(panel, "Hi 42", 1, WHITE, BLACK, rotation), where
            glass = _to_glass(rotation, width, height)
            assert panel.pixel(*glass(lcd.width - 1, lcd.height - 1)) == RED, where
            assert panel.pixel(*glass(lcd.width - 4, lcd.height - 1)) == BLACK, where
            assert panel.pixel(*glass(0, 0)) == BLACK, where
            assert panel.outside == 0, where  # every pixel sent landed on the glass


def test_the_line_is_sent_through_a_small_strip_not_a_frame():
    hwsim.reset()
    hwsim.solder([TFT])
    spi = machine.SPI(1, sck=machine.Pin(18), mosi=machine.Pin(23))
    lcd = ST7789(spi, machine.Pin(16, machine.Pin.OUT), machine.Pin(5, machine.Pin.OUT), None, 320, 240)
    assert len(lcd._strip_buf) == 320 * STRIP_ROWS * 2 <= 4096
    before = spi.bytes_written
    lcd.text_line("strip", 0, WHITE, BLACK)
    # one window: CASET, RASET (4 bytes each), RAMWR, then 320x8 pixels of 2 bytes
    assert spi.bytes_written - before == 3 + 8 + 320 * 8 * 2
    assert _reads(_panel(), "strip", 0, WHITE, BLACK, columns=40)


def test_with_chip_select_high_the_panel_hears_nothing():
    hwsim.reset()
    hwsim.solder([TFT])
    spi = machine.SPI(1, sck=machine.Pin(18), mosi=machine.Pin(23))
    lcd = ST7789(spi, machine.Pin(16, machine.Pin.OUT), machine.Pin(5, machine.Pin.OUT), None, 320, 240)
    lcd.fill(BLACK)
    panel = _panel()
    count = panel.commands.count
    machine.Pin(5).value(1)
    spi.write(b"\x28")  # DISPOFF, on a bus the panel is not selected on
    assert panel.commands.count == count and panel.on


async def test_the_lcd_part_shows_text_and_clears():
    board = generic_board([TFT])
    panel = _panel()
    part = board.part("tft")
    assert (part.columns, part.rows) == (40, 30)
    assert panel.on and panel.awake and panel.inverted  # INVON: an IPS panel's true colours
    assert machine.sim_pin(4).value() == 1  # the backlight
    spi = simspi.spi(1)
    assert (spi.sck, spi.mosi, spi.miso, spi.baudrate) == (18, 23, None, 40000000)  # no MISO pin taken
    client = ToolClient(board, "lcd")
    shown = await client.call("self.tft.show_text", {"text": "Temperature 21.5 C\nsecond line"})
    assert shown == {"lines": ["Temperature 21.5 C", "second line"]}
    assert _reads(panel, "Temperature 21.5 C", 0, WHITE, BLACK, columns=40)
    assert _reads(panel, "second line", 1, WHITE, BLACK, columns=40)
    assert board.status()["parts"]["tft"] == {"lines": ["Temperature 21.5 C", "second line"]}
    assert await client.call("self.tft.clear") is True
    assert _reads(panel, "", 0, WHITE, BLACK, columns=40) and _reads(panel, "", 1, WHITE, BLACK, columns=40)
    board.show_activation_code("731406", "enter it at xiaozhi.me")
    assert _reads(panel, "Activation code", 0, WHITE, BLACK, columns=40)
    assert _reads(panel, "731406", 1, WHITE, BLACK, columns=40)
    assert _reads(panel, "enter it at xiaozhi.me", 2, WHITE, BLACK, columns=40)


def test_a_theme_repaints_the_whole_panel_in_its_colours():
    # A 135x240 panel turned to 240x135: 16 rows of text leave 7 pixel rows below, painted too.
    board = generic_board([{"type": "lcd", "name": "tft", "sck": 18, "mosi": 23, "dc": 16, "width": 135,
                     "height": 240, "x_offset": 52, "y_offset": 40, "rotation": 90}])
    part = board.part("tft")
    assert (part.width, part.height, part.columns, part.rows) == (240, 135, 30, 16)
    panel = _panel()
    part.show(["Online", "Volume 40"])
    part.set_theme("light")
    glass = _to_glass(90, 135, 240)
    assert _reads(panel, "Online", 0, BLACK, WHITE, 90, part.columns)
    assert _reads(panel, "Volume 40", 1, BLACK, WHITE, 90, part.columns)
    assert panel.pixel(*glass(239, 134)) == WHITE and panel.pixel(*glass(0, 134)) == WHITE
    part.set_theme("dark")
    assert _reads(panel, "Online", 0, WHITE, BLACK, 90, part.columns)
    assert panel.pixel(*glass(239, 134)) == BLACK


def test_bad_lcd_entries_are_named_in_one_line():
    base = {"type": "lcd", "name": "tft", "sck": 18, "mosi": 23, "dc": 16, "width": 240, "height": 320}
    cases = [
        ({"width": None}, "config.json parts[0] (lcd 'tft'): 'width' is missing"),
        ({"dc": 34}, "config.json parts[0] (lcd 'tft'): dc: GPIO 34 is input-only on the esp32: an output needs a pin that can drive"),
        ({"cs": 6}, "config.json parts[0] (lcd 'tft'): cs: GPIO 6 is wired to the flash chip on the esp32"),
        ({"rotation": 45}, "config.json parts[0] (lcd 'tft'): rotation must be one of 0, 90, 180, 270, got 45"),
        ({"spi": 3}, "spi must be one of 1, 2, got 3"),
        ({"width": 400}, "width must be 8..320, got 400"),
        ({"y_offset": 40}, "a 240x320 panel at offset 0,40 does not fit the controller's 240x320 pixels"),
        ({"freq": 100}, "freq must be 1000000..80000000, got 100"),
        ({"invert": "yes"}, "invert must be true or false, got 'yes'"),
        ({"miso": 19}, "unknown option 'miso' (lcd takes"),
    ]
    for change, expected in cases:
        entry = dict(base)
        for key, value in change.items():
            if value is None:
                entry.pop(key)
            else:
                entry[key] = value
        problem = _problem([entry])
        assert problem is not None and expected in problem and "\n" not in problem, (change, problem)
    # The optional pins are pins like any other: used twice is named.
    problem = _problem([dict(base, bl=2), {"type": "relay", "name": "lamp", "pin": 2}])
    assert "config.json parts[1] (relay 'lamp'): GPIO 2 is already used by config.json parts[0] (lcd 'tft')" == problem
    assert _problem([base]) is None
    assert _problem([dict(base, width=135, height=240, x_offset=52, y_offset=40)]) is None
