"""A small I2C OLED (SSD1306, 128x64 or 128x32) for text: self.<name>.show_text {text}
(wrapped into the panel's lines of 16 characters, 8 lines on 64 rows), self.<name>.clear
(parts.toolset registers them; parts.screen has what every text screen shares).
A panel that does not answer is logged; its tools say so, and try again at each call.
`show(lines)` is how the board shows other text (the activation code).

What stays on the heap is the drawing: text() and the data drivers.ssd1306's setup() made
(`drawing`: a page a line, no frame in memory). The driver's module, with the set-up and the
theme's command, is loaded only for those (the boot, a panel back after a loose wire, a
theme) and dropped again, with the drivers package where nothing else holds it.

With "status": true the panel is the board's status screen (umcpfw.statusview); the theme
(set_theme) is the panel's: light is dark text on a lit panel."""

import sys

from parts.screen import Screen
from umcp.compat import call_then_forget, forget_modules


class Oled(Screen):
    # addr, i2c: set by parts.setup, which sets the panel up (boot work: none of its code
    # stays on the heap) and names its bus and pins in the log when it does not answer
    panel = "SSD1306 OLED"
    monochrome = True
    drawing = None  # drivers.ssd1306.setup()'s, None until the panel answers

    def connect(self):
        """The panel set up, in the theme and blank, on the first call that finds it
        answering (a panel that lost power comes back blank); OSError when it does not."""
        if self.drawing is None:
            self.drawing = _driver("setup", self.i2c, self.width, self.height, self.addr,
                                   self.theme == "light")
        return self.drawing

    def show(self, lines):
        """Draw `lines` (cut to the panel), one per text row; RuntimeError when it does not
        answer."""
        lines = self.fit(lines)
        try:
            text(self.i2c, self.addr, self.connect(), self.rows, lines)
        except OSError as e:
            self._silent(e)
        self.lines = lines
        return lines

    def set_theme(self, theme):
        """Light: the panel lit with dark text (inverted by the controller, its RAM
        unchanged); dark: light text on black. ValueError for another; RuntimeError when
        it does not answer (the theme is kept: the panel's next set-up is in it)."""
        try:
            _driver("theme", self.i2c, self.addr, theme)  # ValueError before anything is sent
        except OSError as e:
            self.theme = theme
            self._silent(e)
        self.theme = theme
        if self.drawing is None:  # back after a loose wire: set up in it, its lines again
            self.show(self.lines)

    def _silent(self, e):
        self.drawing = None  # set up again once it answers
        raise RuntimeError("%s does not answer: %r; check its wiring" % (self.where, e))


def text(i2c, addr, drawing, pages, lines):
    """The whole panel at `addr` (`pages` pages, `drawing`: drivers.ssd1306.setup()'s): line
    i on page i (8 rows, from the left; characters beyond the width cut), the pages below
    the last line blank. The one page is drawn and sent again for each line: nothing made."""
    window, page, data = drawing
    i2c.writeto(addr, window)
    for row in range(pages):
        page.fill(0)
        if row < len(lines):
            page.text(lines[row], 0, 0, 1)
        i2c.writevto(addr, data)


def _driver(function, *args):
    """drivers.ssd1306's `function` called, its module loaded for the call and dropped after
    (the drivers package too, unless it was loaded before: an LCD's, a board's display)."""
    kept = "drivers" in sys.modules
    try:
        return call_then_forget("drivers.ssd1306", function, *args)
    finally:
        if not kept:
            forget_modules("drivers")
