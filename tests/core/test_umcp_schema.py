"""umcp schema, tool description and result shaping, checked against the MCP SDK's models."""

import base64
import json

import pytest
from mcp.shared.tool_name_validation import validate_tool_name
from mcp.types import CallToolResult, Tool

from umcp import BOOLEAN, INTEGER, NUMBER, STRING, ImageContent, InvalidParams, McpTool, Property, PropertyList
from umcp.compat import join_pieces
from umcp.listing import entry_json, input_schema, property_schema
from umcp.tool import error_result_pieces, result_pieces


def noop(args):
    return True


def entry(tool):
    """The tool's tools/list entry, parsed, after the SDK accepts it."""
    parsed = json.loads(entry_json(tool))
    Tool.model_validate(parsed)
    return parsed


def result(value):
    parsed = json.loads(join_pieces(result_pieces(value)))
    CallToolResult.model_validate(parsed)
    return parsed


# -- Property ---------------------------------------------------------------

def test_property_fragments():
    assert property_schema(Property("on", BOOLEAN)) == {"type": "boolean"}
    assert property_schema(Property("on", BOOLEAN, default=False)) == {"type": "boolean", "default": False}
    assert property_schema(Property("q", STRING, default="", description="Question")) == {
        "type": "string", "default": "", "description": "Question"}
    assert property_schema(Property("v", INTEGER, default=80, minimum=1, maximum=100)) == {
        "type": "integer", "default": 80, "minimum": 1, "maximum": 100}
    assert property_schema(Property("v", INTEGER, minimum=-5)) == {"type": "integer", "minimum": -5}


def test_property_without_default_is_required():
    assert Property("v", INTEGER).required
    assert not Property("v", INTEGER, default=0).required
    assert not Property("s", STRING, default="").required


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(type=STRING, minimum=0), "integers only"),
    (dict(type=BOOLEAN, maximum=1), "integers only"),
    (dict(type=INTEGER, default=101, minimum=0, maximum=100), "above the maximum 100"),
    (dict(type=INTEGER, default=-1, minimum=0), "below the minimum 0"),
    (dict(type=INTEGER, default="5"), "expected integer"),
    (dict(type=BOOLEAN, default=1), "expected boolean"),
    (dict(type=INTEGER, minimum=5, maximum=4), "above maximum"),
    (dict(type=INTEGER, minimum=True), "must be integers"),
    (dict(type="float"), "unknown type"),
    (dict(type=NUMBER, minimum=float("nan")), "must be numbers"),
    (dict(type=NUMBER, maximum=float("inf")), "must be numbers"),
    (dict(type=NUMBER, minimum=False), "must be numbers"),
    (dict(type=NUMBER, minimum=1.5, maximum=1.25), "above maximum"),
    (dict(type=NUMBER, default=2.5, maximum=2), "above the maximum 2"),
    (dict(type=NUMBER, default=True), "expected number"),
    (dict(type=NUMBER, default=float("nan")), "finite number"),
])
def test_property_programming_errors_raise_at_construction(kwargs, fragment):
    with pytest.raises(ValueError) as caught:
        Property("p", **kwargs)
    assert fragment in str(caught.value)


def test_property_list_refuses_duplicates_and_non_properties():
    with pytest.raises(ValueError, match="duplicate property a"):
        PropertyList([Property("a", STRING), Property("a", INTEGER)])
    with pytest.raises(ValueError):
        PropertyList(["a"])


def test_property_list_lookup_and_schema():
    props = PropertyList([Property("a", STRING), Property("b", INTEGER, default=1), Property("c", BOOLEAN)])
    assert props["b"].default == 1
    assert [p.name for p in props] == ["a", "b", "c"] and len(props) == 3
    assert input_schema(props)["required"] == ["a", "c"]
    with pytest.raises(KeyError):
        props["zz"]
    assert input_schema(PropertyList()) == {"type": "object", "properties": {}}


# -- argument checking --------------------------------------------------------

VOLUME = PropertyList([
    Property("volume", INTEGER, minimum=0, maximum=100),
    Property("mute", BOOLEAN, default=False),
    Property("label", STRING, default="main"),
])


def test_validate_fills_defaults_and_keeps_given_values():
    assert VOLUME.validate({"volume": 30}) == {"volume": 30, "mute": False, "label": "main"}
    assert VOLUME.validate({"volume": 0, "mute": True, "label": ""}) == {"volume": 0, "mute": True, "label": ""}


def test_validate_accepts_integral_floats_as_integers():
    args = VOLUME.validate({"volume": 50.0})
    assert args["volume"] == 50 and type(args["volume"]) is int


@pytest.mark.parametrize("arguments, message", [
    ({"volume": True}, "volume: expected integer, got boolean"),
    ({"volume": "50"}, "volume: expected integer, got string"),
    ({"volume": 50.5}, "volume: expected integer, got number"),
    ({"volume": float("inf")}, "volume: expected integer, got number"),
    ({"volume": None}, "volume: expected integer, got null"),
    ({"volume": [1]}, "volume: expected integer, got array"),
    ({"volume": 101}, "volume: 101 is above the maximum 100"),
    ({"volume": -1}, "volume: -1 is below the minimum 0"),
    ({"volume": 5, "mute": 1}, "mute: expected boolean, got number"),
    ({"volume": 5, "label": {}}, "label: expected string, got object"),
    ({}, "missing required argument volume"),
    ({"volume": 5, "vol": 5}, "unknown argument vol"),
    ([5], "arguments must be an object"),
])
def test_validate_refuses_with_a_message_naming_argument_and_bound(arguments, message):
    with pytest.raises(InvalidParams) as caught:
        VOLUME.validate(arguments)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


def test_validate_without_arguments_uses_defaults():
    props = PropertyList([Property("n", INTEGER, default=3)])
    assert props.validate(None) == {"n": 3}
    assert props.validate({}) == {"n": 3}


# -- McpTool ----------------------------------------------------------------

def test_tool_entry_matches_the_reference_shape():
    tool = McpTool("self.audio_speaker.set_volume", "Set the volume.",
                   [Property("volume", INTEGER, minimum=0, maximum=100)], noop)
    assert entry(tool) == {
        "name": "self.audio_speaker.set_volume",
        "description": "Set the volume.",
        "inputSchema": {
            "type": "object",
            "properties": {"volume": {"type": "integer", "minimum": 0, "maximum": 100}},
            "required": ["volume"],
        },
    }


def test_tool_without_properties_has_no_required_list_nor_annotations():
    parsed = entry(McpTool("self.get_device_status", "Status", None, noop))
    assert parsed["inputSchema"] == {"type": "object", "properties": {}}
    assert "annotations" not in parsed


def test_user_only_tool_has_audience_user():
    tool = McpTool("self.reboot", "Reboot", PropertyList(), noop, user_only=True)
    assert entry(tool)["annotations"] == {"audience": ["user"]}
    assert tool.user_only


def test_declared_hints_and_only_those():
    tool = McpTool("t", "d", None, noop, title="Take a photo", read_only=False, open_world=True)
    assert entry(tool)["annotations"] == {"title": "Take a photo", "readOnlyHint": False, "openWorldHint": True}
    tool = McpTool("t", "d", None, noop, user_only=True, destructive=True, idempotent=False)
    assert entry(tool)["annotations"] == {"audience": ["user"], "destructiveHint": True, "idempotentHint": False}
    parsed = Tool.model_validate(json.loads(entry_json(tool)))
    assert parsed.annotations.destructive_hint is True and parsed.annotations.idempotent_hint is False


def test_json_bytes_counts_utf8_bytes():
    tool = McpTool("self.light", "打开灯光", None, noop)
    assert tool.json_bytes == len(entry_json(tool).encode("utf-8"))
    assert json.loads(entry_json(tool))["description"] == "打开灯光"


@pytest.mark.parametrize("name", ["a", "self.audio_speaker.set_volume", "A-Z_0.9", "x" * 64])
def test_valid_tool_names(name):
    assert McpTool(name, "d", None, noop).name == name
    validate_tool_name(name)  # the SDK agrees


@pytest.mark.parametrize("name", ["", "x" * 65, "x" * 129, "has space", "a/b", "音量", "a,b", None, 5])
def test_invalid_tool_names_raise(name):
    with pytest.raises(ValueError):
        McpTool(name, "d", None, noop)


def test_tool_needs_a_callable():
    with pytest.raises(ValueError, match="not callable"):
        McpTool("t", "d", None, "noop")


# -- results --------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (True, "true"), (False, "false"), (42, "42"), (-7, "-7"), (None, "null"),
    ("plain \"text\"\nwith newline", "plain \"text\"\nwith newline"),
    ({"action": "RESPONSE", "n": [1, 2]}, '{"action":"RESPONSE","n":[1,2]}'),
    ([1, "a"], '[1,"a"]'),
])
def test_values_become_one_text_block(value, text):
    parsed = result(value)
    assert parsed == {"content": [{"type": "text", "text": text}], "isError": False}
    if not isinstance(value, str):
        assert json.loads(parsed["content"][0]["text"]) == value


def test_image_becomes_a_valid_mcp_image_block():
    jpeg = bytes(range(256)) * 3
    parsed = result(ImageContent(jpeg))
    block = parsed["content"][0]
    assert block["type"] == "image" and block["mimeType"] == "image/jpeg"
    assert base64.b64decode(block["data"], validate=True) == jpeg
    assert result(ImageContent(memoryview(b"\x89PNG"), "image/png"))["content"][0]["mimeType"] == "image/png"


def test_values_json_cannot_carry_raise_type_error():
    with pytest.raises(TypeError):
        result_pieces(object())


def test_error_result_carries_the_message():
    parsed = json.loads(join_pieces(error_result_pieces('bad "quote"\n')))
    assert parsed == {"content": [{"type": "text", "text": 'bad "quote"\n'}], "isError": True}
    assert CallToolResult.model_validate(parsed).is_error
