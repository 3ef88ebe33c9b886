"""What the board knows about its panel, and the UI theme (light or dark).

The theme is kept here and reported back (self.screen.get_info); a status screen
(umcpfw.statusview on a screen part: drivers.st7789, drivers.ssd1306) draws with it. A
board whose only panel is a screen part (the generic board's OLED or LCD) has no Display:
the part is its display (parts.screen).
"""

from drivers import check_theme


class Display:
    def __init__(self, width, height, panel, theme="light"):
        self.width = width
        self.height = height
        self.panel = panel
        self.theme = "light"
        self.set_theme(theme)

    def set_theme(self, theme):
        self.theme = check_theme(theme)

    def info(self):
        return {"width": self.width, "height": self.height, "type": self.panel,
                "monochrome": False, "theme": self.theme}
