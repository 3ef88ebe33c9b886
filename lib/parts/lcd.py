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

from drivers import check_theme
from drivers.st7789 import BLACK, WHITE
from parts import log
from parts.screen import CELL, Screen
from umcp.compat import call_then_forget

# theme: (text, background)
_COLORS = {"light": (BLACK, WHITE), "dark": (WHITE, BLACK)}


class Lcd(Screen):
    # display (the drivers.st7789 driver), backlight (its pin or None), colors, painted:
    # set by parts.setup, which sets the panel up (boot work)
    panel = "ST7789/ILI9341 LCD"
    monochrome = False
    colors = _COLORS["dark"]

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
        self.theme = check_theme(theme)
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
    entry.update(name="screen", type="display", index=-1, where="the board's LCD", status=True,
                 sck=pins["lcd_sclk"], mosi=pins["lcd_mosi"], dc=pins["lcd_dc"], cs=pins.get("lcd_cs"),
                 rst=None if reset is not None else pins.get("lcd_rst"), bl=None, reset=reset, init=init)
    try:
        # Made and set up as config.json's parts are (boot work, dropped after).
        board.parts.append(call_then_forget("parts.setup", "make", [entry])[0])
    except (OSError, ValueError) as e:
        log.warning("the board's LCD did not start, running without a screen: %r", e)
        return
    if board.backlight is not None and (settings is None or settings.get("brightness") is None):
        board.backlight.set_brightness(75)
