"""JSON decoding for what arrives over the link: bounded depth, valid text.

`loads(data)` is `json.loads` with these guarantees on CPython and MicroPython:

- Every string it returns is valid Unicode that encodes to valid UTF-8: an escaped
  surrogate pair ("\\ud83d\\ude00", how CPython's json.dumps sends every emoji) becomes
  the one character it stands for, and a lone surrogate escape becomes U+FFFD
  (MicroPython's json would make CESU bytes the backend refuses). A \\u not followed by
  four hex digits is refused: MicroPython would decode it to garbage.
- Nesting deeper than `max_depth` is refused before the parser sees it.
- NaN, Infinity and -Infinity are refused on both runtimes (JSON has no such literals).
- Whatever goes wrong is a ValueError with a short message (a MemoryError too, after
  the partial result is dropped), so the caller answers -32700; reading one member of
  such text is umcp.jsonpeek's.
"""

import json
import sys

from .compat import call_then_forget, const

MAX_DEPTH = 32

_MICROPYTHON = sys.implementation.name == "micropython"

try:
    _RecursionError = RecursionError
except NameError:  # MicroPython raises RuntimeError
    _RecursionError = RuntimeError

if _MICROPYTHON:

    def _decode(buf):
        # json.loads takes bytes, bytearray and memoryview, and no NaN literals; before
        # MicroPython 1.25 it also took an object or a list cut short ('{"id":4') for whole.
        value = json.loads(buf)
        if isinstance(value, (dict, list)) and not closed(buf):
            raise ValueError("invalid JSON: cut short")
        return value
else:

    def _refuse_constant(name):
        raise ValueError("%s is not JSON" % name)

    _decode_str = json.JSONDecoder(parse_constant=_refuse_constant).decode

    def _decode(buf):
        # json.loads decodes bytes with "surrogatepass", letting raw surrogates in: decode strictly.
        return _decode_str(buf if isinstance(buf, str) else str(buf, "utf-8"))


_BLANKS = const((32, 9, 10, 13, " ", "\t", "\n", "\r"))
_PAIRS = const(((123, 125), (91, 93), ("{", "}"), ("[", "]")))


def closed(buf):
    """Whether the JSON text `buf` (str or bytes-like), blanks aside, ends with the bracket
    that closes the one it opens with: '{"id":4' and '{"a": [1]' do not. (A text cut short
    right after an inner object, '{"a": {"b": 1}', still passes: on MicroPython 1.24 only.)"""
    start, end = 0, len(buf) - 1
    while start < end and buf[start] in _BLANKS:
        start += 1
    while end > start and buf[end] in _BLANKS:
        end -= 1
    return end > start and (buf[start], buf[end]) in _PAIRS


# The common message costs a few C-level scans beyond json.loads: one find for "\u" and
# four counts of brackets, and on MicroPython, whose own UTF-8 check looks only at the
# shape of each character, one find for each lead byte that UTF-8 never has or limits
# further. Only a message that has a \u escape, more brackets than `max_depth`, or such a
# lead byte pays for a Python-level pass over the suspects (for the first two,
# umcp.jsonfix's, loaded for that message).
def loads(data, max_depth=MAX_DEPTH):
    """The object a JSON text (str, bytes, bytearray or memoryview) encodes.

    Raises ValueError("invalid JSON: ...", "nesting deeper than N", "message too
    large for memory") for anything it will not return.
    """
    failure = None
    try:
        if isinstance(data, memoryview):
            data = bytes(data)  # find and count need bytes (CPython's json too)
        elif not isinstance(data, (str, bytes, bytearray)):
            raise TypeError("JSON text must be str or bytes-like")
        text = isinstance(data, str)
        escaped = data.find("\\u" if text else b"\\u") >= 0
        if text:
            deep = data.count("[") + data.count("{") > max_depth
        else:
            deep = data.count(b"[") + data.count(b"{") > max_depth
        buf = data
        if _MICROPYTHON and not text:
            refuse_invalid_utf8(data)  # CPython's strict decode refuses what this does
        if escaped or deep:
            if text:
                buf = data.encode()  # byte offsets: MicroPython indexes a str by characters
            # Their checks are loaded for this message only (umcp.jsonfix).
            buf = call_then_forget("umcp.jsonfix", "repair", buf, escaped, deep, max_depth)
        return _decode(buf)
    except MemoryError:
        failure = "message too large for memory"
    except _RecursionError:  # CPython's scanner past its recursion limit
        failure = "nesting too deep"
    except UnicodeError:  # a ValueError on both, but say what it is
        failure = "invalid JSON: not UTF-8 text"
    except ValueError as e:
        failure = str(e)
        if not (failure.startswith("invalid JSON") or failure.startswith("nesting deeper")):
            failure = "invalid JSON: " + (failure or "syntax error")
    # Raised out here, so the handled exception and what it holds are gone first.
    buf = data = None
    raise ValueError(failure)


# Lead bytes that never start a UTF-8 character but have the shape of one, which is all
# MicroPython checks: C0 and C1 (a character that fits one byte), F5 to F7 (past
# U+10FFFF). F8 to FF have no such shape: MicroPython refuses them itself.
_NEVER = const(b"\xc0\xc1\xf5\xf6\xf7")
# Lead bytes whose next byte has a narrower range than 80-BF, each followed by its lowest
# and highest: E0 and F0 below it would be a shorter form, ED above it a surrogate, F4
# above it past U+10FFFF.
_NARROW = const(b"\xe0\xa0\xbf\xed\x80\x9f\xf0\x90\xbf\xf4\x80\x8f")
_NEEDLE = bytearray(1)  # the byte looked for: find() takes an int only from MicroPython 1.29


def refuse_invalid_utf8(buf):
    """MicroPython checks only the shape of UTF-8 (a lead byte and its number of
    continuation bytes): surrogates, longer forms than needed and code points past
    U+10FFFF get into its strs, and from there back out in a reply the peer refuses.
    Raise UnicodeError (a ValueError) if `buf` (bytes or bytearray) has any (C-level
    finds; a Python step only per E0, ED, F0 or F4 byte, which few texts have). unet.ws
    checks a text frame with it too (RFC 6455 8.1: 1007). CPython's strict decoder
    refuses all of them itself."""
    needle = _NEEDLE
    for lead in _NEVER:
        needle[0] = lead
        if buf.find(needle) >= 0:
            raise UnicodeError
    n = len(buf)
    for i in range(0, len(_NARROW), 3):
        needle[0] = _NARROW[i]
        low, high = _NARROW[i + 1], _NARROW[i + 2]
        k = buf.find(needle)
        while k >= 0:
            if k + 1 < n and not low <= buf[k + 1] <= high:
                raise UnicodeError
            k = buf.find(needle, k + 1)
