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


# Whether forget_modules() forgets: on MicroPython. CPython keeps every module (memory is
# no concern there, and code that patched a module expects to find it). A bench that
# measures what a request allocates apart from the code it loads sets it False.
FORGET = _MICROPYTHON


def forget_modules(*names):
    """Drop modules a rare task loaded (an upgrade, a photo's upload) once it is done, so
    that their bytecode leaves the heap: the next use imports them again (see FORGET)."""
    if not FORGET:
        return
    for name in names:
        if sys.modules.pop(name, None) is not None:
            package, _, leaf = name.rpartition(".")
            parent = sys.modules.get(package)
            if parent is not None and hasattr(parent, leaf):
                delattr(parent, leaf)


def call_then_forget(module, function, *args, **kwargs):
    """Call a function of a module imported for the call and forgotten once it returns
    (forget_modules), so that code a rare task needs is on the heap only while it runs.

    :param module: The module, "package.module".
    :param function: The function's name; ``args`` and ``kwargs`` are passed to it.
    :returns: What the function returns.
    """
    call = getattr(__import__(module, None, None, (function,)), function)
    try:
        return call(*args, **kwargs)
    finally:
        call = None
        forget_modules(module)


class OnDemand:
    """A callback whose code is loaded for each call and dropped after
    (call_then_forget), for a tool or resource a session seldom calls: only this small
    object stays on the heap, not the code. A coroutine function's module stays loaded
    until its coroutine ends.

    :param module: The module that holds the function, "package.module".
    :param function: The function's name; it is called as
                     ``function(owner, *the call's arguments)``.
    :param owner: What the function gets first (the application, a board, a part).
    """

    def __init__(self, module, function, owner):
        self.module = module
        self.function = function
        self.owner = owner

    def __call__(self, *args):
        return call_then_forget(self.module, self.function, self.owner, *args)


if _MICROPYTHON:

    async def await_then_drop(coro):
        """`coro`, for a task of its own, so that the task keeps nothing of it once it
        ends. An ended task may stay linked from tasks that live on (MicroPython's task
        queue leaves such links), and a task keeps its coroutine; an ended MicroPython
        coroutine keeps its frame and function, so its module's code: a module forgotten
        meanwhile (forget_modules) would stay on the heap. This frame drops `coro` as it
        ends.

        :param coro: The coroutine the task runs.
        :returns: What `coro` returns.
        """
        try:
            return await coro
        finally:
            coro = None

else:

    def await_then_drop(coro):
        """`coro` itself: CPython clears an ended coroutine's frame, and a wrapper task
        cancelled before its first step would leave `coro` never awaited (a warning)."""
        return coro


async def await_then_forget(module, function, *args, **kwargs):
    """call_then_forget for an async function: the module is forgotten once its coroutine
    ends, so that a task starting the same work meanwhile shares the loaded module."""
    call = getattr(__import__(module, None, None, (function,)), function)
    try:
        return await call(*args, **kwargs)
    finally:
        call = None
        forget_modules(module)


def join_pieces(pieces):
    """The text of a message a sender got as pieces (see piece_utf8), for a transport or
    test that needs it whole: streaming transports write the pieces."""
    return "".join(piece if isinstance(piece, str) else str(piece_utf8(piece), "utf-8") for piece in pieces)


def piece_utf8(piece):
    """The UTF-8 bytes of one piece of an outgoing message: a str's (on MicroPython a view
    of the str itself, no copy), a bytes-like object as it is, or a listed entry's: an
    object with `json()` and `json_bytes` (McpTool, McpResource: a tools/list page hands
    out its entries so, and each is serialized only as a transport writes it), or a pair
    (reader, key) whose reader has json(key) and json_bytes(key) (a tool catalogue's
    entry: umcp.paging)."""
    if isinstance(piece, str):
        if _MICROPYTHON:
            return memoryview(piece)
        return piece.encode()
    if isinstance(piece, tuple):
        return piece[0].json(piece[1])
    if hasattr(piece, "json_bytes"):
        return piece_utf8(piece.json())
    return piece


def piece_size(piece):
    """The UTF-8 bytes one piece takes (see piece_utf8), without serializing an entry."""
    if isinstance(piece, tuple):
        return piece[0].json_bytes(piece[1])
    if hasattr(piece, "json_bytes"):
        return piece.json_bytes
    return len(piece_utf8(piece))


_sinks = []  # add_log_sink(): fn(level, logger, message) for each record let through
_LOST = const("WARNING log: a line was lost (out of memory)\n")
lines_lost = [0]  # log lines that found no heap to be written in, since boot


def _line_lost():
    """A log line could not be written (no heap for it): counted, and said on stderr with
    a constant string, which allocates nothing."""
    lines_lost[0] += 1
    try:
        sys.stderr.write(_LOST)
    except Exception:
        pass

_sink_handler = []  # holds True once the logging handler that feeds the sinks is installed

try:
    import logging

    def get_logger(name):
        return logging.getLogger(name)

    class _SinkHandler(logging.Handler):
        def emit(self, record):
            try:
                message = record.getMessage() if hasattr(record, "getMessage") else record.message
                for sink in _sinks:
                    sink(record.levelname, record.name, message)
            except Exception:  # MemoryError above all: logging must not raise
                _line_lost()

    def _install_sink_handler():
        logging.getLogger().addHandler(_SinkHandler())

except ImportError:
    # Stock ESP32 firmware has no logging module: warnings and errors go to stderr,
    # and everything from info up to the sinks.
    class _StderrLogger:
        def __init__(self, name):
            self.name = name

        def _emit(self, level, msg, args, echo=True):
            try:
                text = (msg % args) if args else msg
                if echo:
                    print(level, self.name, text, file=sys.stderr)
                for sink in _sinks:
                    sink(level, self.name, text)
            except Exception:  # MemoryError above all: logging must not raise
                _line_lost()

        def debug(self, msg, *args):
            pass

        def info(self, msg, *args):
            if _sinks:
                self._emit("INFO", msg, args, False)

        def warning(self, msg, *args):
            self._emit("WARNING", msg, args)

        def error(self, msg, *args):
            self._emit("ERROR", msg, args)

    def get_logger(name):
        return _StderrLogger(name)

    def _install_sink_handler():
        pass


def add_log_sink(sink):
    """Have `sink(level, logger, message)` called for every log record that the logging
    set-up lets through (info and up under firmware/main.py; without a logging module,
    info, warning and error). A sink must not log itself; what it raises is counted as a
    lost line (lines_lost), never passed to the code that logged."""
    if not _sink_handler:
        _install_sink_handler()
        _sink_handler.append(True)
    if sink not in _sinks:
        _sinks.append(sink)


def remove_log_sink(sink):
    if sink in _sinks:
        _sinks.remove(sink)
