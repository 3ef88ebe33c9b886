"""Simulated `framebuf` module, for CPython only: MicroPython has its own framebuf built in
(the unix port, the WebAssembly build and every board), and a built-in module is found
before this file. Pure Python, the same API as MicroPython's FrameBuffer for the formats
and methods drivers use: MONO_VLSB (SSD1306 pages), MONO_HLSB, MONO_HMSB, RGB565 and GS8;
fill, pixel, hline, vline, line, rect, fill_rect, text, scroll, blit.

`text()` draws 8x8 cells with glyphs of our own (5x7, one column byte each, the top row in
bit 0), not MicroPython's font: tests that read text back take the glyphs from the
framebuf that drew it (`glyph(ch)` here).
"""

MONO_VLSB = 0
RGB565 = 1
GS4_HMSB = 2
MONO_HLSB = 3
MONO_HMSB = 4
GS2_HMSB = 5
GS8 = 6
MVLSB = MONO_VLSB

_FIRST = 32  # the font covers printable ASCII, 32..126; others draw as "?"
_LAST = 126
_COLUMNS = 5
_FONT = bytes.fromhex(
    "000000000000005f00000003000300147f147f14242a7f2a12231308646236495522500000030000001c224100"
    "0041221c0014083e081408083e080800503000000808080808006060000020100804023e5149453e00427f4000"
    "42615149462141454b311814127f1027454545393c4a49493001710905033649494936064949291e0036360000"
    "00563600000814224100141414141400412214080201510906324979413e7e0909097e7f494949363e41414122"
    "7f4141221c7f494949417f090909013e4149497a7f0808087f00417f41002040413f017f081422417f40404040"
    "7f020c027f7f0408107f3e4141413e7f090909063e4151215e7f09192946464949493101017f01013f4040403f"
    "1f2040201f3f4038403f631408146307087008076151494543007f41410002040810200041417f000402010204"
    "4040404040000102000020545454787f484444383844444420384444487f3854545418087e0901020c5252523e"
    "7f0804047800447d40002040443d007f1028440000417f40007c041804787c0804047838444444387c14141408"
    "081414187c7c080404084854545420043f4440203c4040207c1c2040201c3c4030403c44281028440c5050503c"
    "4464544c44000836410000007f000000413608000804081008")


def glyph(ch):
    """The 8 column bytes `text()` draws for `ch` (bit 0: the cell's top row)."""
    code = ord(ch)
    if not _FIRST <= code <= _LAST:
        code = ord("?")
    at = (code - _FIRST) * _COLUMNS
    return _FONT[at:at + _COLUMNS] + bytes(8 - _COLUMNS)


class FrameBuffer:
    def __init__(self, buffer, width, height, format, stride=None):
        self.buffer = buffer
        self.width = width
        self.height = height
        self.format = format
        self.stride = width if stride is None else stride
        needed = self._size()
        if len(buffer) < needed:
            raise ValueError("buffer too small")

    def _size(self):
        if self.format == MONO_VLSB:
            return self.stride * ((self.height + 7) // 8)
        if self.format in (MONO_HLSB, MONO_HMSB):
            return (self.stride + 7) // 8 * self.height
        if self.format == RGB565:
            return self.stride * self.height * 2
        if self.format == GS8:
            return self.stride * self.height
        raise ValueError("invalid format")

    # -- one pixel

    def _get(self, x, y):
        buf, f = self.buffer, self.format
        if f == MONO_VLSB:
            return buf[(y >> 3) * self.stride + x] >> (y & 7) & 1
        if f == MONO_HLSB:
            return buf[(x + y * ((self.stride + 7) & ~7)) >> 3] >> (7 - (x & 7)) & 1
        if f == MONO_HMSB:
            return buf[(x + y * ((self.stride + 7) & ~7)) >> 3] >> (x & 7) & 1
        if f == RGB565:
            at = (x + y * self.stride) * 2
            return buf[at] | buf[at + 1] << 8
        return buf[x + y * self.stride]

    def _set(self, x, y, c):
        buf, f = self.buffer, self.format
        if f == MONO_VLSB:
            at, bit = (y >> 3) * self.stride + x, 1 << (y & 7)
        elif f == MONO_HLSB:
            at, bit = (x + y * ((self.stride + 7) & ~7)) >> 3, 0x80 >> (x & 7)
        elif f == MONO_HMSB:
            at, bit = (x + y * ((self.stride + 7) & ~7)) >> 3, 1 << (x & 7)
        elif f == RGB565:
            at = (x + y * self.stride) * 2
            buf[at] = c & 0xFF
            buf[at + 1] = c >> 8 & 0xFF
            return
        else:
            buf[x + y * self.stride] = c & 0xFF
            return
        buf[at] = buf[at] | bit if c & 1 else buf[at] & ~bit & 0xFF

    def pixel(self, x, y, c=None):
        if not (0 <= x < self.width and 0 <= y < self.height):
            return None
        if c is None:
            return self._get(x, y)
        self._set(x, y, c)
        return None

    # -- shapes

    def fill_rect(self, x, y, w, h, c):
        x0, y0 = max(x, 0), max(y, 0)
        x1, y1 = min(x + w, self.width), min(y + h, self.height)
        for yy in range(y0, y1):
            for xx in range(x0, x1):
                self._set(xx, yy, c)

    def fill(self, c):
        self.fill_rect(0, 0, self.width, self.height, c)

    def hline(self, x, y, w, c):
        self.fill_rect(x, y, w, 1, c)

    def vline(self, x, y, h, c):
        self.fill_rect(x, y, 1, h, c)

    def rect(self, x, y, w, h, c, f=False):
        if f:
            self.fill_rect(x, y, w, h, c)
            return
        self.fill_rect(x, y, w, 1, c)
        self.fill_rect(x, y + h - 1, w, 1, c)
        self.fill_rect(x, y, 1, h, c)
        self.fill_rect(x + w - 1, y, 1, h, c)

    def line(self, x0, y0, x1, y1, c):
        dx, dy = abs(x1 - x0), -abs(y1 - y0)
        sx = 1 if x0 < x1 else -1
        sy = 1 if y0 < y1 else -1
        err = dx + dy
        while True:
            self.pixel(x0, y0, c)
            if x0 == x1 and y0 == y1:
                return
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                x0 += sx
            if e2 <= dx:
                err += dx
                y0 += sy

    def text(self, s, x, y, c=1):
        for ch in s:
            columns = glyph(ch)
            for col in range(8):
                bits = columns[col]
                for row in range(8):
                    if bits >> row & 1:
                        self.pixel(x + col, y + row, c)
            x += 8

    def scroll(self, xstep, ystep):
        w, h = self.width, self.height
        copy = [[self._get(x, y) for x in range(w)] for y in range(h)]
        for y in range(h):
            for x in range(w):
                sx, sy = x - xstep, y - ystep
                if 0 <= sx < w and 0 <= sy < h:
                    self._set(x, y, copy[sy][sx])

    def blit(self, source, x, y, key=-1, palette=None):
        for sy in range(source.height):
            for sx in range(source.width):
                c = source._get(sx, sy)
                if palette is not None:
                    c = palette._get(c, 0)
                if c != key:
                    self.pixel(x + sx, y + sy, c)
