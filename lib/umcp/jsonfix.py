"""What umcp.jsonin does to a message with a \\u escape or more brackets than its depth
limit, before json.loads sees it: loaded for such a message and dropped after (a message
of plain text, the common one, never loads it). See umcp.jsonin for why."""

from .compat import const

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


def repair(buf, escaped, deep, max_depth):
    """`buf` (bytes-like) with its escapes fixed where `escaped` (fix_escapes), checked for
    depth where `deep` (check_depth): what json.loads is then given."""
    if escaped:
        buf = fix_escapes(buf)
    if deep:
        check_depth(buf, max_depth)
    return buf


def fix_escapes(buf):
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


def check_depth(buf, max_depth):
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
