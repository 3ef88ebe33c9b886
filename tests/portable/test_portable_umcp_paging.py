# tools/list pagination inside MicroPython: whole frames (envelope included) within the byte
# limit, filled greedily to the last byte, every tool once, cursors and their errors.
# Plain test functions with bare asserts: they run under pytest and on the device runners.

import json

from umcp import BOOLEAN, INTEGER, STRING, McpServer, Property
from umcp.compat import dumps, join_pieces
from umcp.listing import entry_json
from portable_support import Wire

# What the xiaozhi link wraps around a payload: {"session_id":"…","type":"mcp","payload":…}
ENVELOPE = '{"session_id":"5f1c8e2a-0b7d-4c31-9e55-d6a0f3b2c9e1","type":"mcp","payload":}'


def register_board(server, count=40):
    """Tools of varied sizes, some user-only, some with Chinese descriptions."""
    names = []
    for number in range(count):
        name = "self.board.tool_%02d" % number
        description = ("调节设备的第 %d 个功能。" % number) * (1 + number % 4) + "x" * (number * 37 % 300)
        props = [Property("level", INTEGER, default=number % 10, minimum=0, maximum=10),
                 Property("label", STRING, default="a\"b"),
                 Property("on", BOOLEAN, description="switch")][: number % 4]
        if number % 7 == 3:
            server.add_user_only_tool(name, description, props, bool)
        else:
            server.add_tool(name, description, props, bool, read_only=number % 2 == 0)
        names.append((name, number % 7 == 3))
    return names


async def list_all(wire, with_user_tools=False, id=2):
    """Follow nextCursor to the end the way the xiaozhi backend does (same id each time)."""
    pages, cursor = [], None
    while True:
        params = {"withUserTools": True} if with_user_tools else {}
        if cursor is not None:
            params["cursor"] = cursor
        before = len(wire.frames)
        response = await wire.request("tools/list", params, id=id)
        assert "result" in response, response
        pages.append((wire.frames[before], response["result"]))
        cursor = response["result"].get("nextCursor")
        if cursor is None:
            return pages


def check_pages(server, pages, limit, overhead):
    tools_by_name = {tool.name: tool for tool in server.tools}
    cursors = [result.get("nextCursor") for _, result in pages]
    assert len(set(cursors)) == len(cursors), "a cursor repeats"
    for index, (frame, result) in enumerate(pages):
        assert len(frame.encode()) + overhead <= limit
        assert result["tools"], "an empty page"
        if "nextCursor" not in result:
            assert index == len(pages) - 1
            continue
        # Greedy: the next tool would not have fitted on this page.
        following = [t["name"] for _, r in pages[index + 1:] for t in r["tools"]]
        next_tool = tools_by_name[result["nextCursor"]]
        assert following[0] == next_tool.name
        end = "]}}" if len(following) == 1 else '],"nextCursor":' + dumps(following[1]) + "}}"
        grown = frame[:frame.rindex("]")] + "," + entry_json(next_tool) + end
        assert len(grown.encode()) + overhead > limit


def test_the_default_page_limit_is_8000():
    server = McpServer()
    assert server.page_limit == 8000
    server.page_limit = 1400
    assert server.page_limit == 1400


async def test_pages_fit_the_limit_and_cover_every_tool_once():
    for limit in (8000, 4000, 1400, 1000):
        for overhead in (0, len(ENVELOPE)):
            wire = Wire(limit, overhead)
            names = register_board(wire.server)
            await wire.initialize()
            pages = await list_all(wire)
            listed = [tool["name"] for _, result in pages for tool in result["tools"]]
            assert listed == [name for name, user_only in names if not user_only]
            check_pages(wire.server, pages, limit, overhead)
            if limit <= 4000:
                assert len(pages) > 2


async def test_the_whole_frame_in_its_envelope_fits():
    server = McpServer(page_limit=1400)
    sent = []

    async def send_enveloped(pieces):
        sent.append(ENVELOPE[:-1] + join_pieces(pieces) + "}")

    server.set_sender(send_enveloped, len(ENVELOPE) - 1)
    register_board(server)
    cursor = None
    while True:
        params = {} if cursor is None else {"cursor": cursor}
        await server.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params})
        frame = sent[-1]
        assert len(frame.encode()) <= 1400
        cursor = json.loads(frame)["payload"]["result"].get("nextCursor")
        if cursor is None:
            break
    assert len(sent) > 3


async def test_user_only_tools_only_with_user_tools():
    wire = Wire()
    names = register_board(wire.server, 20)
    wire.server.page_limit = 1400
    everything = [t["name"] for _, r in await list_all(wire, with_user_tools=True) for t in r["tools"]]
    assert everything == [name for name, _ in names]
    llm = [t["name"] for _, r in await list_all(wire, id="x") for t in r["tools"]]
    assert llm == [name for name, user_only in names if not user_only]
    explicit = await wire.request("tools/list", {"withUserTools": False}, id=3)
    assert all(not t.get("annotations", {}).get("audience") for t in explicit["result"]["tools"])


async def test_no_next_cursor_when_only_user_only_tools_follow():
    wire = Wire()
    wire.server.add_tool("a", "d" * 500, None, bool)
    for number in range(5):
        wire.server.add_user_only_tool("u%d" % number, "d" * 500, None, bool)
    wire.server.page_limit = 700
    result = (await wire.request("tools/list", {}, id=2))["result"]
    assert [t["name"] for t in result["tools"]] == ["a"] and "nextCursor" not in result


async def test_cursors_are_stable_and_empty_cursor_is_the_start():
    wire = Wire()
    register_board(wire.server)
    wire.server.page_limit = 1400
    first = (await wire.request("tools/list", {"cursor": ""}, id=1))["result"]
    again = (await wire.request("tools/list", None, id=2))["result"]
    assert first == again
    second = (await wire.request("tools/list", {"cursor": first["nextCursor"]}, id=3))["result"]
    assert (await wire.request("tools/list", {"cursor": first["nextCursor"]}, id=4))["result"] == second
    assert second["tools"][0]["name"] == first["nextCursor"]


async def test_an_unknown_cursor_is_32602():
    wire = Wire()
    register_board(wire.server, 5)
    for cursor in ("no-such-tool", 5, {"a": 1}, "self.board.tool_\"x"):
        response = await wire.request("tools/list", {"cursor": cursor}, id=2)
        assert response["error"]["code"] == -32602 and "cursor" in response["error"]["message"], cursor


async def test_a_cursor_of_a_removed_tool_is_32602():
    wire = Wire()
    register_board(wire.server)
    wire.server.page_limit = 1400
    cursor = (await wire.request("tools/list", {}, id=1))["result"]["nextCursor"]
    wire.server.remove_tool(cursor)
    assert (await wire.request("tools/list", {"cursor": cursor}, id=2))["error"]["code"] == -32602


async def test_a_tool_too_big_for_any_page_is_an_error_naming_it():
    wire = Wire()
    server = wire.server
    server.page_limit = 1400
    server.add_tool("small", "fits", None, bool)
    server.add_tool("self.huge", "y" * 1500, None, bool)
    server.add_tool("after", "fits", None, bool)
    first = (await wire.request("tools/list", {}, id=1))["result"]
    assert [t["name"] for t in first["tools"]] == ["small"] and first["nextCursor"] == "self.huge"
    error = (await wire.request("tools/list", {"cursor": "self.huge"}, id=2))["error"]
    assert error["code"] == -32603 and "self.huge" in error["message"] and "1400" in error["message"]
    server.page_limit = 8000
    names = [t["name"] for t in (await wire.request("tools/list", {}, id=3))["result"]["tools"]]
    assert names == ["small", "self.huge", "after"]


async def test_an_empty_list_is_one_page():
    wire = Wire()
    result = (await wire.request("tools/list", {}, id=1))["result"]
    assert result == {"tools": []}


async def test_a_list_of_only_user_only_tools_is_an_empty_page_for_the_llm():
    wire = Wire()
    # The reference answers this with the same error as an unknown cursor.
    wire.server.add_user_only_tool("self.reboot", "Reboot", None, bool)
    assert (await wire.request("tools/list", {}, id=1))["result"] == {"tools": []}
    listed = (await wire.request("tools/list", {"withUserTools": True}, id=2))["result"]
    assert [t["name"] for t in listed["tools"]] == ["self.reboot"] and "nextCursor" not in listed


async def test_a_page_fills_the_limit_to_the_last_byte():
    # Byte-exact accounting of the frame, envelope, multi-byte text and id included.
    for overhead in (0, 70):
        wire = Wire(8000, overhead)
        for name, description in (("self.a", "调节音量"), ("self.b", "打开灯光。" * 3), ("self.c", "c")):
            wire.server.add_tool(name, description, None, bool)

        async def page(limit):
            wire.server.page_limit = limit
            result = (await wire.request("tools/list", id="页"))["result"]
            size = len(wire.frames[-1].encode()) + overhead
            return size, [tool["name"] for tool in result["tools"]], result.get("nextCursor")

        size, names, cursor = await page(8000)
        assert names == ["self.a", "self.b", "self.c"] and cursor is None
        frame = wire.frames[-1]  # UTF-8 on MicroPython, \u escapes on CPython
        assert len(frame.encode()) > len(frame) or "\\u" in frame
        assert await page(size) == (size, names, None)
        smaller, names, cursor = await page(size - 1)
        assert names == ["self.a", "self.b"] and cursor == "self.c"
        assert await page(smaller) == (smaller, names, cursor)
        assert (await page(smaller - 1))[1:] == (["self.a"], "self.b")
