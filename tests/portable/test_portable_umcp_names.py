# Tool names every client accepts (umcp.names), string enums, output schemas and
# structuredContent. Runs under pytest and inside MicroPython.

import json

from umcp import STRING, McpServer, McpTool, Property
from umcp.compat import join_pieces
from umcp.names import MAX_PORTABLE, is_portable, portable, same
from umcp.schema import InvalidParams
from umcp.listing import entry_json, property_schema
from umcp.result import result_pieces
from portable_support import raises, settle

STATUS_SCHEMA = '{"type":"object","properties":{"volume":{"type":"integer"}},"required":["volume"]}'


def noop(args):
    return True


def test_the_portable_form_of_a_name():
    assert portable("self.audio_speaker.set_volume") == "self_audio_speaker_set_volume"
    assert portable("plain-name_9") == "plain-name_9"
    assert portable("a:b/c d") == "a_b_c_d"  # names from elsewhere (the bridge's devices)
    assert portable("音量.x") == "___x"
    for name in ("a", "A-z_0", "x" * MAX_PORTABLE):
        assert is_portable(name), name
    for name in ("", "a.b", "x" * (MAX_PORTABLE + 1), "a b", "音", None, 5):
        assert not is_portable(name), name


def test_names_with_one_portable_form_are_the_same():
    assert same("self.a_b", "self_a.b") and same("self.a.b", "self_a_b")
    assert same("x", "x")
    assert not same("self.a-b", "self.a_b") and not same("ab", "abc") and not same("a.b", "a_c")
    assert not same("a.b", "音音")  # as many characters, other bytes


def test_the_server_refuses_a_tool_whose_portable_name_is_taken():
    server = McpServer()
    server.add_tool("self.screen.set_theme", "d", None, noop)
    try:
        server.add_tool("self.screen_set.theme", "d", None, noop)
    except ValueError as e:
        assert "self.screen.set_theme" in str(e) and "without dots" in str(e)
    else:
        assert False, "two tools with one portable name"
    assert raises(ValueError, server.add_tool, "self.screen.set_theme", "d", None, noop)
    assert raises(ValueError, server.add_tool, "t" * (MAX_PORTABLE + 1), "d", None, noop)
    assert [tool.name for tool in server.tools] == ["self.screen.set_theme"]


async def _ask(server, session, message):
    """What `session` was sent for `message`, a tool call's answer included."""
    sent = []

    async def send(pieces):
        sent.append(json.loads(join_pieces(pieces)))

    session.set_sender(send)
    await session.handle(json.dumps(message))
    await settle(lambda: sent)
    return sent


async def test_a_portable_session_lists_portable_names_and_every_session_calls_either():
    server = McpServer()
    server.add_tool("self.audio_speaker.set_volume", "d", [Property("volume", STRING)],
                    lambda args: "volume " + args["volume"])
    plain, http = server.session(), server.session()
    http.portable = True
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert (await _ask(server, plain, listing))[0]["result"]["tools"][0]["name"] == "self.audio_speaker.set_volume"
    assert (await _ask(server, http, listing))[0]["result"]["tools"][0]["name"] == "self_audio_speaker_set_volume"
    for session in (plain, http):
        for name in ("self.audio_speaker.set_volume", "self_audio_speaker_set_volume"):
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": name, "arguments": {"volume": "5"}}}
            reply = (await _ask(server, session, call))[0]
            assert reply["result"]["content"][0]["text"] == "volume 5", reply
    unknown = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "self_audio_speaker_set_volumes"}}
    assert (await _ask(server, http, unknown))[0]["error"]["code"] == -32602


def test_a_string_enum_is_in_the_schema_and_checked():
    theme = Property("theme", STRING, enum=("light", "dark"))
    assert property_schema(theme) == {"type": "string", "enum": ["light", "dark"]}
    assert theme.check("dark") == "dark"
    try:
        theme.check("blue")
    except InvalidParams as e:
        assert "blue" in str(e) and "light, dark" in str(e)
    else:
        assert False, "blue accepted"
    assert raises(InvalidParams, theme.check, 3)
    assert Property("t", STRING, default="light", enum=["light", "dark"]).default == "light"
    assert raises(ValueError, Property, "t", STRING, "blue", None, None, None, ("light",))  # default outside
    assert raises(ValueError, Property, "n", "integer", 1, None, None, None, ("1",))  # not a string
    assert raises(ValueError, Property, "t", STRING, "x", None, None, None, ())
    assert raises(ValueError, Property, "t", STRING, "x", None, None, None, ("x", 1))
    assert Property("plain", STRING).enum is None


def test_an_output_schema_is_kept_as_text_and_listed_from_2025_06_18():
    tool = McpTool("self.status", "d", None, noop, output_schema=STATUS_SCHEMA)
    assert tool.output_schema == STATUS_SCHEMA
    with_schema = json.loads(entry_json(tool))
    assert with_schema["outputSchema"] == json.loads(STATUS_SCHEMA)
    assert with_schema["inputSchema"] == {"type": "object", "properties": {}}
    assert "outputSchema" not in json.loads(entry_json(tool, False, False))
    assert tool.json_bytes == len(entry_json(tool).encode())
    as_dict = McpTool("self.status", "d", None, noop, output_schema={"type": "object"})
    assert json.loads(as_dict.output_schema) == {"type": "object"}
    for bad in ('{"type": "string"}', "[1]", "{not json", {"properties": {}}):
        assert raises(ValueError, McpTool, "t", "d", None, noop, False, None, None, None, None, None, bad), bad
    assert McpTool("t", "d", None, noop).output_schema is None


def test_structured_content_carries_the_same_json_as_the_text():
    result = json.loads(join_pieces(result_pieces({"volume": 5}, False, True)))
    assert result["structuredContent"] == {"volume": 5} and result["isError"] is False
    assert [block["type"] for block in result["content"]] == ["text"]
    assert json.loads(result["content"][0]["text"]) == {"volume": 5}
    modern = json.loads(join_pieces(result_pieces({"volume": 5}, True, True)))
    assert modern["structuredContent"] == {"volume": 5} and modern["resultType"] == "complete"
    assert raises(TypeError, result_pieces, [1, 2], False, True)


async def test_structured_results_follow_the_revision():
    server = McpServer()
    server.add_tool(McpTool("self.status", "d", None, lambda args: {"volume": 7}, output_schema=STATUS_SCHEMA))
    server.add_tool(McpTool("self.broken", "d", None, lambda args: "text", output_schema=STATUS_SCHEMA))
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "self.status"}}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    for version, structured in (("2024-11-05", False), ("2025-03-26", False), ("2025-06-18", True),
                                ("2025-11-25", True)):
        session = server.session()
        await _ask(server, session, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                     "params": {"protocolVersion": version, "capabilities": {}}})
        tools = (await _ask(server, session, listing))[0]["result"]["tools"]
        assert ("outputSchema" in tools[0]) == structured, version
        result = (await _ask(server, session, call))[0]["result"]
        assert ("structuredContent" in result) == structured, version
        assert json.loads(result["content"][0]["text"]) == {"volume": 7}
        broken = (await _ask(server, session, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                               "params": {"name": "self.broken"}}))[0]["result"]
        # A tool that returns no object despite its schema: an error result for new clients.
        assert broken["isError"] is structured, version
