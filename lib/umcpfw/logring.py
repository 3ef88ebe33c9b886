"""The recent log lines (device://log): a log sink of umcp.compat, resident from the start
(boot adds it before anything else), so the lines of the whole session are there when a
client asks (umcpfw.resources reads them)."""

from umcp.compat import const, ticks_diff, ticks_ms

LOG_LINES = const(12)  # 120 bytes of heap each, for the whole session
LOG_LINE_CHARS = const(120)  # UTF-8 bytes; at most 255
_LOST = const(b"(a log line was lost: out of memory)")


class LogRing:
    """The last `lines` log lines, each cut to `line_chars` bytes of UTF-8: slots in one
    bytearray allocated up front, so it never grows and leaves no long-lived strings
    scattered over the heap (they would fragment it). `add` is a umcp.compat log sink:
    it writes each piece of the line into its slot where it lies (no line is built first)
    and never raises; with no heap even for that, the slot says a line was lost."""

    def __init__(self, lines=LOG_LINES, line_chars=LOG_LINE_CHARS):
        self.capacity = lines
        self._buf = bytearray(lines * line_chars)
        self._lens = bytearray(lines)  # 0: an empty slot (a line has its timestamp at least)
        self._next = 0
        self._chars = line_chars
        self._start = ticks_ms()

    def add(self, level, logger, message):
        at = self._next * self._chars
        try:
            n = self._write(at, level, logger, message)
        except Exception:  # MemoryError above all: a log sink must not raise
            n = len(_LOST)
            self._buf[at:at + n] = _LOST
        self._lens[self._next] = n
        self._next = (self._next + 1) % self.capacity

    def _write(self, at, level, logger, message):
        """Write the line into the slot at `at`; returns its length in bytes."""
        buf = self._buf
        end = at + self._chars
        ms = ticks_diff(ticks_ms(), self._start)
        pos = at
        for piece in ("%d.%03d " % (ms // 1000, ms % 1000), level, " ", logger, ": ", message):
            data = _utf8(piece)
            n = len(data)
            if pos + n > end:  # cut, at a character's start, and say so
                buf[pos:end] = data[:end - pos]
                pos = end - 3
                while pos > at and buf[pos] & 0xC0 == 0x80:
                    pos -= 1
                buf[pos:pos + 3] = b"..."
                pos += 3
                break
            buf[pos:pos + n] = data
            pos += n
        k = buf.find(b"\n", at, pos)
        while k >= 0:  # one line each
            buf[k] = 32
            k = buf.find(b"\n", k + 1, pos)
        return pos - at

    def lines(self):
        """The kept lines, oldest first."""
        count = self.capacity
        chars = self._chars
        kept = []
        for i in range(count):
            slot = (self._next + i) % count
            n = self._lens[slot]
            if n:
                kept.append(str(self._buf[slot * chars:slot * chars + n], "utf-8"))
        return kept

    def text(self):
        lines = self.lines()
        return "\n".join(lines) + "\n" if lines else ""


def _utf8(text):
    """The UTF-8 bytes of `text`: on MicroPython a view of the str itself (no copy)."""
    try:
        return memoryview(text)
    except TypeError:  # CPython: str has no buffer
        return text.encode()
