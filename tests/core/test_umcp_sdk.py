"""The official MCP Python SDK as a client of umcp, over an in-memory stream transport."""

import asyncio
import base64
from contextlib import asynccontextmanager

import anyio
import pytest
from mcp import ClientSession
from mcp.client import Client
from mcp.shared.message import SessionMessage
from mcp.types import ImageContent as SdkImageContent
from mcp.types import PaginatedRequestParams, TextContent, jsonrpc_message_adapter

from umcp import BOOLEAN, INTEGER, NUMBER, STRING, ImageContent, McpServer, Property
from umcp.compat import join_pieces

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(20)]

READ_TIMEOUT_S = 5
JPEG = b"\xff\xd8\xff\xe0" + bytes(range(200)) + b"\xff\xd9"


@asynccontextmanager
async def umcp_transport(server, overhead=0):
    """A Transport for the SDK: JSON text both ways, as on the device's link."""
    to_client, client_reads = anyio.create_memory_object_stream(64)
    client_writes, to_server = anyio.create_memory_object_stream(64)

    async def deliver(pieces):
        await to_client.send(SessionMessage(jsonrpc_message_adapter.validate_json(join_pieces(pieces))))

    async def serve():
        async for item in to_server:
            await server.handle(item.message.model_dump_json(by_alias=True, exclude_unset=True))

    server.set_sender(deliver, overhead)
    async with anyio.create_task_group() as group:
        group.start_soon(serve)
        yield client_reads, client_writes
        group.cancel_scope.cancel()


def build_device(page_limit=1400):
    server = McpServer(name="esp32-s3-box3", version="2.0.1", page_limit=page_limit)
    state = {"volume": 50}

    def set_volume(args):
        state["volume"] = args["volume"]
        return True

    async def take_photo(args):
        await asyncio.sleep(0)
        return ImageContent(JPEG)

    async def upgrade(args):
        for step in (25, 50, 100):
            await server.progress(step, 100, "at %d%%" % step)
        return {"action": "RESPONSE", "url": args["url"]}

    def broken(args):
        raise RuntimeError('sensor "t0" not found')

    server.add_tool("self.get_device_status", "Device status", None, lambda args: dict(state), read_only=True)
    server.add_tool("self.audio_speaker.set_volume", "Set the volume of the speaker.",
                    [Property("volume", INTEGER, minimum=0, maximum=100)], set_volume, idempotent=True)
    server.add_tool("self.camera.take_photo", "Take a photo.", [Property("question", STRING)], take_photo)
    server.add_tool("self.sensor.read", "Read a sensor.", [Property("raw", BOOLEAN, default=False)], broken)
    for number in range(30):
        server.add_tool("self.board.extra_%02d" % number, "扩展功能 %d. " % number + "Does a thing. " * 12,
                        [Property("level", INTEGER, default=1, minimum=0, maximum=9)], lambda args: args["level"])
    server.add_user_only_tool("self.upgrade_firmware", "Upgrade the firmware.", [Property("url", STRING)], upgrade)
    return server, state


async def list_everything(session):
    names, pages, cursor = [], 0, None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        pages += 1
        names += [tool.name for tool in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            return names, pages


async def test_sdk_client_session_initializes_lists_all_pages_and_calls_tools():
    server, state = build_device()
    logged = []

    async def on_log(params):
        logged.append(params)

    async with umcp_transport(server, overhead=80) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT_S, logging_callback=on_log) as session:
            init = await session.initialize()
            assert init.protocol_version == "2025-11-25"
            assert init.server_info.name == "esp32-s3-box3" and init.server_info.version == "2.0.1"
            assert init.capabilities.tools.list_changed is True

            names, pages = await list_everything(session)
            assert pages > 3
            assert names == [tool.name for tool in server.tools if not tool.user_only]

            await session.send_ping()

            result = await session.call_tool("self.audio_speaker.set_volume", {"volume": 70})
            assert not result.is_error and result.content == [TextContent(type="text", text="true")]
            assert state["volume"] == 70

            result = await session.call_tool("self.audio_speaker.set_volume", {"volume": 170})
            assert result.is_error and "maximum 100" in result.content[0].text
            assert state["volume"] == 70

            photo = await session.call_tool("self.camera.take_photo", {"question": "what is this?"})
            assert isinstance(photo.content[0], SdkImageContent)
            assert base64.b64decode(photo.content[0].data) == JPEG

            failure = await session.call_tool("self.sensor.read", {})
            assert failure.is_error and failure.content[0].text == 'sensor "t0" not found'

            assert (await session.call_tool("self.board.extra_07", {})).content[0].text == "1"

            await server.log("warning", "battery low", logger="power")
            await session.send_ping()  # the log notification is delivered before this answer
            assert [(p.level, p.data, p.logger) for p in logged] == [("warning", "battery low", "power")]


async def test_sdk_calls_an_unlisted_user_only_tool_with_progress():
    # The SDK cannot ask for withUserTools, so it never sees user-only tools; they stay callable.
    server, _ = build_device(page_limit=8000)
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    async with umcp_transport(server) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=READ_TIMEOUT_S) as session:
            await session.initialize()
            names, _ = await list_everything(session)
            assert "self.upgrade_firmware" not in names
            result = await session.call_tool("self.upgrade_firmware", {"url": "http://ota/fw.bin"},
                                             progress_callback=on_progress)
            assert not result.is_error
            assert progress == [(25, 100, "at 25%"), (50, 100, "at 50%"), (100, 100, "at 100%")]


async def test_sdk_client_in_auto_mode_speaks_2026_07_28():
    # The 2.x client first probes server/discover; umcp answers it, so the client stays
    # on revision 2026-07-28: no initialize, every request names its version in _meta.
    server, state = build_device()
    logged = []

    async def on_log(params):
        logged.append(params)

    async def chatty(args):
        await server.log("debug", "not asked for")
        await server.log("warning", "asked for", logger="t")
        return args["x"] * 2

    server.add_tool("self.test.double", "Double a number.", [Property("x", NUMBER)], chatty)
    async with Client(umcp_transport(server), read_timeout_seconds=READ_TIMEOUT_S,
                      logging_callback=on_log, log_level="info") as client:
        assert client.protocol_version == "2026-07-28"
        assert client.server_info.name == "esp32-s3-box3"
        assert server.default.protocol is None  # never initialized
        tools = await client.list_tools()
        assert tools.tools[0].name == "self.get_device_status" and tools.next_cursor
        result = await client.call_tool("self.get_device_status", {})
        assert result.content[0].text == '{"volume":50}'
        result = await client.call_tool("self.audio_speaker.set_volume", {"volume": 170})
        assert result.is_error and "maximum 100" in result.content[0].text
        assert (await client.call_tool("self.test.double", {"x": 1.25})).content[0].text == "2.5"
        assert [(p.level, p.data) for p in logged] == [("warning", "asked for")]
        photo = await client.call_tool("self.camera.take_photo", {"question": "what is this?"})
        assert base64.b64decode(photo.content[0].data) == JPEG


async def test_sdk_client_in_legacy_mode_initializes():
    server, _ = build_device()
    async with Client(umcp_transport(server), read_timeout_seconds=READ_TIMEOUT_S, mode="legacy") as client:
        assert client.session.protocol_version == "2025-11-25"
        result = await client.call_tool("self.get_device_status", {})
        assert result.content[0].text == '{"volume":50}'
