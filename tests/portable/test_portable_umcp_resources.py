# Resources and revision 2026-07-28 on McpServer, inside MicroPython.
# Plain test functions with bare asserts: they run under pytest and on the device runners.

import asyncio
import json
from binascii import a2b_base64, b2a_base64

from umcp.resource import McpResourceTemplate
from umcp.compat import piece_utf8
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


# -- what each client era reads --------------------------------------------------------

JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 3 + b"\xff\xd9"


def add_device_resources(server, state):
    async def photo():
        await asyncio.sleep(0)
        return memoryview(JPEG)

    def sensor(variables):
        if variables["id"] not in state["sensors"]:
            raise KeyError(variables["id"])
        return {"id": variables["id"], "value": state["sensors"][variables["id"]]}

    server.add_resource("device://status", "status", lambda: dict(state["status"]),
                        description="Volume and brightness", mime_type="application/json")
    server.add_resource("device://log", "log", lambda: "line 1\nline \"2\"\n", mime_type="text/plain")
    server.add_resource("device://photo/last", "last photo", photo, mime_type="image/jpeg")
    server.add_resource_template("device://sensor/{id}", "sensor", sensor, description="One sensor")


def make_state():
    return {"status": {"volume": 50}, "sensors": {"t0": 21.5}}


async def test_capabilities_only_with_resources():
    wire = Wire()
    assert "resources" not in (await wire.initialize())["result"]["capabilities"]
    add_device_resources(wire.server, make_state())
    init = await wire.initialize()
    assert init["result"]["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}


async def test_read_text_json_blob_and_template():
    wire = Wire()
    add_device_resources(wire.server, make_state())
    await wire.initialize()
    status = await wire.request("resources/read", {"uri": "device://status"})
    assert status["result"]["contents"] == [
        {"uri": "device://status", "mimeType": "application/json", "text": '{"volume":50}'}]
    log = (await wire.request("resources/read", {"uri": "device://log"}))["result"]["contents"][0]
    assert log["text"] == 'line 1\nline "2"\n' and log["mimeType"] == "text/plain"
    photo = (await wire.request("resources/read", {"uri": "device://photo/last"}))["result"]["contents"][0]
    assert photo["mimeType"] == "image/jpeg" and a2b_base64(photo["blob"].encode()) == JPEG
    assert "text" not in photo
    # the base64 went out as pieces of its own, encoded as they were written, never a str
    encoded = [piece_utf8(piece) for piece in wire.pieces[-1] if not isinstance(piece, str)]
    assert encoded and not [text for text in encoded if isinstance(text, str)]
    assert b"".join(bytes(text) for text in encoded) == b2a_base64(JPEG, newline=False)
    sensor = (await wire.request("resources/read", {"uri": "device://sensor/t0"}))["result"]["contents"][0]
    assert json.loads(sensor["text"]) == {"id": "t0", "value": 21.5}
    assert sensor["mimeType"] == "application/json"
    assert "resultType" not in status["result"]  # legacy results stay as they were
    wire.server.add_resource("device://b", "b", lambda: bytearray(b"\x00\x01"))
    assert (await wire.request("resources/read", {"uri": "device://b"}))["result"]["contents"][0]["blob"] == "AAE="


async def test_an_unknown_uri_is_32002_on_legacy_and_32602_on_2026():
    wire = Wire()
    add_device_resources(wire.server, make_state())
    await wire.initialize()
    for uri in ("device://nothing", "device://sensor/t9", "device://sensor/", "device://sensor/a/b"):
        error = (await wire.request("resources/read", {"uri": uri}))["error"]
        assert error["code"] == -32002 and uri in error["message"], uri
        error = (await wire.request("resources/read", {"uri": uri}, version=MODERN))["error"]
        assert error["code"] == -32602 and uri in error["message"] and error["data"] == {"uri": uri}, uri


async def test_a_read_that_fails_is_an_internal_error():
    wire = Wire()

    def broken():
        raise OSError(5, "EIO")

    wire.server.add_resource("device://broken", "broken", broken)
    wire.server.add_resource("device://odd", "odd", lambda: 42)
    error = (await wire.request("resources/read", {"uri": "device://broken"}))["error"]
    assert error["code"] == -32603 and "device://broken" in error["message"]
    error = (await wire.request("resources/read", {"uri": "device://odd"}))["error"]
    assert error["code"] == -32603 and "int" in error["message"]


async def test_lists_page_byte_exact_with_an_opaque_cursor():
    wire = Wire(1000, 50)
    for number in range(40):
        wire.server.add_resource("device://r/%02d" % number, "resource %d" % number, lambda: "x",
                                 description="Something to read. " * 3)
        wire.server.add_resource_template("device://t%02d/{id}" % number, "template %d" % number, lambda v: "x")
    hints = ',"resultType":"complete","ttlMs":0,"cacheScope":"private"'
    for method, key, field, items in (("resources/list", "resources", "uri", wire.server.resources),
                                      ("resources/templates/list", "resourceTemplates", "uriTemplate",
                                       wire.server.templates)):
        entries = dict((json.loads(item.json())[field], item.json()) for item in items)
        for modern in (False, True):
            seen, cursor, pages = [], None, []
            while True:
                params = {"cursor": cursor} if cursor else {}
                start = len(wire.frames)
                page = (await wire.request(method, params, version=MODERN if modern else None))["result"]
                if modern:
                    assert page["ttlMs"] == 0 and page["cacheScope"] == "private"
                    assert page["resultType"] == "complete"
                assert len(wire.frames[start].encode()) + 50 <= 1000
                pages.append(wire.frames[start])
                seen += [entry[field] for entry in page[key]]
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
                assert cursor in entries  # the next entry's key
            assert len(pages) >= 3 and seen == [json.loads(item.json())[field] for item in items]
            # greedy: a page with more after it could not have held the next entry
            tail = hints if modern else ""
            for index, frame in enumerate(pages[:-1]):
                following = seen[sum(len(json.loads(f)["result"][key]) for f in pages[:index + 1]):]
                end = "]" + tail + "}}" if len(following) == 1 else \
                    '],"nextCursor":"%s"' % following[1] + tail + "}}"
                grown = frame[:frame.rindex("]")] + "," + entries[following[0]] + end
                assert len(grown.encode()) + 50 > 1000
    assert (await wire.request("resources/list", {"cursor": "device://nope"}))["error"]["code"] == -32602


async def test_subscribe_updated_and_list_changed():
    wire = Wire()
    add_device_resources(wire.server, make_state())
    await wire.initialize()
    assert wire.server.resource_updated("device://status") is False  # nobody subscribed
    assert (await wire.request("resources/subscribe", {"uri": "device://status"}))["result"] == {}
    start = len(wire.frames)
    assert wire.server.resource_updated("device://status") is True
    assert wire.server.resource_updated("device://status") is True  # one notification for both
    assert wire.server.resource_updated("device://log") is False
    await asyncio.sleep(0.01)
    assert wire.messages()[start:] == [{"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                        "params": {"uri": "device://status"}}]
    assert (await wire.request("resources/subscribe", {"uri": "device://none"}))["error"]["code"] == -32002
    await wire.request("resources/unsubscribe", {"uri": "device://status"})
    assert wire.server.resource_updated("device://status") is False
    # bounded: the ninth distinct URI is refused
    for number in range(8):
        assert "result" in await wire.request("resources/subscribe", {"uri": "device://sensor/s%d" % number})
    error = (await wire.request("resources/subscribe", {"uri": "device://status"}))["error"]
    assert error["code"] == -32602 and "at most 8" in error["message"]
    # resources added or removed after initialize: one list_changed per burst
    start = len(wire.frames)
    wire.server.add_resource("device://extra", "extra", lambda: "x")
    wire.server.remove_resource("device://extra")
    await asyncio.sleep(0.01)
    assert [m["method"] for m in wire.messages()[start:]] == ["notifications/resources/list_changed"]
    for mistake, wrong in ((lambda: wire.server.remove_resource("device://extra"), KeyError),
                           (lambda: wire.server.add_resource("device://status", "again", lambda: "x"), ValueError)):
        try:
            mistake()
        except wrong:
            continue
        assert False, wrong


# -- revision 2026-07-28 -------------------------------------------------------------

async def modern_call(wire, name, arguments, id=1, log_level=None):
    """A tools/call in revision 2026-07-28's form, answered once its task has run."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    if log_level is not None:
        meta["io.modelcontextprotocol/logLevel"] = log_level
    await wire.feed({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": {"name": name, "arguments": arguments, "_meta": meta}})
    return await wire.response(id)


async def test_discover_shape():
    wire = Wire()
    result = (await wire.request("server/discover", version=MODERN))["result"]
    assert result["resultType"] == "complete" and result["supportedVersions"][0] == MODERN
    assert "2025-11-25" in result["supportedVersions"] and "2024-11-05" in result["supportedVersions"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "dev", "version": "9"}
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"
    assert "resources" not in result["capabilities"]
    add_device_resources(wire.server, make_state())
    assert (await wire.request("server/discover", version=MODERN))["result"]["capabilities"]["resources"] == {}


async def test_2026_requests_need_no_initialize_and_carry_result_type():
    wire = Wire()
    wire.server.add_tool("echo", "Echo.", None, lambda args: "hi")
    add_device_resources(wire.server, make_state())
    page = (await wire.request("tools/list", version=MODERN))["result"]
    assert page["tools"][0]["name"] == "echo" and page["resultType"] == "complete"
    assert page["ttlMs"] == 0 and page["cacheScope"] == "private" and "nextCursor" not in page
    call = (await modern_call(wire, "echo", {}, id=2))["result"]
    assert call["content"][0]["text"] == "hi" and call["resultType"] == "complete"
    bad = (await modern_call(wire, "echo", {"x": 1}, id=3))["result"]
    assert bad["isError"] is True and bad["resultType"] == "complete"
    read = (await wire.request("resources/read", {"uri": "device://status"}, version=MODERN))["result"]
    assert read["resultType"] == "complete" and read["ttlMs"] == 0 and read["cacheScope"] == "private"
    assert wire.server.default.protocol is None


async def test_an_unsupported_version_gets_32022_and_methods_gone_from_2026_32601():
    wire = Wire()
    for requested in ("1900-01-01", "2099-01-01"):
        error = (await wire.request("tools/list", version=requested))["error"]
        assert error["code"] == -32022 and error["data"]["requested"] == requested
        assert error["data"]["supported"][0] == MODERN
    for method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        params = {"level": "info", "uri": "device://status"}
        assert (await wire.request(method, params, version=MODERN))["error"]["code"] == -32601, method
    assert (await wire.request("ping"))["result"] == {}  # in the legacy form, as always


async def test_2026_logging_is_request_scoped():
    wire = Wire()

    async def chatty(args):
        await wire.server.log("info", "progress")
        await wire.server.log("error", "bad")
        return True

    wire.server.add_tool("chatty", "Logs.", None, chatty)
    sent = len(wire.frames)
    await modern_call(wire, "chatty", {}, id=1)
    assert [m for m in wire.messages()[sent:] if m.get("method") == "notifications/message"] == []
    sent = len(wire.frames)
    await modern_call(wire, "chatty", {}, id=2, log_level="error")
    logs = [m["params"]["data"] for m in wire.messages()[sent:] if m.get("method") == "notifications/message"]
    assert logs == ["bad"]
    await wire.server.log("error", "outside any request")  # a 2026 client gets no unscoped logs
    assert wire.messages()[-1].get("id") == 2
    assert (await wire.request("tools/list", version=MODERN, log_level="loud"))["error"]["code"] == -32602
    await wire.initialize()  # a legacy client gets them again
    await wire.server.log("error", "now")
    assert wire.messages()[-1]["params"]["data"] == "now"
