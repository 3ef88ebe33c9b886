"""Small drivers for the peripherals umcp's tools act on: `es8311` (codec) and `aw88298`
(amplifier) set the volume, on the curve `codec` shares with Espressif's esp_codec_dev;
`backlight` (PWM, or the AXP2101 PMIC), `display`, `camera`, `ssd1306` (the OLED's set-up and
theme, loaded for them: parts.oled draws text a page at a time), `st7789` (SPI colour LCDs: ST7789, ILI9341, ILI9342C; text a line at a time,
no frame in memory). check_percent() is the
argument check both volume setters share; THEMES and check_theme() the UI themes a display
takes (drivers.display's Display, or a screen part that is the board's display).
"""

THEMES = ("light", "dark")


def check_percent(name, value):
    """`value` if it is an int in 0..100, else ValueError naming `name`."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 100:
        raise ValueError("%s must be an integer 0..100, got %r" % (name, value))
    return value


def check_theme(theme):
    """`theme` if it is one of THEMES, else ValueError."""
    if theme not in THEMES:
        raise ValueError("theme must be 'light' or 'dark', got %r" % (theme,))
    return theme
