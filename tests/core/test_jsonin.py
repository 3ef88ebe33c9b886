"""umcp.jsonin against CPython's json: the same objects where the text is JSON, a
ValueError where it is not, and never a str that cannot be encoded; on CPython and
under the MicroPython unix port. (The shared cases are
tests/portable/test_portable_jsonin.py.)"""

import asyncio
import binascii
import json
import random

import pytest

from tests.support.mpyclients import run_script
from umcp.jsonin import loads

EMOJI = "\U0001F600"


def test_what_cpython_json_dumps_makes_comes_back_whole():
    rng = random.Random(7)
    alphabet = "aZ09 \"\\/\n\t\u00e9\u4e2d\U0001F600\U0001F680\U00010000\U0010FFFF\ud55c"
    for _ in range(500):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        message = {"jsonrpc": "2.0", "id": s, "params": {s: [s]}}
        for text in (json.dumps(message), json.dumps(message, ensure_ascii=False)):
            got = loads(text)
            assert got == message
            json.dumps(got, ensure_ascii=False).encode()  # encodable


def test_lone_surrogates_become_encodable():
    got = loads(json.dumps({"a": "x\ud83dy\ude00", "\udfff": 1}))
    assert got == {"a": "x\ufffdy\ufffd", "\ufffd": 1}
    json.dumps(got, ensure_ascii=False).encode()


def test_recursion_past_cpythons_limit_is_a_value_error():
    with pytest.raises(ValueError, match="nesting too deep"):
        loads("[" * 100000 + "]" * 100000, max_depth=10 ** 6)


def test_cpythons_big_int_limit_is_invalid_json():
    with pytest.raises(ValueError, match="invalid JSON"):
        loads("1" * 5000)


BASES = [
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":'
    '{"q":"caf\\u00e9 \\ud83d\\ude00","n":[1,2,{"k":null}]}}}',
    '[["\\\\u0041",true],{"a":"[{\\"]","b":-12}]',
    '{"a":"\\ud83d\\ude00\\\\ud83d","b":["x","y"],"c":{}}',
]
PIECES = ["\\ud83d", "\\ude00", "\\udbff", "\\u00e9", "\\\\", '\\"', '"', "[", "]", "{", "}", ",",
          ":", "u", "d83d", "\\", "1", "-", "x", "\\n", EMOJI, "\u00e9", " ", "null", "\\u"]


def mutations(count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        text = rng.choice(BASES)
        for _ in range(rng.randrange(1, 5)):
            at = rng.randrange(len(text) + 1)
            if rng.random() < 0.7:
                text = text[:at] + rng.choice(PIECES) + text[at:]
            else:
                text = text[:at] + text[at + rng.randrange(1, 4):]
        yield text


def reference(text):
    """What loads must give, from CPython's json (None: it must refuse): pairs joined
    by json, the lone surrogates left over as U+FFFD."""
    try:
        return _replace_lone(json.loads(text))
    except ValueError:
        return None


def _replace_lone(value):
    if isinstance(value, str):
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, list):
        return [_replace_lone(v) for v in value]
    if isinstance(value, dict):
        return {_replace_lone(k): _replace_lone(v) for k, v in value.items()}
    return value


def test_mutated_messages_agree_with_cpython_json():
    agreed = refused = 0
    for text in mutations(3000, 1):
        want = reference(text)
        if want is None:
            with pytest.raises(ValueError):
                loads(text)
            refused += 1
        else:
            assert loads(text) == want, text
            assert loads(text.encode()) == want, text
            agreed += 1
    assert agreed > 300 and refused > 300


def test_mutated_messages_under_micropython_agree_or_stay_valid_text(tmp_path):
    texts = list(mutations(1500, 2))
    cases = tmp_path / "cases.hex"
    cases.write_text("".join(binascii.hexlify(t.encode()).decode() + "\n" for t in texts))
    # Each line the script prints went through CPython's strict json here: no surrogates.
    results = asyncio.run(run_script("jsonindiff.py", cases, heapsize="2M"))
    assert len(results) == len(texts)
    lenient = 0
    for text, result in zip(texts, results):
        want = reference(text)
        if "ok" in result:
            if want is None:
                lenient += 1  # MicroPython's json takes [1,] and 01: still valid text
            else:
                assert result["ok"] == want, text
        else:
            assert want is None, (text, result)
    assert lenient < len(texts) // 4
