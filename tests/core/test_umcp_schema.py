"""What only the host can check of umcp's schema: that the official MCP SDK's own models
accept every tools/list entry, result and tool name umcp makes, and that a result JSON
cannot carry is a TypeError (on MicroPython, json.dumps writes its repr instead). How the
schema, the entries and the results behave is portable
(tests/portable/test_portable_umcp_schema.py) and runs on every runtime."""

import json

import pytest
from mcp.shared.tool_name_validation import validate_tool_name
from mcp.types import CallToolResult, Tool

from umcp import BOOLEAN, INTEGER, NUMBER, STRING, ImageContent, McpTool, Property, PropertyList
from umcp.compat import join_pieces
from umcp.listing import entry_json
from umcp.result import error_result_pieces, result_pieces


def noop(args):
    return True


TOOLS = [
    McpTool("self.audio_speaker.set_volume", "Set the volume.", [Property("volume", INTEGER, minimum=0, maximum=100)],
            noop),
    McpTool("self.get_device_status", "Status", None, noop),
    McpTool("self.reboot", "Reboot", PropertyList(), noop, user_only=True),
    McpTool("t", "d", None, noop, title="Take a photo", read_only=False, open_world=True),
    McpTool("u", "d", None, noop, user_only=True, destructive=True, idempotent=False),
    McpTool("self.light", "打开灯光", [Property("level", NUMBER, default=1.5, minimum=0, maximum=2),
                                     Property("on", BOOLEAN), Property("q", STRING, default="")], noop),
    McpTool("self.lamp.turn_on", ("Turn on the %s (%d LEDs)", ("desk lamp", 8)), None, noop),
]


def test_the_sdk_takes_every_kind_of_entry():
    for tool in TOOLS:
        parsed = Tool.model_validate(json.loads(entry_json(tool)))
        assert parsed.name == tool.name
    hinted = Tool.model_validate(json.loads(entry_json(TOOLS[4])))
    assert hinted.annotations.destructive_hint is True and hinted.annotations.idempotent_hint is False


@pytest.mark.parametrize("value", [True, False, 42, -7, None, 'plain "text"\nwith newline',
                                   {"action": "RESPONSE", "n": [1, 2]}, [1, "a"], ImageContent(bytes(range(256)) * 3),
                                   ImageContent(memoryview(b"\x89PNG"), "image/png")])
def test_the_sdk_takes_every_kind_of_result(value):
    CallToolResult.model_validate(json.loads(join_pieces(result_pieces(value))))


def test_the_sdk_takes_an_error_result():
    assert CallToolResult.model_validate(json.loads(join_pieces(error_result_pieces('bad "quote"\n')))).is_error


@pytest.mark.parametrize("name", ["a", "self.audio_speaker.set_volume", "A-Z_0.9", "x" * 64])
def test_the_sdk_agrees_with_the_names_umcp_takes(name):
    validate_tool_name(McpTool(name, "d", None, noop).name)


def test_values_json_cannot_carry_raise_type_error():
    with pytest.raises(TypeError):
        result_pieces(object())
