# McpServer inside MicroPython: the handshake, JSON-RPC rules, tools/call, images, paging bytes.
# Plain test functions with bare asserts: they run under pytest and on the device runners.

import asyncio
import json
from binascii import a2b_base64, b2a_base64

from umcp import INTEGER, ImageContent, McpServer, McpTool, Property
from umcp.compat import join_pieces, piece_size, piece_utf8
from umcp.image import base64_pieces
from umcp.listing import entry_json
from umcp.server import LATEST_VERSION, SUPPORTED_VERSIONS
from portable_support import Wire, call, settle

VOLUME = [Property("volume", INTEGER, minimum=0, maximum=100)]


async def test_initialize_negotiates_the_version():
    wire = Wire()
    assert SUPPORTED_VERSIONS[:4] == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
    for version in SUPPORTED_VERSIONS:  # each supported one echoed
        result = (await wire.initialize(version))["result"]
        assert result["protocolVersion"] == version
        assert result["capabilities"]["tools"] == {"listChanged": True}
        assert result["serverInfo"] == {"name": "dev", "version": "9"}
    for version in ("1999-01-01", "2099-01-01"):  # an unknown one: the latest
        assert (await wire.initialize(version))["result"]["protocolVersion"] == LATEST_VERSION == "2025-11-25"


async def test_vision_and_ping():
    wire = Wire()
    seen = []
    assert (await wire.request("ping", id="p"))["result"] == {}  # before initialize too
    wire.server.on_vision(lambda url, token: seen.append((url, token)))
    await wire.request("initialize", {"capabilities": {"vision": {"url": "http://v", "token": "t"}}})
    assert seen == [("http://v", "t")]
    await wire.request("initialize", {"capabilities": {"vision": {"url": "http://h/v"}}}, id=9)
    assert seen[-1] == ("http://h/v", "")  # no token: an empty one
    assert (await wire.request("ping", {}, id="q"))["result"] == {}


async def test_ids_keep_their_type():
    wire = Wire()
    for request_id in (1, "1", 0, 7, -3, 2 ** 40, 2 ** 53 + 1, "", 'id with "quotes"', "音量"):
        response = await wire.request("ping", id=request_id)
        assert response["id"] == request_id and type(response["id"]) is type(request_id)


async def test_jsonrpc_errors():
    wire = Wire()
    cases = [
        ("garbage", -32700, None),
        ("[1]", -32600, None),
        ('{"jsonrpc":"1.0","id":3,"method":"ping"}', -32600, 3),
        ('{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
        ('{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
        ('{"jsonrpc":"2.0","id":4,"method":7}', -32600, 4),
        ('{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}', -32600, 5),
        ('{"jsonrpc":"2.0","id":6,"method":"prompts/list"}', -32601, 6),
        ('{"jsonrpc":"2.0","id":7,"method":"x\\"y"}', -32601, 7),
    ]
    # Invalid requests: -32600, with the id where it is a valid one.
    cases += [({"jsonrpc": "1.0", "id": 1, "method": "ping"}, -32600, 1),
              ({"id": 1, "method": "ping"}, -32600, 1),
              ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, -32600, None),
              ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, -32600, None),
              ({"jsonrpc": "2.0", "id": 4}, -32600, 4),
              ({"jsonrpc": "2.0", "id": "x", "method": "tools/list", "params": [1]}, -32600, "x"),
              ({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": "p"}, -32600, 4)]
    # Garbage, text or bytes: a parse error with a null id.
    cases += [(text, -32700, None) for text in ("{", "", b"\xff\xfe", b'{"jsonrpc": "2.0", "id": 12')]
    for text, code, echoed in cases:
        sent = await wire.feed(text)
        assert len(sent) == 1 and sent[0]["error"]["code"] == code and sent[0]["id"] == echoed, (text, sent)
        assert type(sent[0]["id"]) is type(echoed), (text, sent)
    # Unknown methods: -32601 at once, naming the method in valid JSON.
    for method in ("prompts/list", "completion/complete", 'x"y\nz'):
        error = (await wire.request(method, id=5))["error"]
        assert error["code"] == -32601 and method in error["message"], error


async def test_notifications_and_responses_are_not_answered():
    wire = Wire()
    called = []
    wire.server.add_tool("t", "d", None, called.append)
    for method in ("notifications/initialized", "notifications/unknown", "ping", "tools/call",
                   "notifications/cancelled"):
        assert await wire.feed({"jsonrpc": "2.0", "method": method, "params": {"name": "t"}}) == [], method
    assert await wire.feed({"jsonrpc": "2.0", "id": 9, "result": {}}) == []
    assert await wire.feed({"jsonrpc": "2.0", "id": 6, "error": {"code": -1, "message": "x"}}) == []
    await asyncio.sleep(0)
    assert called == [] and wire.frames == []


async def answer(wire, name, arguments=None, id=1):
    """The response to a tools/call, once its task has run (the call is answered later)."""
    await wire.feed(call(name, arguments, id=id))
    return await wire.response(id)


async def test_a_call_runs_a_plain_callback_with_defaults_filled():
    wire = Wire()
    seen = []

    def set_volume(args):
        seen.append(args)
        return True

    wire.server.add_tool("self.audio_speaker.set_volume", "Set volume",
                         VOLUME + [Property("fade", INTEGER, default=0)], set_volume)
    await wire.initialize()
    response = await answer(wire, "self.audio_speaker.set_volume", {"volume": 70}, id=3)
    assert response["result"] == {"content": [{"type": "text", "text": "true"}], "isError": False}
    assert seen == [{"volume": 70, "fade": 0}]


async def test_a_call_awaits_a_coroutine_callback():
    wire = Wire()

    async def status(args):
        await asyncio.sleep(0)
        return {"battery": 80, "note": "ok \"quoted\""}

    wire.server.add_tool("self.get_device_status", "Status", None, status)
    response = await answer(wire, "self.get_device_status")
    assert json.loads(response["result"]["content"][0]["text"]) == {"battery": 80, "note": "ok \"quoted\""}


async def test_a_call_returns_an_image_as_an_mcp_image_block():
    wire = Wire()
    wire.server.add_tool("self.camera.snap", "Photo", None, lambda args: ImageContent(b"\xff\xd8\xff\xe0"))
    block = (await answer(wire, "self.camera.snap"))["result"]["content"][0]
    assert block == {"type": "image", "data": "/9j/4A==", "mimeType": "image/jpeg"}


async def test_an_unknown_tool_or_none_named_is_32602():
    wire = Wire()
    await wire.initialize("2025-11-25")
    error = (await wire.feed(call("self.nope", id=4)))[0]["error"]
    assert error["code"] == -32602 and "self.nope" in error["message"]
    error = (await wire.request("tools/call", {"arguments": {}}, id=5))["error"]
    assert error["code"] == -32602 and "name" in error["message"]


async def test_argument_errors_follow_the_negotiated_version():
    # Up to 2025-06-18 (and before any initialize): -32602; from 2025-11-25: a tool result.
    for version in (None, "2024-11-05", "2025-03-26", "2025-06-18"):
        wire = Wire()
        called = []
        wire.server.add_tool("vol", "d", VOLUME, called.append)
        if version:
            await wire.initialize(version)
        for arguments, expected in [({"volume": 101}, "volume: 101 is above the maximum 100"),
                                    ({"volume": True}, "volume: expected integer, got boolean"),
                                    ({}, "missing required argument volume"),
                                    ({"volume": 1, "extra": 2}, "unknown argument extra")]:
            error = (await wire.feed(call("vol", arguments, id=7)))[0]["error"]
            assert error == {"code": -32602, "message": expected}, (version, error)
        assert called == []
    wire = Wire()
    called = []
    wire.server.add_tool("vol", "d", VOLUME, called.append)
    await wire.initialize("2025-11-25")
    for arguments, expected in [({"volume": -4}, "volume: -4 is below the minimum 0"),
                                ({"volume": 101}, "volume: 101 is above the maximum 100")]:
        result = (await wire.feed(call("vol", arguments, id=8)))[0]["result"]
        assert result == {"content": [{"type": "text", "text": expected}], "isError": True}
    assert called == []


async def test_tool_exceptions_become_is_error_results():
    wire = Wire()

    def broken(args):
        raise RuntimeError('camera "cam0" failed\nretry later')

    def nameless(args):
        raise KeyError()

    wire.server.add_tool("broken", "d", None, broken)
    wire.server.add_tool("nameless", "d", None, nameless)
    response = await answer(wire, "broken", id=1)
    assert response["result"] == {"content": [{"type": "text", "text": 'camera "cam0" failed\nretry later'}],
                                  "isError": True}
    assert (await answer(wire, "nameless", id=2))["result"]["content"][0]["text"] == "KeyError"
    assert (await wire.request("ping", id=4))["result"] == {}


async def test_user_only_tools_can_be_called():
    wire = Wire()
    wire.server.add_user_only_tool("self.reboot", "Reboot", None, lambda args: "rebooting")
    assert (await answer(wire, "self.reboot"))["result"]["content"][0]["text"] == "rebooting"


def test_base64_pieces_string_together_into_the_whole_base64():
    # Only the last piece is padded: any length, the chunk's edges included.
    for size in (0, 1, 2, 3, 767, 768, 769, 1536, 2000):
        data = bytes(n % 251 for n in range(size))
        pieces = base64_pieces(data)
        assert len(pieces) == (size + 767) // 768
        text = b"".join(bytes(piece_utf8(piece)) for piece in pieces)
        assert text == b2a_base64(data, newline=False), size
        assert sum(piece_size(piece) for piece in pieces) == len(text)


async def test_an_image_reaches_the_sender_as_base64_bytes_never_a_string():
    # A camera-sized JPEG holding every byte value, so its base64 uses every character.
    jpeg = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 80 + b"\xff\xd9"
    server = McpServer()
    server.add_tool("snap", "d", None, lambda args: ImageContent(jpeg))
    messages = []
    server.set_sender(messages.append)
    await server.handle(call("snap", id=7))
    await settle(lambda: messages)
    pieces = messages[0]
    encoded = [piece for piece in pieces if not isinstance(piece, str)]
    # The base64 comes as pieces encoded only as they are written (never one block of 4/3
    # of the image): each announces the bytes it writes, at most 1024, bytes not str.
    assert len(encoded) == (len(jpeg) + 767) // 768
    written = [piece_utf8(piece) for piece in encoded]
    assert [len(text) for text in written] == [piece_size(piece) for piece in encoded]
    assert max(len(text) for text in written) == 1024
    assert not [text for text in written if isinstance(text, str)]
    response = json.loads(join_pieces(pieces))
    assert response["id"] == 7 and response["result"]["isError"] is False
    block = response["result"]["content"][0]
    assert block["type"] == "image" and block["mimeType"] == "image/jpeg"
    # the base64 pieces strung together are the image's data
    assert b"".join(bytes(text) for text in written) == block["data"].encode()
    assert a2b_base64(block["data"].encode()) == jpeg


async def test_a_failing_sender_does_not_stop_the_server():
    server = McpServer()
    sent = []

    async def flaky(pieces):
        sent.append(join_pieces(pieces))
        if len(sent) == 1:
            raise OSError(104)

    server.set_sender(flaky)
    await server.handle('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    await server.handle('{"jsonrpc":"2.0","id":2,"method":"ping"}')
    assert [json.loads(text)["id"] for text in sent] == [1, 2]


def test_duplicate_tool_names_are_refused():
    server = McpServer()
    server.add_tool("self.reboot", "d", None, bool)
    for add in (lambda: server.add_tool("self.reboot", "again", None, bool),
                lambda: server.add_user_only_tool("self.reboot", "again", None, bool)):
        try:
            add()
        except ValueError as e:
            assert "self.reboot" in str(e)
        else:
            assert False, "duplicate accepted"
    try:
        server.add_tool(McpTool("self.reboot", "again", None, bool))
    except ValueError:
        pass
    else:
        assert False, "duplicate McpTool accepted"


# -- the handshake's odd corners ---------------------------------------------

async def test_initialize_announces_the_transport_message_limit_when_set():
    wire = Wire()
    assert "experimental" not in (await wire.initialize())["result"]["capabilities"]
    wire.server.max_message = 6144
    result = (await wire.initialize())["result"]
    assert result["capabilities"]["experimental"] == {"messageLimit": {"maxBytes": 6144}}


async def test_initialize_without_a_version_answers_the_xiaozhi_version():
    # The xiaozhi protocol document's initialize carries only capabilities.
    wire = Wire()
    assert (await wire.request("initialize", {"capabilities": {}}))["result"]["protocolVersion"] == "2024-11-05"
    assert (await wire.request("initialize", {"protocolVersion": 20241105}))["error"]["code"] == -32602
    response = await wire.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": "none"})
    assert response["result"]["protocolVersion"] == "2025-03-26"  # a capabilities that is no object


async def test_text_and_bytes_payloads_are_served():
    wire = Wire()
    assert (await wire.feed('{"jsonrpc":"2.0","id":1,"method":"ping"}'))[0]["result"] == {}
    assert (await wire.feed(b'{"jsonrpc":"2.0","id":2,"method":"ping"}'))[0]["result"] == {}
    assert (await wire.feed(bytearray(b'{"jsonrpc":"2.0","id":3,"method":"ping"}')))[0]["id"] == 3


async def test_no_sender_drops_and_a_plain_sender_works_too():
    server = McpServer()
    await server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})  # nothing to send to: dropped
    await server.notify("notifications/tools/list_changed")
    sent = []
    server.set_sender(sent.append)  # not a coroutine
    await server.handle('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert json.loads(join_pieces(sent[0])) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_removing_an_unknown_tool_is_a_key_error_and_add_tool_returns_the_tool():
    try:
        McpServer().remove_tool("nope")
    except KeyError:
        pass
    else:
        assert False, "removed a tool it did not have"
    tool = McpServer().add_tool("t", "d", None, bool, read_only=True, title="T")
    assert json.loads(entry_json(tool))["annotations"] == {"readOnlyHint": True, "title": "T"}


def test_only_the_registration_methods_load_their_module():
    # McpServer's add_tool, remove_resource... are umcp.registry's (loaded when asked for);
    # any other name is an AttributeError at once, as on a plain object: hasattr() and
    # getattr(server, name, default) load nothing.
    import sys

    from umcp.compat import forget_modules

    server = McpServer()
    forget_modules("umcp.registry")
    assert not hasattr(server, "no_such_method") and getattr(server, "registry", None) is None
    assert "umcp.registry" not in sys.modules or sys.implementation.name != "micropython"
    server.add_tool("self.x", "x", [], lambda arguments: True)
    assert "umcp.registry" in sys.modules and [tool.name for tool in server.tools] == ["self.x"]
