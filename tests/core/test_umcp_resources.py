"""Resources through the official SDK's own clients in both eras (a legacy ClientSession:
list, read, subscribe; the 2026-07-28 Client: list and read). McpServer's resource cases
themselves are portable (tests/portable/test_portable_umcp_resources.py): they run on every
runtime, checked against the SDK's types under pytest."""

import asyncio
import base64
import json

import pytest
from mcp import ClientSession
from mcp.client import Client

from tests.core.test_umcp_sdk import READ_TIMEOUT_S, umcp_transport
from test_portable_umcp_resources import JPEG, add_device_resources, make_state  # tests/portable
from umcp import McpServer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(20)]

MODERN = "2026-07-28"


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
