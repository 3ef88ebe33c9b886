"""Reading one member of a JSON text without parsing it: the failure paths. `read_id(data)`
finds a request's id in text that umcp.jsonin.loads refused or that memory cut short
(too deep, or only its first bytes): the top-level "id" member, when its value is
complete, so that the server answers such a request with its id.
`member(data, key)` finds one member's value (a transport looks into an envelope so).

Byte by byte, never recursing, allocating nothing until the value is found: this runs
when a message could not be parsed, often because the heap is short. Loaded for such a
message (umcp.refusal) and dropped again."""

import sys

from .compat import const
from .jsonin import loads

_MICROPYTHON = sys.implementation.name == "micropython"
_BACKSLASH = const(92)

_WHITE = const(b" \t\r\n")
_SCALAR_END = const(b",}] \t\r\n")


def _skip_white(buf, i, n):
    while i < n and buf[i] in _WHITE:
        i += 1
    return i


def _string_end(buf, i, n):
    """The index past the string that starts (with its quote) at `i`, or -1 if it does
    not end within `n`."""
    i += 1
    while i < n:
        c = buf[i]
        if c == 34:  # "
            return i + 1
        i += 2 if c == _BACKSLASH else 1
    return -1


def _value_end(buf, i, n):
    """The index past the value that starts at `i`, or -1 if it does not end within `n`
    (a number or literal ends only where something follows it)."""
    c = buf[i]
    if c == 34:
        return _string_end(buf, i, n)
    if c == 123 or c == 91:  # { [
        depth = 0
        while i < n:
            c = buf[i]
            if c == 34:
                i = _string_end(buf, i, n)
                if i < 0:
                    return -1
                continue
            if c == 123 or c == 91:
                depth += 1
            elif c == 125 or c == 93:
                depth -= 1
                if not depth:
                    return i + 1
            i += 1
        return -1
    while i < n and buf[i] not in _SCALAR_END:
        i += 1
    return i if i < n else -1


def member(data, key, start=0, partial=False):
    """(start, end) of the value of member `key` (bytes) of the JSON object at `start`
    of `data` (bytes-like), the last one if it is repeated, as JSON itself reads it; None
    when the object has none whose value is complete. The text may be truncated or
    invalid after it: only what comes before matters. `partial`: a value cut short counts
    too (its end is then -1), as an envelope's payload of which only the start arrived."""
    buf = data
    n = len(buf)
    i = _skip_white(buf, start, n)
    if i >= n or buf[i] != 123:  # {
        return None
    found = None
    size = len(key)
    i += 1
    while True:
        i = _skip_white(buf, i, n)
        if i >= n or buf[i] != 34:
            return found
        end = _string_end(buf, i, n)
        if end < 0:
            return found
        named = end - i - 2 == size
        m = 0
        while named and m < size:
            named = buf[i + 1 + m] == key[m]
            m += 1
        i = _skip_white(buf, end, n)
        if i >= n or buf[i] != 58:  # :
            return found
        i = _skip_white(buf, i + 1, n)
        if i >= n:
            return found
        begin = i
        i = _value_end(buf, i, n)
        if i < 0:
            return (begin, -1) if named and partial else found
        if named:
            found = (begin, i)
        i = _skip_white(buf, i, n)
        if i >= n or buf[i] != 44:  # ,
            return found
        i += 1


def read_id(data, inside=None, method=False, decode=True):
    """(the id, its JSON text as the client wrote it) of the message in `data` (str or
    bytes-like, possibly truncated or invalid), or None when no top-level "id" with a
    complete value can be read there. `inside`: the key (bytes) of the member of an outer
    object that holds the message, as an envelope's "payload". `method`: only beside a
    complete top-level "method" (a request's; a response, which is never answered, has
    none). `decode` False: (None, the text), one copy of it: decoding a long id again takes
    four, often more than a fragmented heap has in one piece."""
    try:
        if isinstance(data, str):
            data = _utf8(data)
        start = 0
        if inside is not None:
            span = member(data, inside, 0, True)
            if span is None:
                return None
            start = span[0]
        if method and member(data, b"method", start) is None:
            return None
        span = member(data, b"id", start)
        if span is None:
            return None
        if not decode:
            return None, str(data[span[0]:span[1]], "utf-8")
        token = bytes(data[span[0]:span[1]])
        return loads(token), str(token, "utf-8")
    except (ValueError, MemoryError):  # not JSON, or no heap even for this
        return None


def _utf8(text):
    """The UTF-8 bytes of `text`: on MicroPython a view of the str itself (no copy)."""
    if _MICROPYTHON:
        return memoryview(text)
    return text.encode()
