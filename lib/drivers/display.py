"""What the board knows about its panel, and the UI theme (light or dark).

This firmware has no pixel driver or UI toolkit: the theme is kept as the state a board's
display driver would draw with, and reported back; nothing on the panel changes.
"""

THEMES = ("light", "dark")


class Display:
    def __init__(self, width, height, panel, theme="light"):
        self.width = width
        self.height = height
        self.panel = panel
        self.theme = "light"
        self.set_theme(theme)

    def set_theme(self, theme):
        if theme not in THEMES:
            raise ValueError("theme must be 'light' or 'dark', got %r" % (theme,))
        self.theme = theme

    def info(self):
        return {"width": self.width, "height": self.height, "type": self.panel,
                "monochrome": False, "theme": self.theme}
