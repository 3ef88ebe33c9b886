"""What the text screens among the parts share (oled: an I2C SSD1306; lcd: an SPI colour
LCD): lines of 8x8 characters, the tools show_text {text} (wrapped into the screen's
columns) and clear, and the status screen's hold: with "status": true the screen is the
board's status screen (umcpfw.statusview), and a maker's show_text holds it (`held`) until
clear gives it back (`on_release`, the view's).

A status screen on a board without a display of its own (the generic board) is also the
board's display, as drivers.display's Display is a board's: `theme`, set_theme(theme) (the
tool self.screen.set_theme) and info() (self.screen.get_info).

A screen's type adds show(lines) (RuntimeError naming the part when it does not answer),
set_theme(theme) (ValueError for a theme not in drivers.THEMES; the theme is kept even when
the panel does not answer, and set when it does again), `panel` (its kind in words, for
info()) and `monochrome`."""

import parts

CELL = 8  # framebuf's text is 8x8 pixels a character


class Screen(parts.Part):
    # width, height (pixels), columns, rows (of text), status: set by parts.setup
    panel = "screen"
    theme = "dark"  # a panel's own at start: light text on black
    lines = ()  # the text it shows (fitted): show() keeps it
    held = False  # a maker's text is on the panel (show_text until clear)
    on_release = None  # called when clear gives the panel back (the status view)

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

    def state(self, args=None):
        return {"lines": self.lines}

    def info(self):
        """What self.screen.get_info says where the screen is the board's display."""
        return {"width": self.width, "height": self.height, "type": self.panel,
                "monochrome": self.monochrome, "theme": self.theme}

    def fit(self, lines):
        """`lines` cut to the screen, printable: framebuf's font has printable ASCII only,
        anything else shows as '?'."""
        fitted = []
        for line in lines[:self.rows]:
            line = line[:self.columns]
            for c in line:
                if not " " <= c <= "~":
                    line = "".join([c if " " <= c <= "~" else "?" for c in line])
                    break
            fitted.append(line)
        return fitted


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

