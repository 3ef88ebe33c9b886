# Resources and revision 2026-07-28 on McpServer, inside MicroPython.
# Plain test functions with bare asserts: they run under pytest and on the device runners.

import asyncio
import json
from binascii import a2b_base64

from umcp.resource import McpResourceTemplate
from portable_support import Wire

MODERN = "2026-07-28"
BLOB = bytes(range(256)) * 4


def with_resources(wire, state):
    async def photo():
        await asyncio.sleep(0)
        return BLOB

    def sensor(variables):
        if variables["id"] not in state:
            raise KeyError(variables["id"])
        return {"id": variables["id"], "value": state[variables["id"]]}

    wire.server.add_resource("device://status", "status", lambda: {"volume": state["volume"]})
    wire.server.add_resource("device://log", "log", lambda: "a\n\"b\"\n", mime_type="text/plain")
    wire.server.add_resource("device://photo/last", "photo", photo, mime_type="image/jpeg")
    wire.server.add_resource_template("device://sensor/{id}", "sensor", sensor)


async def test_read_contents_of_each_kind():
    wire = Wire()
    with_resources(wire, {"volume": 5, "t0": 1.5})
    status = (await wire.request("resources/read", {"uri": "device://status"}))["result"]["contents"][0]
    assert json.loads(status["text"]) == {"volume": 5} and status["mimeType"] == "application/json"
    log = (await wire.request("resources/read", {"uri": "device://log"}))["result"]["contents"][0]
    assert log == {"uri": "device://log", "mimeType": "text/plain", "text": "a\n\"b\"\n"}
    photo = (await wire.request("resources/read", {"uri": "device://photo/last"}))["result"]["contents"][0]
    assert a2b_base64(photo["blob"].encode()) == BLOB and photo["mimeType"] == "image/jpeg"
    # the base64 went out as the bytes b2a_base64 made, not copied into a str
    assert [piece for piece in wire.pieces[-1] if not isinstance(piece, str)]
    sensor = (await wire.request("resources/read", {"uri": "device://sensor/t0"}))["result"]["contents"][0]
    assert json.loads(sensor["text"]) == {"id": "t0", "value": 1.5}


async def test_unknown_uri_error_follows_the_revision():
    wire = Wire()
    with_resources(wire, {"volume": 5})
    error = (await wire.request("resources/read", {"uri": "device://sensor/zz"}))["error"]
    assert error["code"] == -32002 and "device://sensor/zz" in error["message"]
    error = (await wire.request("resources/read", {"uri": "device://x"}, version=MODERN))["error"]
    assert error["code"] == -32602 and error["data"] == {"uri": "device://x"}


def test_template_matching():
    template = McpResourceTemplate("device://a/{x}/b{y}.json", "t", lambda v: "")
    assert template.match("device://a/1/b22.json") == {"x": "1", "y": "22"}
    for uri in ("device://a//b2.json", "device://a/1/b.json", "device://a/1/2/b3.json", "device://a/1/b2.jsonx",
                "device://b/1/b2.json"):
        assert template.match(uri) is None, uri
    assert McpResourceTemplate("x:{a}", "t", lambda v: "").match("x:abc") == {"a": "abc"}
    for bad in ("x:{a}{b}", "x:{a", "x:a}", "x:{}", "x:{a-b}", "x:{a}/{a}", "no scheme {a}"):
        try:
            McpResourceTemplate(bad, "t", lambda v: "")
        except ValueError:
            continue
        assert False, bad


async def test_subscription_is_bounded_and_told():
    wire = Wire()
    state = {"volume": 5}
    with_resources(wire, state)
    await wire.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    assert wire.server.resource_updated("device://status") is False
    assert (await wire.request("resources/subscribe", {"uri": "device://status"}))["result"] == {}
    before = len(wire.frames)
    assert wire.server.resource_updated("device://status") is True
    for _ in range(5):
        await asyncio.sleep(0)
    assert [json.loads(f) for f in wire.frames[before:]] == [
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "device://status"}}]
    for number in range(7):
        await wire.request("resources/subscribe", {"uri": "device://sensor/%d" % number})
    assert (await wire.request("resources/subscribe", {"uri": "device://log"}))["error"]["code"] == -32602


async def test_resources_added_later_load_at_the_first_resources_request():
    wire = Wire()
    state = {"volume": 5}
    calls = []

    def register(server):
        calls.append(server)
        with_resources(wire, state)

    wire.server.add_resources_later(register)
    init = await wire.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    assert init["result"]["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert (await wire.request("ping"))["result"] == {}
    assert wire.server.resource_updated("device://status") is False and calls == []
    before = len(wire.frames)
    listed = (await wire.request("resources/list"))["result"]["resources"]
    assert calls == [wire.server]
    assert [r["uri"] for r in listed] == ["device://status", "device://log", "device://photo/last"]
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(wire.frames) == before + 1  # the page only: no list_changed for the late ones
    await wire.request("resources/templates/list")
    assert calls == [wire.server]  # once
    later = Wire()
    later.server.add_resources_later(lambda server: server.add_resource("device://x", "x", lambda: "x"))
    assert (await later.request("resources/read", {"uri": "device://x"}))["result"]["contents"][0]["text"] == "x"
    gone = Wire()
    gone.server.add_resources_later(lambda server: server.add_resource("device://y", "y", lambda: "y"))
    gone.server.remove_resource("device://y")
    assert "resources" not in (await gone.request("initialize", {"protocolVersion": "2025-11-25"}, id=0))["result"]["capabilities"]


async def test_2026_discover_and_result_type():
    wire = Wire(page_limit=600)
    with_resources(wire, {"volume": 5})
    wire.server.add_tool("echo", "Echo.", None, lambda args: "hi")
    result = (await wire.request("server/discover", version=MODERN))["result"]
    assert result["supportedVersions"][0] == MODERN and "2024-11-05" in result["supportedVersions"]
    assert result["resultType"] == "complete" and result["ttlMs"] == 0 and result["cacheScope"] == "private"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "dev"
    page = (await wire.request("resources/list", version=MODERN))["result"]
    assert page["resultType"] == "complete" and len(page["resources"]) == 3
    tools = (await wire.request("tools/list", version=MODERN))["result"]
    assert tools["resultType"] == "complete" and tools["ttlMs"] == 0
    error = (await wire.request("tools/list", version="2099-01-01"))["error"]
    assert error["code"] == -32022 and error["data"]["requested"] == "2099-01-01"
    assert MODERN in error["data"]["supported"]
    assert (await wire.request("ping", version=MODERN))["error"]["code"] == -32601
    assert (await wire.request("ping"))["result"] == {}


async def test_the_revision_decision_allocates_nothing():
    # Where the heap can be counted (MicroPython): a tools/list in revision 2026-07-28's
    # form takes no more heap than the same request without _meta.
    import gc

    if not hasattr(gc, "mem_alloc"):
        return
    wire = Wire()
    for number in range(10):
        wire.server.add_tool("t%d" % number, "A tool.", None, lambda args: True)
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    legacy = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    modern = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}

    async def heap(message):
        await wire.server.handle(message)  # once before: nothing first-time in the count
        gc.collect()
        gc.disable()
        try:
            before = gc.mem_alloc()
            await wire.server.handle(message)
            return gc.mem_alloc() - before
        finally:
            gc.enable()

    wire.server.set_sender(lambda pieces: None)
    legacy_bytes = await heap(legacy)
    assert 0 < await heap(modern) <= legacy_bytes
