"""A small I2C OLED (SSD1306, 128x64 or 128x32) for text: self.<name>.show_text {text}
(wrapped into the panel's lines of 16 characters, 8 lines on 64 rows), self.<name>.clear
(parts.toolset registers them; parts.screen has what every text screen shares).
A panel that does not answer is logged; its tools say so, and try again at each call.
`show(lines)` is how the board shows other text (the activation code); `display` is the
drivers.ssd1306 driver (text a page at a time: no frame in memory).

With "status": true the panel is the board's status screen (umcpfw.statusview); the theme
(set_theme) is the panel's: light is dark text on a lit panel."""

from drivers import check_theme
from drivers.ssd1306 import SSD1306
from parts.screen import Screen


class Oled(Screen):
    # addr, i2c: set by parts.setup, which sets the panel up (boot work: none of its code
    # stays on the heap) and names its bus and pins in the log when it does not answer
    panel = "SSD1306 OLED"
    monochrome = True
    display = None  # the driver, None until the panel answers

    def connect(self):
        """The driver, set up on the first call that finds the panel answering: in the
        theme, showing the lines it showed (a panel that lost power comes back blank)."""
        display = self.display
        if display is None:
            display = SSD1306(self.i2c, self.width, self.height, self.addr)  # set up blank, dark
            if self.theme == "light":
                display.invert(True)
            if self.lines:
                display.text(self.lines)
            self.display = display
        return display

    def show(self, lines):
        """Draw `lines` (cut to the panel), one per text row; RuntimeError when it does not
        answer."""
        lines = self.fit(lines)
        try:
            self.connect().text(lines)
        except OSError as e:
            self._silent(e)
        self.lines = lines
        return lines

    def set_theme(self, theme):
        """Light: the panel lit with dark text (inverted by the controller, its RAM
        unchanged); dark: light text on black. RuntimeError when it does not answer."""
        self.theme = check_theme(theme)
        try:
            self.connect().invert(theme == "light")
        except OSError as e:
            self._silent(e)

    def _silent(self, e):
        self.display = None  # set up again once it answers
        raise RuntimeError("%s does not answer: %r; check its wiring" % (self.where, e))
