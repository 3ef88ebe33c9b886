"""Names and descriptions that survive the trip to the assistant's LLM.

xiaozhi-esp32-server's MCP endpoint client (core/providers/tools/mcp_endpoint/) turns each
tool of a provider into an LLM function: the name through sanitize_tool_name
(`[^a-zA-Z0-9_\\-\\u4e00-\\u9fff]` -> `_`, so self.audio_speaker.set_volume becomes
self_audio_speaker_set_volume), kept in a dict by that name, mapped back to the original
for tools/call; every description gets each original name replaced by its sanitized one;
the parameters keep only inputSchema's type, properties and required. The rule is written
again here (not imported: it is the assistant's code), and every board's tools, as its
endpoint offers them, must come out as usable function names: distinct, within what LLM
APIs take (`^[a-zA-Z0-9_-]{1,64}$`: the server lets CJK through, OpenAI's API does not),
mapped back to themselves, their arguments intact."""

import asyncio
import json
import re

import pytest

import hwsim
from devsvc.settings import Settings
from mcplink.endpoint import offered_tools
from umcp import McpServer
from umcp.compat import join_pieces
from umcpfw.boot import load_board
from umcpfw.commontools import CommonTools

BOARDS = ["host", "esp32_s3_box3", "m5stack_cores3", "esp32s3_cam"]
LLM_FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
SCHEMA_KEYS_KEPT = ("type", "properties", "required")


def sanitize_tool_name(name):
    """xiaozhi-esp32-server's core/utils/util.py rule."""
    return re.sub(r"[^a-zA-Z0-9_\-\u4e00-\u9fff]", "_", name)


def as_llm_functions(tools):
    """What the endpoint client makes of a tools/list (mcp_endpoint_handler.py and
    mcp_endpoint_client.py): {function name: function}, and {function name: tool name}."""
    functions, mapping = {}, {}
    for tool in tools:
        name = sanitize_tool_name(tool["name"])
        schema = tool.get("inputSchema") or {}
        functions[name] = {"name": name, "description": tool.get("description", ""), "parameters": {
            "type": schema.get("type", "object"), "properties": schema.get("properties", {}),
            "required": [r for r in schema.get("required", []) if isinstance(r, str)]}}
        mapping[name] = tool["name"]
    for function in functions.values():
        for sanitized, original in mapping.items():
            function["description"] = function["description"].replace(original, sanitized)
    return functions, mapping


def endpoint_tools(board_name, tmp_path, choice=None):
    """The board's tools as its endpoint offers them (every tools/list page)."""
    hwsim.reset()
    settings = Settings(str(tmp_path / ("%s.json" % board_name)))
    board = load_board(board_name).create({}, settings)
    server = McpServer(name=board_name, version="9")
    tools = CommonTools(server, board, settings, "9", lambda delay: None, "24:0a:c4:12:34:56", "c")
    tools.register()
    board.register_tools(server)
    sent = []
    session = server.session(lambda pieces: sent.append(json.loads(join_pieces(pieces))),
                             offered=offered_tools(choice))

    async def list_all():
        tools, cursor = [], None
        while True:
            params = {"cursor": cursor} if cursor else {}
            await session.handle({"jsonrpc": "2.0", "id": "x_n_2", "method": "tools/list", "params": params})
            result = sent[-1]["result"]
            tools += result["tools"]
            cursor = result.get("nextCursor")
            if not cursor:
                return tools

    try:
        return asyncio.run(list_all())
    finally:
        hwsim.reset()


@pytest.mark.parametrize("board", BOARDS)
def test_every_boards_tools_come_out_as_usable_llm_functions(board, tmp_path):
    tools = endpoint_tools(board, tmp_path)
    every_name = [tool["name"] for tool in endpoint_tools(board, tmp_path, choice=["self."])]
    functions, mapping = as_llm_functions(tools)
    assert len(functions) == len(tools)  # no two names merge into one function
    for name, function in functions.items():
        assert LLM_FUNCTION_NAME.match(name), name
        tool = next(t for t in tools if t["name"] == mapping[name])  # mapped back for tools/call
        description = function["description"]
        assert description.strip()
        # A tool named in a description is named as the LLM knows it, and is there to call.
        for other in every_name:  # user-only ones too
            if other in tool["description"]:
                assert sanitize_tool_name(other) in functions, (name, other)
                assert other not in description or other == sanitize_tool_name(other)
                assert sanitize_tool_name(other) in description
        schema = tool["inputSchema"]
        # Nothing that matters is dropped with the rest of the schema: the properties keep
        # their own types and bounds, and the board refuses whatever else (additionalProperties).
        assert set(schema) - set(SCHEMA_KEYS_KEPT) <= {"additionalProperties"}
        assert function["parameters"]["properties"] == schema.get("properties", {})
        assert function["parameters"]["required"] == schema.get("required", [])
        for prop in function["parameters"]["properties"].values():
            assert prop["type"] in ("string", "integer", "number", "boolean") and prop.get("description", "x")


def test_the_rule_as_the_assistant_applies_it():
    functions, mapping = as_llm_functions([
        {"name": "self.lamp.set", "description": "Use self.lamp.set_color for colours.",
         "inputSchema": {"type": "object", "properties": {}}},
        {"name": "self.lamp.set_color", "description": "Set the colour.", "inputSchema": {}},
        {"name": "灯.打开", "description": "开灯"},
    ])
    assert sorted(functions) == ["self_lamp_set", "self_lamp_set_color", "灯_打开"]
    assert functions["self_lamp_set"]["description"] == "Use self_lamp_set_color for colours."
    assert mapping["self_lamp_set_color"] == "self.lamp.set_color"
    assert not LLM_FUNCTION_NAME.match("灯_打开")  # through the server, refused by OpenAI's API
    # Two names that differ only in punctuation become one function: the later one wins.
    merged, _ = as_llm_functions([{"name": "self.fan.on", "description": "a"},
                                  {"name": "self_fan.on", "description": "b"}])
    assert list(merged) == ["self_fan_on"] and merged["self_fan_on"]["description"] == "b"


def test_a_maker_can_offer_only_the_boards_own_tools(tmp_path):
    # The assistant's own speaker has self.get_device_status, self.audio_speaker.* and
    # self.screen.* too: the endpoint's functions come after the speaker's and replace
    # them in its function list, so a lamp board offers just its lamp.
    tools = endpoint_tools("esp32s3_cam", tmp_path, choice=["self.lamp."])
    assert sorted(as_llm_functions(tools)[0]) == ["self_lamp_get_state", "self_lamp_turn_off", "self_lamp_turn_on"]
