"""Text read back off a simulated SSD1306's RAM (tools/sim/hwsim/simoled.py), as a person
would read the panel: each 8x8 cell matched against the glyphs of the framebuf that drew it
(MicroPython's own font when the firmware ran there, the stand-in's under CPython)."""

import functools
import subprocess

from tests.support.firmwareharness import MICROPYTHON

_COLUMNS = 128
_CHARS = [chr(c) for c in range(32, 127)]
# Prints each printable character's 8 column bytes as drawn by MicroPython's framebuf.
_GLYPHS_SCRIPT = """import framebuf
buf = bytearray(8)
cell = framebuf.FrameBuffer(buf, 8, 8, framebuf.MONO_VLSB)
for c in range(32, 127):
    cell.fill(0)
    cell.text(chr(c), 0, 0, 1)
    print(''.join('%02x' % b for b in buf))
"""


@functools.lru_cache(maxsize=None)
def glyphs(micropython):
    """{8 column bytes: character} of the framebuf the firmware drew with."""
    if micropython:
        done = subprocess.run([MICROPYTHON, "-c", _GLYPHS_SCRIPT], capture_output=True, text=True,
                              timeout=30, check=True)
        cells = [bytes.fromhex(line) for line in done.stdout.split()]
    else:
        import framebuf  # tools/sim/hwsim's stand-in: CPython has none

        cells = [framebuf.glyph(c) for c in _CHARS]
    assert len(cells) == len(_CHARS)
    return dict(zip(cells, _CHARS))


def lines(oled, micropython):
    """The text rows an SSD1306 record ({"ram", "width", "height"}, hwsim.snapshot()) shows,
    trailing blanks dropped; a cell no glyph matches reads as "\\ufffd"."""
    ram = bytes.fromhex(oled["ram"])
    table = glyphs(bool(micropython))
    rows = []
    for page in range(oled["height"] // 8):
        row = ""
        for cell in range(oled["width"] // 8):
            at = page * _COLUMNS + cell * 8
            row += table.get(ram[at:at + 8], "\ufffd")
        rows.append(row.rstrip())
    while rows and not rows[-1]:
        rows.pop()
    return rows
