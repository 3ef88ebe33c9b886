"""An SPI colour LCD (ST7789, ILI9341, ILI9342C: drivers.st7789) for text, as the OLED is:
self.<name>.show_text {text} (wrapped into the panel's lines of 8x8 characters: 30 columns
on a 240-pixel width, 40 on 320), self.<name>.clear (parts.toolset registers them;
parts.screen has what every text screen shares). `show(lines)` is how the board shows
other text (the activation code); `display` is the driver, for whatever else draws on it.

The panel is never drawn whole from a frame in memory (it has none: 150 KB at 320x240):
show() sends only the text rows that changed, each as one window. With "status": true it
is the board's status screen (umcpfw.statusview); the theme (set_theme) is its colours:
light is black text on white, dark white on black, the whole panel redrawn in them. The
backlight pin, if wired, is switched on at start."""

from machine import SPI, Pin

from drivers.st7789 import BLACK, ST7789, WHITE
from parts import log
from parts.screen import CELL, Screen

# theme: (text, background)
_COLORS = {"light": (BLACK, WHITE), "dark": (WHITE, BLACK)}


class Lcd(Screen):
    panel = "ST7789/ILI9341 LCD"

    def __init__(self, entry):
        super().__init__(entry)
        self.pins = (entry["sck"], entry["mosi"], entry["dc"])
        # miso=None: the panel is never read, and the port would take the bus's default MISO pin.
        try:
            spi = SPI(entry["spi"], baudrate=entry["freq"], polarity=entry.get("polarity", 0),
                      phase=entry.get("phase", 0), sck=Pin(entry["sck"]), mosi=Pin(entry["mosi"]), miso=None)
        except OSError as e:  # the bus could not be set up: a bad entry, named (parts.setup)
            raise ValueError("SPI %d on SCK GPIO %d, MOSI GPIO %d: %r" % (
                entry["spi"], entry["sck"], entry["mosi"], e))
        cs, rst, bl = entry["cs"], entry["rst"], entry["bl"]
        if entry.get("reset") is not None:  # a board's own panel reset another way (board_screen)
            entry["reset"]()
        self.display = ST7789(
            spi, Pin(entry["dc"], Pin.OUT, value=1), None if cs is None else Pin(cs, Pin.OUT, value=1),
            None if rst is None else Pin(rst, Pin.OUT, value=1), entry["width"], entry["height"],
            entry["x_offset"], entry["y_offset"], entry["rotation"], entry["invert"], entry["bgr"])
        for command, data in entry.get("init", ()):
            self.display.send(command, data)
        # Turned by 90 or 270 degrees, the text runs along the panel's other side.
        self.width, self.height = self.display.width, self.display.height
        self.columns, self.rows = self.width // CELL, self.height // CELL
        self.backlight = None if bl is None else Pin(bl, Pin.OUT, value=1)
        self.colors = _COLORS["dark"]
        self.painted = []  # the text on each row of the panel now
        self.repaint()

    @property
    def where(self):
        return "%s (SPI SCK GPIO %d, MOSI GPIO %d, DC GPIO %d)" % ((self.place(),) + self.pins)

    def repaint(self):
        """The whole panel in the theme's colours: every row of text, and the pixels below
        the last row."""
        self.painted = []
        below = self.rows * CELL
        if below < self.height:
            self.display.fill_rect(0, below, self.width, self.height - below, self.colors[1])
        self.show(self.lines)

    def show(self, lines):
        """Draw `lines` (cut to the panel), one per text row: the rows whose text changed."""
        lines = self.fit(lines)
        painted = self.painted
        color, background = self.colors
        for row in range(self.rows):
            line = lines[row] if row < len(lines) else ""
            if row >= len(painted) or painted[row] != line:
                self.display.text_line(line, row * CELL, color, background)
                if row < len(painted):
                    painted[row] = line
                else:
                    painted.append(line)
        self.lines = lines
        return lines

    def set_theme(self, theme):
        """Light: black text on white; dark: white on black (redrawn, if it changed)."""
        colors = _COLORS[theme]
        if colors != self.colors:
            self.colors = colors
            self.repaint()


def board_screen(board, panel, pins, settings, reset=None, init=()):
    """A board's own LCD (the BOX-3's, the CoreS3's, the camera board's) as its status screen:
    an Lcd named "screen" among the board's parts (after config.json's: a screen part marked
    "status" comes first), of a kind no tools are made for (self.screen.* stays the board's),
    from the board module's `panel` (width, height, rotation, x_offset, y_offset, invert,
    bgr, spi, freq, polarity, phase) and `pins` (lcd_sclk, lcd_mosi, lcd_dc; lcd_cs and
    lcd_rst, active low, where the chip drives them). `reset`: a callable that resets the
    panel instead of lcd_rst (an active-high line, an I/O expander's); `init`: (command,
    bytes) pairs sent after the driver's start-up (power, gamma). A panel that does not come
    up is logged: the board runs without a screen. Where no brightness was saved, the
    backlight goes to the reference firmware's 75 %. Call it after boards.restore()."""
    entry = dict(panel)
    entry.update(name="screen", type="display", index=-1, status=True, sck=pins["lcd_sclk"],
                 mosi=pins["lcd_mosi"], dc=pins["lcd_dc"], cs=pins.get("lcd_cs"),
                 rst=None if reset is not None else pins.get("lcd_rst"), bl=None, reset=reset, init=init)
    try:
        board.parts.append(Lcd(entry))
    except (OSError, ValueError) as e:
        log.warning("the board's LCD did not start, running without a screen: %r", e)
        return
    if board.backlight is not None and (settings is None or settings.get("brightness") is None):
        board.backlight.set_brightness(75)
