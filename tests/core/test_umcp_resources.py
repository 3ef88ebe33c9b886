"""Resources and revision 2026-07-28 on McpServer: every message checked against the
SDK's types (the `wire` fixture), and the SDK's own clients in both eras."""

import asyncio
import base64
import json

import pytest
from mcp import ClientSession
from mcp.client import Client
from mcp.types import PaginatedRequestParams

from tests.core.test_umcp_sdk import READ_TIMEOUT_S, umcp_transport
from umcp import McpServer
from umcp.compat import join_pieces, piece_utf8

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(20)]

JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 3 + b"\xff\xd9"
MODERN = "2026-07-28"


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


def error_of(response):
    return response["error"]["code"], response["error"]["message"]


# -- legacy era (initialize) --------------------------------------------------------


async def test_capabilities_only_with_resources(wire):
    init = await wire.initialize()
    assert "resources" not in init["result"]["capabilities"]
    add_device_resources(wire.server, make_state())
    init = await wire.initialize()
    assert init["result"]["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}


async def test_read_text_json_blob_and_template(wire):
    add_device_resources(wire.server, make_state())
    await wire.initialize()
    status = await wire.request("resources/read", {"uri": "device://status"})
    assert status["result"]["contents"] == [
        {"uri": "device://status", "mimeType": "application/json", "text": '{"volume":50}'}]
    log = (await wire.request("resources/read", {"uri": "device://log"}))["result"]["contents"][0]
    assert log["text"] == 'line 1\nline "2"\n' and log["mimeType"] == "text/plain"
    photo = (await wire.request("resources/read", {"uri": "device://photo/last"}))["result"]["contents"][0]
    assert photo["mimeType"] == "image/jpeg" and base64.b64decode(photo["blob"]) == JPEG
    assert "text" not in photo
    sensor = (await wire.request("resources/read", {"uri": "device://sensor/t0"}))["result"]["contents"][0]
    assert json.loads(sensor["text"]) == {"id": "t0", "value": 21.5}
    assert sensor["mimeType"] == "application/json"
    assert "resultType" not in status["result"]  # legacy results stay as they were


async def test_blob_base64_goes_in_pieces_of_its_own():
    # Pieces of its own, encoded as they are written (umcp.tool.base64_pieces), never
    # copied into a str: strung together, they are the blob's base64.
    server = McpServer()
    add_device_resources(server, make_state())
    frames = []
    server.set_sender(frames.append)
    await server.handle({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "device://photo/last"}})
    encoded = [piece_utf8(piece) for piece in frames[0] if not isinstance(piece, str)]
    assert encoded and not [text for text in encoded if isinstance(text, str)]
    assert b"".join(bytes(text) for text in encoded) == base64.b64encode(JPEG)


@pytest.mark.parametrize("uri", ["device://nothing", "device://sensor/t9", "device://sensor/", "device://sensor/a/b"])
async def test_unknown_uri_is_32002_on_legacy_and_32602_on_2026(wire, uri):
    add_device_resources(wire.server, make_state())
    await wire.initialize()
    code, message = error_of(await wire.request("resources/read", {"uri": uri}))
    assert code == -32002 and uri in message
    response = await wire.modern_request("resources/read", {"uri": uri})
    code, message = error_of(response)
    assert code == -32602 and uri in message and response["error"]["data"] == {"uri": uri}


async def test_read_failure_is_internal_error(wire):
    def broken():
        raise OSError(5, "EIO")

    wire.server.add_resource("device://broken", "broken", broken)
    wire.server.add_resource("device://odd", "odd", lambda: 42)
    code, message = error_of(await wire.request("resources/read", {"uri": "device://broken"}))
    assert code == -32603 and "device://broken" in message
    code, message = error_of(await wire.request("resources/read", {"uri": "device://odd"}))
    assert code == -32603 and "int" in message


async def test_lists_page_byte_exact_with_opaque_cursor(wire):
    for number in range(40):
        wire.server.add_resource("device://r/%02d" % number, "resource %d" % number, lambda: "x",
                                 description="Something to read. " * 3)
        wire.server.add_resource_template("device://t%02d/{id}" % number, "template %d" % number, lambda v: "x")
    wire.server.page_limit = 1000
    wire.server.set_sender(wire._receive, 50)
    hints = ',"resultType":"complete","ttlMs":0,"cacheScope":"private"'
    for method, key, field, items in (("resources/list", "resources", "uri", wire.server.resources),
                                      ("resources/templates/list", "resourceTemplates", "uriTemplate",
                                       wire.server.templates)):
        entries = {json.loads(item.json())[field]: item.json() for item in items}
        for modern in (False, True):
            seen, cursor, pages = [], None, []
            while True:
                params = {"cursor": cursor} if cursor else {}
                start = len(wire.frames)
                if modern:
                    page = (await wire.modern_request(method, params))["result"]
                    assert page["ttlMs"] == 0 and page["cacheScope"] == "private"
                    assert page["resultType"] == "complete"
                else:
                    page = (await wire.request(method, params))["result"]
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
    code, _ = error_of(await wire.request("resources/list", {"cursor": "device://nope"}))
    assert code == -32602


async def test_subscribe_updated_and_list_changed(wire):
    state = make_state()
    add_device_resources(wire.server, state)
    await wire.initialize()
    assert wire.server.resource_updated("device://status") is False  # nobody subscribed
    assert (await wire.request("resources/subscribe", {"uri": "device://status"}))["result"] == {}
    assert wire.server.resource_updated("device://status") is True
    assert wire.server.resource_updated("device://status") is True  # one notification for both
    assert wire.server.resource_updated("device://log") is False
    start = len(wire.sent)
    await asyncio.sleep(0.01)
    assert wire.sent[start:] == [{"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                  "params": {"uri": "device://status"}}]
    code, _ = error_of(await wire.request("resources/subscribe", {"uri": "device://none"}))
    assert code == -32002
    await wire.request("resources/unsubscribe", {"uri": "device://status"})
    assert wire.server.resource_updated("device://status") is False
    # bounded: the ninth distinct URI is refused
    for number in range(8):
        assert "result" in await wire.request("resources/subscribe", {"uri": "device://sensor/s%d" % number})
    code, message = error_of(await wire.request("resources/subscribe", {"uri": "device://status"}))
    assert code == -32602 and "at most 8" in message
    # resources added or removed after initialize: one list_changed per burst
    start = len(wire.sent)
    wire.server.add_resource("device://extra", "extra", lambda: "x")
    wire.server.remove_resource("device://extra")
    await asyncio.sleep(0.01)
    assert [m["method"] for m in wire.sent[start:]] == ["notifications/resources/list_changed"]
    with pytest.raises(KeyError):
        wire.server.remove_resource("device://extra")
    with pytest.raises(ValueError):
        wire.server.add_resource("device://status", "again", lambda: "x")


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")  # legacy-era methods, on purpose
async def test_sdk_session_lists_reads_and_subscribes():
    server = McpServer(name="dev", version="1")
    state = make_state()
    add_device_resources(server, state)
    updated = []

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/resources/updated":
            updated.append(str(message.params.uri))

    async with umcp_transport(server) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT_S,
                                 message_handler=on_message) as session:
            init = await session.initialize()
            assert init.capabilities.resources.subscribe is True
            listed = await session.list_resources()
            assert [str(r.uri) for r in listed.resources] == ["device://status", "device://log", "device://photo/last"]
            templates = await session.list_resource_templates()
            assert templates.resource_templates[0].uri_template == "device://sensor/{id}"
            photo = await session.read_resource("device://photo/last")
            assert base64.b64decode(photo.contents[0].blob) == JPEG
            await session.subscribe_resource("device://status")
            state["status"]["volume"] = 70
            server.resource_updated("device://status")
            await session.send_ping()
            await asyncio.sleep(0.05)
            assert updated == ["device://status"]
            status = await session.read_resource("device://status")
            assert json.loads(status.contents[0].text) == {"volume": 70}
            await session.unsubscribe_resource("device://status")


# -- revision 2026-07-28 -----------------------------------------------------------------


async def test_discover_shape(wire):
    response = await wire.modern_request("server/discover")
    result = response["result"]
    assert result["resultType"] == "complete" and result["supportedVersions"][0] == MODERN
    assert "2025-11-25" in result["supportedVersions"] and "2024-11-05" in result["supportedVersions"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "test-device", "version": "1.2.3"}
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"
    assert "resources" not in result["capabilities"]
    add_device_resources(wire.server, make_state())
    result = (await wire.modern_request("server/discover"))["result"]
    assert result["capabilities"]["resources"] == {}


async def test_2026_requests_need_no_initialize_and_carry_result_type(wire):
    wire.server.add_tool("echo", "Echo.", None, lambda args: "hi")
    add_device_resources(wire.server, make_state())
    page = (await wire.modern_request("tools/list"))["result"]
    assert page["tools"][0]["name"] == "echo" and page["resultType"] == "complete"
    assert page["ttlMs"] == 0 and page["cacheScope"] == "private" and "nextCursor" not in page
    call = (await wire.modern_request("tools/call", {"name": "echo", "arguments": {}}))["result"]
    assert call["content"][0]["text"] == "hi" and call["resultType"] == "complete"
    bad = (await wire.modern_request("tools/call", {"name": "echo", "arguments": {"x": 1}}))["result"]
    assert bad["isError"] is True and bad["resultType"] == "complete"
    read = (await wire.modern_request("resources/read", {"uri": "device://status"}))["result"]
    assert read["resultType"] == "complete" and read["ttlMs"] == 0 and read["cacheScope"] == "private"
    assert wire.server.default.protocol is None


async def test_unsupported_version_gets_32022_with_supported_list(wire):
    response = await wire.modern_request("tools/list", version="1900-01-01")
    assert response["error"]["code"] == -32022
    assert response["error"]["data"]["requested"] == "1900-01-01"
    assert response["error"]["data"]["supported"][0] == MODERN


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"])
async def test_methods_gone_from_2026_are_32601_there(wire, method):
    response = await wire.modern_request(method, {"level": "info", "uri": "device://status"})
    assert response["error"]["code"] == -32601


async def test_2026_logging_is_request_scoped(wire):
    async def chatty(args):
        await wire.server.log("info", "progress")
        await wire.server.log("error", "bad")
        return True

    wire.server.add_tool("chatty", "Logs.", None, chatty)
    sent = len(wire.sent)
    await wire.modern_request("tools/call", {"name": "chatty", "arguments": {}}, id=1)
    assert [m for m in wire.sent[sent:] if m.get("method") == "notifications/message"] == []
    sent = len(wire.sent)
    await wire.modern_request("tools/call", {"name": "chatty", "arguments": {}}, id=2, log_level="error")
    logs = [m["params"]["data"] for m in wire.sent[sent:] if m.get("method") == "notifications/message"]
    assert logs == ["bad"]
    await wire.server.log("error", "outside any request")  # a 2026 client gets no unscoped logs
    assert wire.sent[-1].get("id") == 2
    code, _ = error_of(await wire.modern_request("tools/list", log_level="loud"))
    assert code == -32602
    await wire.initialize()  # a legacy client gets them again
    await wire.server.log("error", "now")
    assert wire.sent[-1]["params"]["data"] == "now"


async def test_sdk_client_2026_lists_and_reads_resources():
    server = McpServer(name="dev", version="1")
    add_device_resources(server, make_state())
    async with Client(umcp_transport(server), read_timeout_seconds=READ_TIMEOUT_S) as client:
        assert client.protocol_version == MODERN
        listed = await client.list_resources()
        assert len(listed.resources) == 3
        status = await client.read_resource("device://status")
        assert json.loads(status.contents[0].text) == {"volume": 50}
        photo = await client.read_resource("device://photo/last")
        assert base64.b64decode(photo.contents[0].blob) == JPEG
        templates = await client.list_resource_templates()
        assert templates.resource_templates[0].name == "sensor"
        sensor = await client.read_resource("device://sensor/t0")
        assert json.loads(sensor.contents[0].text)["value"] == 21.5


def test_join_pieces_of_a_blob_read_is_valid_json():
    server = McpServer()
    server.add_resource("device://b", "b", lambda: bytearray(b"\x00\x01"))
    frames = []
    server.set_sender(frames.append)
    asyncio.run(server.handle({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "device://b"}}))
    assert json.loads(join_pieces(frames[0]))["result"]["contents"][0]["blob"] == "AAE="
