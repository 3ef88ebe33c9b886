# umcp.jsonin: what arrives over the link becomes valid text within a bounded depth, on
# CPython and inside MicroPython alike (the same cases run in both).
import gc
import json
import sys

from umcp.jsonin import loads

MICROPYTHON = sys.implementation.name == "micropython"
EMOJI = "\U0001F600"
FFFD = "\ufffd"


def refuses(text, fragment="", **kw):
    try:
        value = loads(text, **kw)
    except ValueError as e:
        assert fragment in str(e), str(e)
        return
    raise AssertionError("accepted %r: %r" % (text, value))


def valid_text(value):
    """Every str in `value` encodes to UTF-8 without surrogate bytes (ED A0-BF)."""
    if isinstance(value, str):
        raw = value.encode()
        k = raw.find(b"\xed")
        while k >= 0:
            if raw[k + 1] >= 0xA0:
                return False
            k = raw.find(b"\xed", k + 1)
        return True
    if isinstance(value, list):
        return all(valid_text(v) for v in value)
    if isinstance(value, dict):
        return all(valid_text(k) and valid_text(value[k]) for k in value)
    return True


PLAIN = [
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"self.x","arguments":{"r":255,"g":0}}}',
    '{"session_id":"abc","type":"mcp","payload":{"jsonrpc":"2.0","id":1,"method":"initialize"}}',
    '{"jsonrpc":"2.0","id":"s-1","method":"ping"}',
    '[1, -2, 3.5, true, false, null, "", {}, []]',
    '{"a":"caf\u00e9 \u4e2d\u6587","b":"tab\\there \\"q\\" \\\\ \\/"}',
    '"\\u00e9\\u4E2D\\u0041"',
    ' {"nested": {"list": [[1], [2, [3]]]}} ',
]


def test_plain_messages_parse_as_json_does_from_every_kind_of_buffer():
    for text in PLAIN:
        want = json.loads(text)
        for data in (text, text.encode(), bytearray(text.encode()), memoryview(text.encode())):
            assert loads(data) == want, text


def test_an_escaped_surrogate_pair_is_one_character():
    for data in ('{"q":"hi \\ud83d\\ude00!"}', b'{"q":"hi \\ud83d\\ude00!"}'):
        value = loads(data)["q"]
        assert value == "hi " + EMOJI + "!" and len(value) == 5
        assert value.encode() == b"hi \xf0\x9f\x98\x80!"


# (JSON text, what it must give): pairs joined, lone surrogates replaced, escaped
# backslashes left alone.
SURROGATES = [
    ('"\\uD83D\\uDE00"', EMOJI),
    ('"\\ud83d\\ude00\\ud83d\\ude01"', EMOJI + "\U0001F601"),
    ('"\\udbff\\udfff"', "\U0010FFFF"),
    ('"\\ud800\\udc00"', "\U00010000"),
    ('"\\ud83d"', FFFD),
    ('"a\\ud83dxyz"', "a" + FFFD + "xyz"),
    ('["\\ud83d"]', [FFFD]),
    ('"\\ud83d\\ud83d\\ude00"', FFFD + EMOJI),
    ('"\\ude00x"', FFFD + "x"),
    ('"\\ude00\\ud83d"', FFFD + FFFD),
    ('"\\ud83d\\n\\ude00"', FFFD + "\n" + FFFD),
    ('"\\ud83d\\u0041\\ude00"', FFFD + "A" + FFFD),
    ('["\\ud83d","\\ude00"]', [FFFD, FFFD]),
    ('"\\\\ud83d"', "\\ud83d"),
    ('"\\\\ud83d\\\\ude00"', "\\ud83d\\ude00"),
    ('"\\\\\\ud83d\\ude00"', "\\" + EMOJI),
    ('"\\\\\\\\ud83d"', "\\\\ud83d"),
    ('{"\\ud83d\\ude00":"\\ud83d","k\\udc00":1}', {EMOJI: FFFD, "k" + FFFD: 1}),
    ('"\\u00e9\\ud83d\\ude00\\u4e2d\\u0000"', "\u00e9" + EMOJI + "\u4e2d\x00"),
    ('"\\ud55c\\uD7A3"', "\ud55c\ud7a3"),
    ('{"a":"' + EMOJI + '\\ud83d\\ude00"}', {"a": EMOJI + EMOJI}),
]


def test_surrogate_escapes_become_valid_text():
    for text, want in SURROGATES:
        got = loads(text)
        assert got == want, text
        assert valid_text(got), text
        assert loads(text.encode()) == want, text


def test_a_bad_unicode_escape_is_refused():
    for text in ('"\\u12"', '"\\u=800"', '"\\ud83d\\uzzzz"'):
        refuses(text, "four hex")
    refuses('"\\u', "invalid JSON")
    refuses(b'"\xed\xa0\xbd"', "not UTF-8")  # a surrogate's raw bytes
    refuses(b'"\xff"', "not UTF-8")


def test_bytes_that_are_not_utf_8_are_refused_on_both_runtimes():
    # MicroPython's own check takes any lead byte with its number of continuation bytes:
    # these would reach its strs and go back out in a reply the peer refuses.
    for raw in (b"\xc0\x80", b"\xc1\xbf",  # a shorter form's character, in two bytes
                b"\xe0\x80\xaf", b"\xf0\x80\x80\x80",  # likewise in three and four
                b"\xed\xbf\xbf",  # a surrogate
                b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf7\xbf\xbf\xbf"):  # past U+10FFFF
        refuses(b'{"id":"a' + raw + b'b"}', "not UTF-8")
    # Their neighbours that are characters pass: U+0800, U+0904, U+D7FF, U+10000, U+10FFFF.
    for raw, char in ((b"\xe0\xa0\x80", "\u0800"), (b"\xe0\xa4\x84", "\u0904"),
                      (b"\xed\x9f\xbf", "\ud7ff"), (b"\xf0\x90\x80\x80", "\U00010000"),
                      (b"\xf4\x8f\xbf\xbf", "\U0010ffff")):
        assert loads(b'{"id":"a' + raw + b'"}') == {"id": "a" + char}, raw


def nest(n):
    return "[" * n + "]" * n


def nest_obj(n):
    return '{"a":' * n + "1" + "}" * n


def test_nesting_is_bounded_at_max_depth():
    assert loads(nest(32)) == json.loads(nest(32))
    refuses(nest(33), "nesting deeper than 32")
    assert loads(nest_obj(32)) == json.loads(nest_obj(32))
    refuses(nest_obj(33), "nesting deeper than 32")
    mixed = '{"a":[' * 16 + "1" + "]}" * 16
    assert loads(mixed) == json.loads(mixed)
    refuses("[" + mixed + "]", "nesting deeper than 32")
    assert loads("[[[1]]]", max_depth=3) == [[[1]]]
    refuses("[[[[1]]]]", "nesting deeper than 3", max_depth=3)
    assert loads("[" + ",".join(["[[1]]"] * 50) + "]", max_depth=3) == [[[1]]] * 50


def test_brackets_inside_strings_do_not_count():
    assert loads('["' + "[" * 40 + '"]') == ["[" * 40]
    assert loads('["\\"' + "[" * 40 + '"]') == ['"' + "[" * 40]
    assert loads('["\\\\", "' + "[" * 40 + '"]') == ["\\", "[" * 40]
    hidden = "[" * 30 + '"]]]]]]]]]"' + "]" * 30
    assert loads(hidden) == json.loads(hidden)
    refuses("[" * 33 + '"]]]]]]]]]]"' + "]" * 33, "nesting deeper")
    deep_pair = "[" * 32 + '"\\ud83d\\ude00"' + "]" * 32
    assert loads(deep_pair) == json.loads("[" * 32 + '"' + EMOJI + '"' + "]" * 32)


def test_very_deep_text_is_refused_without_recursion():
    for text in (nest(1000), nest_obj(1000), nest(5000), "[" * 1000):
        refuses(text, "nesting deeper")


def test_what_is_not_json_is_refused_with_a_reason():
    for text in ('{"a":[1,2', '{"a":"abc', '{"a":"\\', "", "  ", '{"a":1} x', "{'a':1}"):
        refuses(text, "invalid JSON")
    for text in ("NaN", "[Infinity]", '{"a":-Infinity}'):  # JSON has no such literals
        refuses(text, "invalid JSON")
    try:
        loads(12)
        raise AssertionError("accepted a number as JSON text")
    except TypeError:
        pass


def test_what_json_allows_passes():
    assert loads('{"a":1,"a":2}') == {"a": 2}  # the last of duplicate keys
    assert loads('"a\\u0000b"') == "a\x00b"
    assert loads("123456789012345678901234567890") == 123456789012345678901234567890


_PIECES = ['\\ud83d', '\\ude00', '\\u00e9', '\\\\', '\\"', '"', "[", "]", "{", "}", ",", ":", "u",
           "d83d", "\\", "1", "x", "\\n", EMOJI]
_BASE = '{"a":["\\ud83d\\ude00",{"b":"x\\\\ud83d"}],"c":"\\u00e9"}'


def test_mutated_text_gives_valid_text_or_a_value_error():
    seed = 12345
    for _ in range(300):
        text = _BASE
        for _ in range(4):
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            at = seed % (len(text) + 1)
            if seed & 3:
                text = text[:at] + _PIECES[(seed >> 8) % len(_PIECES)] + text[at:]
            else:
                text = text[:at] + text[at + 1 + (seed >> 4) % 3:]
        try:
            value = loads(text)
        except ValueError:
            continue
        assert valid_text(value), text


def test_the_heap_returns_to_its_baseline_after_refusals():
    if not MICROPYTHON or sys.platform == "webassembly":
        # gc.mem_alloc is MicroPython's; the WebAssembly build's collector keeps what the
        # JS side may still see (even a bytearray made and dropped per call grows it).
        return
    big = nest(4000).encode()  # 8 KB: keeping any of it, or a copy, shows
    refuses(big, "nesting deeper")  # a first round settles what is allocated once
    gc.collect()
    before = gc.mem_alloc()
    for _ in range(3):
        refuses(big, "nesting deeper")
        assert loads(b'{"q":"\\ud83d\\ude00\\ud83d"}') == {"q": EMOJI + FFFD}
    gc.collect()
    assert gc.mem_alloc() - before <= 64, gc.mem_alloc() - before


def test_only_an_escaped_or_deep_message_loads_the_repairs_and_only_for_itself():
    from umcp import compat

    sys.modules.pop("umcp.jsonfix", None)
    assert loads('{"a":[1,2],"b":"plain \xe9"}') == {"a": [1, 2], "b": "plain \xe9"}
    assert "umcp.jsonfix" not in sys.modules
    assert loads('{"t":"\\ud83d\\ude00"}') == {"t": EMOJI}
    refuses("[" * 40 + "]" * 40, "nesting deeper than 32")
    # Dropped again where modules are forgotten (MicroPython): the next such message loads it.
    assert ("umcp.jsonfix" in sys.modules) is not compat.FORGET


def test_an_object_or_list_cut_short_is_refused_on_every_release():
    # MicroPython 1.24's json.loads takes '{"id":4' for whole; umcp.jsonin.closed() says it
    # is not (and a text that ends as one may, blanks aside, go on to the parser).
    from umcp.jsonin import closed

    for text in ('{"jsonrpc":"2.0","id":4', "{", "[1, 2", '{"a": [1]'):
        assert not closed(text) and not closed(text.encode()), text
        try:
            loads(text)
        except ValueError as e:
            assert str(e).startswith("invalid JSON"), e
        else:
            assert False, text
    for text in ('{"a": 1}', '[1]\r\n ', ' {"a": "}"}\t'):
        assert closed(text) and closed(text.encode()), text
