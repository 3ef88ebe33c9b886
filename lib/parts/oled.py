"""A small I2C OLED (SSD1306, 128x64 or 128x32) for text: self.<name>.show_text {text}
(wrapped into the panel's lines of 16 characters, 8 lines on 64 rows), self.<name>.clear
(parts.setup registers them).
A panel that does not answer is logged; its tools say so, and try again at each call.
`show(lines)` is how the board shows other text (the activation code); `display` is the
drivers.ssd1306 FrameBuffer, for whatever else draws on it.

With "status": true the panel is the board's status screen (umcpfw.statusview): it shows
the board's state, and a maker's show_text holds the panel (`held`) until clear gives it
back; the theme (set_theme) is the panel's: light is dark text on a lit panel."""

from machine import I2C, Pin

import parts
from drivers.ssd1306 import SSD1306

_CELL = 8  # framebuf's text is 8x8 pixels a character
_FREQ = 400000


class Oled(parts.Part):
    def __init__(self, entry):
        super().__init__(entry)
        self.width, self.height = entry["width"], entry["height"]
        self.columns, self.rows = self.width // _CELL, self.height // _CELL
        self.addr = entry["addr"]
        self.bus = entry["i2c"]
        self.i2c = I2C(self.bus, sda=Pin(entry["sda"]), scl=Pin(entry["scl"]), freq=_FREQ)
        self.pins = (entry["sda"], entry["scl"])
        self.display = None
        self.lines = []
        self.status = entry.get("status", False)
        self.held = False  # a maker's text is on the panel (show_text until clear)
        self.on_release = None  # called when clear gives the panel back (the status view)
        try:
            self.connect()
        except OSError as e:
            parts.log.warning("%s does not answer: %r", self.where, e)

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
        lines = [_printable(line)[:self.columns] for line in lines][:self.rows]
        try:
            display = self.connect()
            display.fill(0)
            for row, line in enumerate(lines):
                display.text(line, 0, row * _CELL, 1)
            display.show()
        except OSError as e:
            self.display = None  # set it up again once it answers
            raise RuntimeError("%s does not answer: %r; check its wiring" % (self.where, e))
        self.lines = lines
        return lines

    def show_text(self, args):
        lines = self.show(wrap(args["text"], self.columns))
        self.held = self.status
        return {"lines": lines}

    def clear(self, args):
        self.show([])
        if self.held:
            self.held = False
            if self.on_release is not None:
                self.on_release()
        return True

    def set_theme(self, theme):
        """Light: the panel lit with dark text (inverted by the controller, the frame
        buffer unchanged); dark: light text on black. OSError when it does not answer."""
        try:
            self.connect().invert(theme == "light")
        except OSError:
            self.display = None
            raise

    def state(self, args=None):
        return {"lines": self.lines}


def wrap(text, columns):
    """Lines of at most `columns` characters: at newlines, then between words where it can."""
    lines = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            while len(word) > columns:  # a word longer than a line is cut
                if line:
                    lines.append(line)
                    line = ""
                lines.append(word[:columns])
                word = word[columns:]
            if not line:
                line = word
            elif len(line) + 1 + len(word) <= columns:
                line += " " + word
            else:
                lines.append(line)
                line = word
        lines.append(line)
    return lines


def _printable(line):
    """framebuf's font has printable ASCII only: anything else shows as '?'."""
    for c in line:
        if not " " <= c <= "~":
            return "".join(c if " " <= c <= "~" else "?" for c in line)
    return line
