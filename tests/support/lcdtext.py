"""Text read back off a simulated SPI LCD's glass (tools/sim/hwsim/simlcd.py, as
hwsim.snapshot() records it), as a person would read the panel: each 8x8 cell's pixels in
the text colour make the glyph, matched against the framebuf that drew it
(tests.support.oledtext.glyphs: MicroPython's own font when the firmware ran there)."""

from tests.support.oledtext import glyphs


def pixels(lcd):
    """The glass's RGB565 colours, row by row (a list of lists)."""
    ram = bytes.fromhex(lcd["ram"])
    width = lcd["width"]
    return [[ram[(y * width + x) * 2] << 8 | ram[(y * width + x) * 2 + 1] for x in range(width)]
            for y in range(lcd["height"])]


def lines(lcd, micropython, color):
    """The text rows the panel shows in `color` (the panel unturned), trailing blanks
    dropped; a cell no glyph matches reads as "\\ufffd"."""
    glass = pixels(lcd)
    table = glyphs(bool(micropython))
    rows = []
    for top in range(0, lcd["height"] - 7, 8):
        row = ""
        for left in range(0, lcd["width"] - 7, 8):
            # as MONO_VLSB columns: one byte per column, the cell's top row in bit 0
            cell = bytes(sum(1 << y for y in range(8) if glass[top + y][left + x] == color)
                         for x in range(8))
            row += table.get(cell, "\ufffd")
        rows.append(row.rstrip())
    while rows and not rows[-1]:
        rows.pop()
    return rows


def colors(lcd):
    """{colour: how many pixels of the glass show it}."""
    counts = {}
    for row in pixels(lcd):
        for color in row:
            counts[color] = counts.get(color, 0) + 1
    return counts
