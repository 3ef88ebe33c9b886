"""Small shims so the same code runs on CPython 3.11+ and MicroPython 1.24+."""

import json
import sys

try:
    from micropython import const
except ImportError:

    def const(x):
        return x


try:
    from time import ticks_ms, ticks_diff
except ImportError:
    import time

    def ticks_ms():
        return int(time.monotonic() * 1000)

    def ticks_diff(a, b):
        return a - b


def _generator():
    yield


_GENERATOR = type(_generator())
_MICROPYTHON = sys.implementation.name == "micropython"


def iscoroutine(obj):
    """True for what calling an `async def` function returns.

    MicroPython's coroutines are plain generators without `__await__`.
    """
    return hasattr(obj, "__await__") or (_MICROPYTHON and isinstance(obj, _GENERATOR))


def dumps(obj):
    """Compact JSON: the default separators waste a byte after every comma and colon."""
    return json.dumps(obj, separators=(",", ":"))


def join_pieces(pieces):
    """The text of a message a sender got as pieces (str, or bytes-like UTF-8 text),
    for a transport or test that needs it whole: streaming transports write the pieces."""
    return "".join(piece if isinstance(piece, str) else str(piece, "utf-8") for piece in pieces)


try:
    import logging

    def get_logger(name):
        return logging.getLogger(name)

except ImportError:
    # Stock ESP32 firmware has no logging module: warnings and errors go to stderr.
    class _StderrLogger:
        def __init__(self, name):
            self.name = name

        def _emit(self, level, msg, args):
            print(level, self.name, (msg % args) if args else msg, file=sys.stderr)

        def debug(self, msg, *args):
            pass

        def info(self, msg, *args):
            pass

        def warning(self, msg, *args):
            self._emit("WARNING", msg, args)

        def error(self, msg, *args):
            self._emit("ERROR", msg, args)

    def get_logger(name):
        return _StderrLogger(name)
