"""A small I2C OLED (SSD1306, 128x64 or 128x32) for text: self.<name>.show_text {text}
(wrapped into the panel's lines of 16 characters, 8 lines on 64 rows), self.<name>.clear
(parts.toolset registers them; parts.screen has what every text screen shares).
A panel that does not answer is logged; its tools say so, and try again at each call.
`show(lines)` is how the board shows other text (the activation code); `display` is the
drivers.ssd1306 driver (text a page at a time: no frame in memory).

With "status": true the panel is the board's status screen (umcpfw.statusview); the theme
(set_theme) is the panel's: light is dark text on a lit panel."""

from drivers.ssd1306 import SSD1306
from parts.screen import Screen


class Oled(Screen):
    panel = "SSD1306 OLED"

    # addr, bus, i2c, pins (SDA, SCL), display (the driver, None until the panel answers):
    # set by parts.setup, which sets the panel up (boot-only code: none of it resident)

    @property
    def where(self):
        return "%s (I2C %d at 0x%02X, SDA GPIO %d, SCL GPIO %d)" % (
            self.place(), self.bus, self.addr, self.pins[0], self.pins[1])

    def connect(self):
        """The driver, set up on the first call that finds the panel answering."""
        if self.display is None:
            self.display = SSD1306(self.i2c, self.width, self.height, self.addr)
        return self.display

    def show(self, lines):
        """Draw `lines` (cut to the panel), one per text row; OSError when it does not answer."""
        lines = self.fit(lines)
        try:
            self.connect().text(lines)
        except OSError as e:
            self.display = None  # set it up again once it answers
            raise RuntimeError("%s does not answer: %r; check its wiring" % (self.where, e))
        self.lines = lines
        return lines

    def set_theme(self, theme):
        """Light: the panel lit with dark text (inverted by the controller, its RAM
        unchanged); dark: light text on black. OSError when it does not answer."""
        try:
            self.connect().invert(theme == "light")
        except OSError:
            self.display = None
            raise
