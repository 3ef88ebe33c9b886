"""JSON decoding for what arrives over the link: bounded depth, valid text.

`loads(data)` is `json.loads` with three guarantees on CPython and MicroPython:

- Every string it returns is valid Unicode that encodes to valid UTF-8: an escaped
  surrogate pair ("\\ud83d\\ude00", how CPython's json.dumps sends every emoji)
  becomes the one character it stands for, and a lone surrogate escape becomes
  U+FFFD. (MicroPython's json turns both into CESU bytes that the backend refuses
  with close code 1007; CPython's makes strs that cannot be encoded.) A \\u not
  followed by four hex digits is refused: MicroPython would decode it to garbage.
- Nesting deeper than `max_depth` is refused before the parser sees it.
- Whatever goes wrong is a ValueError with a short message (a MemoryError too,
  after the partial result is dropped), so the caller answers -32700.

NaN, Infinity and -Infinity are refused on both runtimes (JSON has no such
literals; CPython's json accepts them, MicroPython's does not).

Reading one member of text that `loads` refused or that memory cut short is
umcp.jsonpeek's (the failure paths).

The common message costs a few C-level scans beyond json.loads: one find for
"\\u" and four counts of brackets, and on MicroPython, whose own UTF-8 check looks only
at the shape of each character, one find for each lead byte that UTF-8 never has or
limits further. Only a message that has a \\u escape, more brackets than `max_depth`,
or such a lead byte pays for a Python-level pass over the suspects.
"""

import json
import sys

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


MAX_DEPTH = 32

_MICROPYTHON = sys.implementation.name == "micropython"

try:
    _RecursionError = RecursionError
except NameError:  # MicroPython raises RuntimeError
    _RecursionError = RuntimeError

if _MICROPYTHON:
    _decode = json.loads  # takes bytes, bytearray and memoryview; no NaN literals
else:

    def _refuse_constant(name):
        raise ValueError("%s is not JSON" % name)

    _decode_str = json.JSONDecoder(parse_constant=_refuse_constant).decode

    def _decode(buf):
        # json.loads decodes bytes with "surrogatepass", letting raw surrogates in: decode strictly.
        return _decode_str(buf if isinstance(buf, str) else str(buf, "utf-8"))


# Per byte: its value as a hex digit, or 16 if it is none.
_HEX = bytearray(b"\x10" * 256)
for _i in range(10):
    _HEX[48 + _i] = _i
for _i in range(6):
    _HEX[65 + _i] = 10 + _i
    _HEX[97 + _i] = 10 + _i
_HEX = bytes(_HEX)
del _i

_BACKSLASH = const(92)
_REPLACEMENT = const(b"\xef\xbf\xbd")  # U+FFFD in UTF-8


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
            _refuse_invalid_utf8(data)  # CPython's strict decode refuses what this does
        if escaped or deep:
            if text:
                buf = data.encode()  # byte offsets: MicroPython indexes a str by characters
            if escaped:
                buf = _fix_escapes(buf)
            if deep:
                _check_depth(buf, max_depth)
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


def _refuse_invalid_utf8(buf):
    """MicroPython checks only the shape of UTF-8 (a lead byte and its number of
    continuation bytes): surrogates, longer forms than needed and code points past
    U+10FFFF get into its strs, and from there back out in a reply the peer refuses.
    Raise ValueError if `buf` has any (C-level finds; a Python step only per E0, ED, F0
    or F4 byte, which few texts have)."""
    needle = _NEEDLE
    for lead in _NEVER:
        needle[0] = lead
        if buf.find(needle) >= 0:
            raise ValueError("invalid JSON: not UTF-8 text")
    n = len(buf)
    for i in range(0, len(_NARROW), 3):
        needle[0] = _NARROW[i]
        low, high = _NARROW[i + 1], _NARROW[i + 2]
        k = buf.find(needle)
        while k >= 0:
            if k + 1 < n and not low <= buf[k + 1] <= high:
                raise ValueError("invalid JSON: not UTF-8 text")
            k = buf.find(needle, k + 1)


def _fix_escapes(buf):
    """`buf`, or a rewritten copy, in which every real \\u escape has four hex
    digits and none is a surrogate: pairs become the UTF-8 bytes of the character
    they encode, lone surrogates those of U+FFFD (raises ValueError on a bad escape).

    Only the places where "\\u" occurs are visited; a copy is made at the first
    rewrite, and the rewritten text is never longer than the original.
    """
    hexval = _HEX
    n = len(buf)
    out = None  # the rewritten text, allocated at the first rewrite
    view = None
    written = 0  # bytes of out in use
    done = 0  # buf[:done] is in out
    k = buf.find(b"\\u")
    while k >= 0:
        if k + 6 <= n:
            a = hexval[buf[k + 2]]
            b = hexval[buf[k + 3]]
            if (a | b | hexval[buf[k + 4]] | hexval[buf[k + 5]]) < 16 and not (a == 13 and b >= 8):
                # Four hex digits outside D800-DFFF: fine, escape or literal text. The
                # digits hold no backslash, so the next escape starts past them.
                k = buf.find(b"\\u", k + 6)
                continue
        # A surrogate, a bad escape or literal text ("\\\\u": an escaped backslash and a u).
        run = 1
        while k - run >= 0 and buf[k - run] == _BACKSLASH:
            run += 1
        if not run & 1:  # this backslash is the second of a pair: no escape here
            k = buf.find(b"\\u", k + 1)
            continue
        if k + 6 > n:
            raise ValueError("invalid JSON: \\u needs four hex digits")
        a = hexval[buf[k + 2]]
        b = hexval[buf[k + 3]]
        if (a | b | hexval[buf[k + 4]] | hexval[buf[k + 5]]) > 15:
            raise ValueError("invalid JSON: \\u needs four hex digits")
        high = (a << 12) | (b << 8) | (hexval[buf[k + 4]] << 4) | hexval[buf[k + 5]]
        end = k + 6
        code = 0xFFFD
        if high < 0xDC00 and end + 6 <= n and buf[end] == _BACKSLASH and buf[end + 1] == 117:
            c = hexval[buf[end + 2]]
            d = hexval[buf[end + 3]]
            e = hexval[buf[end + 4]]
            f = hexval[buf[end + 5]]
            if (c | d | e | f) < 16 and c == 13 and d >= 12:
                low = (c << 12) | (d << 8) | (e << 4) | f
                code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                end += 6
        if out is None:
            out = bytearray(n)
            view = memoryview(out)
            source = memoryview(buf)
        size = k - done
        view[written:written + size] = source[done:k]
        written += size
        if code == 0xFFFD:
            view[written:written + 3] = _REPLACEMENT
            written += 3
        else:
            out[written] = 0xF0 | (code >> 18)
            out[written + 1] = 0x80 | ((code >> 12) & 0x3F)
            out[written + 2] = 0x80 | ((code >> 6) & 0x3F)
            out[written + 3] = 0x80 | (code & 0x3F)
            written += 4
        done = end
        k = buf.find(b"\\u", end)
    if out is None:
        return buf
    size = n - done
    view[written:written + size] = source[done:n]
    return view[:written + size]


def _check_depth(buf, max_depth):
    """Raise ValueError if containers in `buf` nest deeper than `max_depth`.

    Walks from string to string with find: between strings, bracket counts (in C)
    bound the depth, and only a stretch that could pass the limit is read byte by
    byte. Brackets inside strings do not count; a quote after an odd run of
    backslashes does not end a string. Linear in the length of `buf`.
    """
    if isinstance(buf, memoryview):
        buf = bytes(buf)  # find and count; only after a rewrite of a deep message
    n = len(buf)
    depth = 0
    i = 0
    while i < n:
        q = buf.find(b'"', i)
        if q < 0:
            q = n
        if q > i:
            opens = buf.count(b"[", i, q) + buf.count(b"{", i, q)
            if depth + opens > max_depth:
                for j in range(i, q):
                    c = buf[j]
                    if c == 91 or c == 123:  # [ {
                        depth += 1
                        if depth > max_depth:
                            raise ValueError("nesting deeper than %d" % max_depth)
                    elif c == 93 or c == 125:  # ] }
                        depth -= 1
            else:
                depth += opens - buf.count(b"]", i, q) - buf.count(b"}", i, q)
        # A string starts at q: find its closing quote.
        j = buf.find(b'"', q + 1)
        while j > 0:
            run = 0
            while buf[j - 1 - run] == _BACKSLASH:
                run += 1
            if not run & 1:
                break
            j = buf.find(b'"', j + 1)
        if j < 0:
            return  # unterminated: the parser says so
        i = j + 1
