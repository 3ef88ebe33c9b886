"""A board's own SPI LCD (the ESP32-S3-BOX-3's, the M5Stack CoreS3's, the camera board's)
as its status screen (umcpfw.statusview): parts.lcd's text screen on drivers.st7789, set
up from the board module's PANEL settings and PINS rather than from config.json, with no
tools of its own (self.screen.* stays the board's). Loaded only by those boards; the
firmware's boot finds it among the board's parts, as it finds a screen part with "status".

PANEL: width, height (the glass in its own orientation), rotation, x_offset, y_offset,
invert, bgr (as drivers.st7789 takes them), spi (the MicroPython bus id: 2 is the ESP32-S3's
SPI3_HOST), freq, polarity and phase (the SPI mode). PINS: lcd_sclk, lcd_mosi, lcd_dc and,
where wired to the chip, lcd_cs and lcd_rst (active low). `reset`: a callable that resets the
panel instead (an active-high line, an I/O expander's); `settings`: (command, bytes) pairs
sent after the driver's own start-up (a controller's power and gamma registers).

A panel that does not come up (an OSError from the SPI bus or the reset at start) is left
out by the board module (boards.optional logs it): the board runs without a screen, its
tools keep answering."""

from machine import SPI, Pin

from drivers.st7789 import ST7789
from parts.lcd import _COLORS, Lcd
from parts.screen import CELL, Screen

DEFAULT_BRIGHTNESS = 75  # percent, where none was saved


class BoardLcd(Lcd):
    """The board's screen: a part named "screen" (board.part("screen")) of a kind no tools
    are made for, whose state() (the lines shown) is in self.get_device_status."""

    status = True  # the board's status screen, always

    def __init__(self, panel, pins, reset=None, settings=()):
        Screen.__init__(self, {"name": "screen", "type": "display", "index": -1, "status": True,
                               "width": panel["width"], "height": panel["height"]})
        self.pins = (pins["lcd_sclk"], pins["lcd_mosi"], pins["lcd_dc"])
        # miso=None: the panel is never read, and the port would take the bus's default MISO pin.
        spi = SPI(panel["spi"], baudrate=panel["freq"], polarity=panel["polarity"],
                  phase=panel["phase"], sck=Pin(pins["lcd_sclk"]), mosi=Pin(pins["lcd_mosi"]),
                  miso=None)
        cs, rst = pins.get("lcd_cs"), pins.get("lcd_rst")
        if reset is not None:
            reset()
            rst = None
        self.display = ST7789(
            spi, Pin(pins["lcd_dc"], Pin.OUT, value=1),
            None if cs is None else Pin(cs, Pin.OUT, value=1),
            None if rst is None else Pin(rst, Pin.OUT, value=1), panel["width"], panel["height"],
            panel["x_offset"], panel["y_offset"], panel["rotation"], panel["invert"], panel["bgr"])
        for command, data in settings:
            self.display.send(command, data)
        self.width, self.height = self.display.width, self.display.height
        self.columns, self.rows = self.width // CELL, self.height // CELL
        self.backlight = None  # the board's own (drivers.backlight)
        self.colors = _COLORS["dark"]
        self.painted = []
        self.repaint()

    @property
    def where(self):
        return "the board's LCD (SPI SCK GPIO %d, MOSI GPIO %d, DC GPIO %d)" % self.pins




def attach(board, screen, settings):
    """The board's own panel (a BoardLcd, or None where it did not come up) among the board's
    parts, after add_parts: the status view takes the first screen part with "status", so a
    config.json screen marked so comes first. Where no brightness was saved, the backlight
    goes to the reference firmware's 75 %: it starts dark, and the screen is there to be
    seen. After boards.restore()."""
    if screen is None:
        return
    board.parts.append(screen)
    saved = settings.get("brightness") if settings is not None else None
    if board.backlight is not None and saved is None:
        board.backlight.set_brightness(DEFAULT_BRIGHTNESS)
