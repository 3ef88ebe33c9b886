# umcp schema, tool entries and results, as they behave inside MicroPython.
# Plain test functions with bare asserts: they run under pytest and on the device runners.

import json
from binascii import a2b_base64

from umcp import BOOLEAN, INTEGER, NUMBER, STRING, ImageContent, InvalidParams, McpTool, Property, PropertyList
from umcp.compat import join_pieces
from umcp.listing import entry_json, input_schema, property_schema
from umcp.result import error_result_pieces, result_pieces


def noop(args):
    return True


def raises(exception, fn, *args):
    """The message of the `exception` that fn(*args) raises (an AssertionError if none)."""
    try:
        fn(*args)
    except exception as e:
        return str(e)
    assert False, "%s not raised" % exception.__name__


def make_property(name, kind, kwargs):
    return Property(name, kind, **kwargs)


VOLUME = PropertyList([
    Property("volume", INTEGER, minimum=0, maximum=100),
    Property("mute", BOOLEAN, default=False),
    Property("label", STRING, default="main"),
])


def test_property_schema_fragments():
    assert property_schema(Property("on", BOOLEAN)) == {"type": "boolean"}
    assert property_schema(Property("on", BOOLEAN, default=False)) == {"type": "boolean", "default": False}
    assert property_schema(Property("v", INTEGER, minimum=-5)) == {"type": "integer", "minimum": -5}
    assert property_schema(Property("v", INTEGER, default=80, minimum=1, maximum=100)) == {
        "type": "integer", "default": 80, "minimum": 1, "maximum": 100}
    assert property_schema(Property("q", STRING, default="", description="d")) == {
        "type": "string", "default": "", "description": "d"}
    assert Property("v", INTEGER).required and not Property("v", INTEGER, default=1).required
    assert not Property("s", STRING, default="").required


def test_property_mistakes_raise_value_error():
    cases = [
        (STRING, {"minimum": 0}, "integers only"),
        (BOOLEAN, {"maximum": 1}, "integers only"),
        (INTEGER, {"default": 101, "minimum": 0, "maximum": 100}, "above the maximum 100"),
        (INTEGER, {"default": -1, "minimum": 0}, "below the minimum 0"),
        (INTEGER, {"default": "5"}, "expected integer"),
        (BOOLEAN, {"default": 1}, "expected boolean"),
        (INTEGER, {"minimum": 5, "maximum": 4}, "above maximum"),
        (INTEGER, {"minimum": True}, "must be integers"),
        ("float", {}, "unknown type"),
        (NUMBER, {"minimum": float("nan")}, "must be numbers"),
        (NUMBER, {"maximum": float("inf")}, "must be numbers"),
        (NUMBER, {"minimum": False}, "must be numbers"),
        (NUMBER, {"minimum": 1.5, "maximum": 1.25}, "above maximum"),
        (NUMBER, {"default": 2.5, "maximum": 2}, "above the maximum 2"),
        (NUMBER, {"default": True}, "expected number"),
        (NUMBER, {"default": float("nan")}, "finite number"),
    ]
    for kind, kwargs, fragment in cases:
        assert fragment in raises(ValueError, make_property, "p", kind, kwargs), (kind, kwargs)
    assert "duplicate property a" in raises(ValueError, PropertyList, [Property("a", STRING), Property("a", INTEGER)])
    raises(ValueError, PropertyList, ["a"])


def test_property_list_lookup_and_schema():
    props = PropertyList([Property("a", STRING), Property("b", INTEGER, default=1), Property("c", BOOLEAN)])
    assert props["b"].default == 1
    assert [p.name for p in props] == ["a", "b", "c"] and len(props) == 3
    assert input_schema(props)["required"] == ["a", "c"]
    raises(KeyError, props.__getitem__, "zz")
    assert input_schema(PropertyList()) == {"type": "object", "properties": {}}


def test_validation_fills_defaults():
    assert VOLUME.validate({"volume": 30}) == {"volume": 30, "mute": False, "label": "main"}
    assert VOLUME.validate({"volume": 0, "mute": True, "label": ""}) == {"volume": 0, "mute": True, "label": ""}
    props = PropertyList([Property("n", INTEGER, default=3)])
    assert props.validate(None) == {"n": 3} and props.validate({}) == {"n": 3}
    args = VOLUME.validate({"volume": 30.0})
    assert args["volume"] == 30 and type(args["volume"]) is int


def test_validation_messages_name_argument_and_bound():
    cases = [
        ({"volume": True}, "volume: expected integer, got boolean"),
        ({"volume": 5.5}, "volume: expected integer, got number"),
        ({"volume": float("inf")}, "volume: expected integer, got number"),
        ({"volume": "5"}, "volume: expected integer, got string"),
        ({"volume": None}, "volume: expected integer, got null"),
        ({"volume": [1]}, "volume: expected integer, got array"),
        ({"volume": 101}, "volume: 101 is above the maximum 100"),
        ({"volume": -1}, "volume: -1 is below the minimum 0"),
        ({"volume": 1, "mute": 0}, "mute: expected boolean, got number"),
        ({"volume": 5, "label": {}}, "label: expected string, got object"),
        ({}, "missing required argument volume"),
        ({"volume": 1, "vol": 1}, "unknown argument vol"),
        ("x", "arguments must be an object"),
        ([5], "arguments must be an object"),
    ]
    for arguments, message in cases:
        assert raises(InvalidParams, VOLUME.validate, arguments) == message
        assert isinstance(InvalidParams(message), ValueError)


def test_tool_entry_and_annotations():
    tool = McpTool("self.audio_speaker.set_volume", "Set volume", [Property("volume", INTEGER, minimum=0, maximum=100)],
                   noop)
    assert json.loads(entry_json(tool)) == {
        "name": "self.audio_speaker.set_volume", "description": "Set volume",
        "inputSchema": {"type": "object", "properties": {"volume": {"type": "integer", "minimum": 0, "maximum": 100}},
                        "required": ["volume"]}}
    plain = json.loads(entry_json(McpTool("t", "d", None, noop)))
    assert plain["inputSchema"] == {"type": "object", "properties": {}} and "annotations" not in plain
    user = json.loads(entry_json(McpTool("self.reboot", "d", None, noop, user_only=True, destructive=True)))
    assert user["annotations"] == {"audience": ["user"], "destructiveHint": True}
    reboot = McpTool("self.reboot", "Reboot", PropertyList(), noop, user_only=True)
    assert json.loads(entry_json(reboot))["annotations"] == {"audience": ["user"]} and reboot.user_only
    photo = McpTool("t", "d", None, noop, title="Take a photo", read_only=False, open_world=True)
    assert json.loads(entry_json(photo))["annotations"] == {"title": "Take a photo", "readOnlyHint": False,
                                                             "openWorldHint": True}
    chosen = McpTool("t", "d", None, noop, user_only=True, destructive=True, idempotent=False)
    assert json.loads(entry_json(chosen))["annotations"] == {"audience": ["user"], "destructiveHint": True,
                                                              "idempotentHint": False}
    hinted = json.loads(entry_json(McpTool("t", "d", None, noop, title="T", read_only=False, idempotent=True)))
    assert hinted["annotations"] == {"title": "T", "readOnlyHint": False, "idempotentHint": True}


def test_tools_without_parameters_share_one_list_that_cannot_grow():
    first = McpTool("a", "d", None, noop)
    second = McpTool("b", "d", PropertyList([]), noop)
    assert first.properties is second.properties and len(first.properties) == 0
    assert first.properties.validate({}) == {}
    assert raises(InvalidParams, first.properties.validate, {"x": 1}) == "unknown argument x"
    grew = True
    try:
        first.properties.add(Property("x", INTEGER))
    except AttributeError:
        grew = False
    assert not grew and len(second.properties) == 0
    # A tool with parameters keeps its own list.
    third = McpTool("c", "d", [Property("x", INTEGER)], noop)
    assert third.properties is not first.properties and len(third.properties) == 1


def test_a_description_template_is_formatted_when_the_entry_is_written():
    values = ("desk lamp", 8)
    tool = McpTool("self.lamp.turn_on", ("Turn on the %s (%d LEDs)", values), None, noop)
    assert tool.description[1] is values  # kept as given: no formatted string on the heap
    entry = json.loads(entry_json(tool))
    assert entry["description"] == "Turn on the desk lamp (8 LEDs)"
    assert tool.json_bytes == len(entry_json(tool).encode())
    one = McpTool("self.a.x", ("Read the %s", "a"), None, noop)
    assert json.loads(entry_json(one))["description"] == "Read the a"


def test_tools_with_the_same_hints_share_them():
    first = McpTool("a", "d", None, noop, idempotent=True, destructive=False)
    second = McpTool("b", "d", None, noop, idempotent=True, destructive=False)
    other = McpTool("c", "d", None, noop, read_only=True)
    assert first.hints is second.hints and other.hints is not first.hints
    assert json.loads(entry_json(second))["annotations"] == {"destructiveHint": False, "idempotentHint": True}
    assert json.loads(entry_json(other))["annotations"] == {"readOnlyHint": True}
    titled = McpTool("d", "d", None, noop, title="T", read_only=True)
    assert json.loads(entry_json(titled))["annotations"] == {"title": "T", "readOnlyHint": True}


def test_tool_json_size_is_in_utf8_bytes():
    tool = McpTool("self.light.on", "打开灯光", None, noop)
    assert tool.json_bytes == len(entry_json(tool).encode())
    assert tool.json_bytes > len(entry_json(tool)) or "\\u" in entry_json(tool)
    assert json.loads(entry_json(tool))["description"] == "打开灯光"


def test_tool_names():
    # At most 64: the portable form (umcp.names) some clients need is as long as the name.
    for name in ("a", "self.x-y_z.9", "self.audio_speaker.set_volume", "A-Z_0.9", "n" * 64):
        assert McpTool(name, "d", None, noop).name == name
    for name in ("", "n" * 65, "n" * 129, "a b", "a/b", "a,b", "音量", None, 5):
        assert raises(ValueError, McpTool, name, "d", None, noop), name
    assert "not callable" in raises(ValueError, McpTool, "t", "d", None, "noop")


def test_results_become_content_blocks():
    for value, text in ((True, "true"), (False, "false"), (7, "7"), (42, "42"), (-7, "-7"), (None, "null"),
                        ("a \"b\"\n", "a \"b\"\n")):
        assert json.loads(join_pieces(result_pieces(value))) == {
            "content": [{"type": "text", "text": text}], "isError": False}
    for value in ({"k": [1, 2]}, {"action": "RESPONSE", "n": [1, 2]}, [1, "a"]):
        parsed = json.loads(join_pieces(result_pieces(value)))
        assert json.loads(parsed["content"][0]["text"]) == value and parsed["isError"] is False
    image = json.loads(join_pieces(result_pieces(ImageContent(b"\xff\xd8\xff\xe0"))))
    assert image["content"] == [{"type": "image", "data": "/9j/4A==", "mimeType": "image/jpeg"}]
    jpeg = bytes(range(256)) * 3
    block = json.loads(join_pieces(result_pieces(ImageContent(jpeg))))["content"][0]
    assert a2b_base64(block["data"].encode()) == jpeg
    png = json.loads(join_pieces(result_pieces(ImageContent(memoryview(b"\x89PNG"), "image/png"))))
    assert png["content"][0]["mimeType"] == "image/png"
    failure = json.loads(join_pieces(error_result_pieces("bad \"x\"")))
    assert failure == {"content": [{"type": "text", "text": "bad \"x\""}], "isError": True}


def test_number_property_schema_and_checks():
    gain = Property("gain", NUMBER, default=1, minimum=0.5, maximum=2.5, description="dB")
    assert property_schema(gain) == {"type": "number", "description": "dB", "default": 1.0, "minimum": 0.5, "maximum": 2.5}
    assert gain.default == 1.0 and type(gain.default) is float
    props = PropertyList([gain])
    assert props.validate({}) == {"gain": 1.0}
    args = props.validate({"gain": 2})  # an int is a number; the callback gets a float
    assert args["gain"] == 2.0 and type(args["gain"]) is float
    assert props.validate(json.loads('{"gain": 0.5}'))["gain"] == 0.5
    assert "expected number, got boolean" in raises(InvalidParams, props.validate, {"gain": True})
    assert "expected number, got string" in raises(InvalidParams, props.validate, {"gain": "1"})
    assert "below the minimum 0.5" in raises(InvalidParams, props.validate, {"gain": 0.25})
    assert "above the maximum 2.5" in raises(InvalidParams, props.validate, {"gain": 3})
    for bad in (float("nan"), float("inf"), -float("inf")):
        assert "finite number" in raises(InvalidParams, props.validate, {"gain": bad})
    free = Property("x", NUMBER)
    assert free.required and property_schema(free) == {"type": "number"}
    assert free.check(-1e30) == -1e30


def test_number_property_mistakes_raise_value_error():
    assert "must be numbers" in raises(ValueError, make_property, "p", NUMBER, {"minimum": True})
    assert "must be numbers" in raises(ValueError, make_property, "p", NUMBER, {"maximum": float("nan")})
    assert "above the maximum 1" in raises(ValueError, make_property, "p", NUMBER, {"default": 1.5, "maximum": 1})
    assert "finite number" in raises(ValueError, make_property, "p", NUMBER, {"default": float("inf")})
    # an INTEGER's bounds stay integers
    assert "must be integers" in raises(ValueError, make_property, "p", INTEGER, {"minimum": 0.5})
