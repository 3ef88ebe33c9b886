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
from parts.screen import CELL, Screen

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
