"""tools.bridge with a board that reaches it only as a tool provider at its MCP endpoint
(tools.sim --mcp-endpoint .../mcp_endpoint/mcp/?token=...): the SDK client lists and calls
the board's tools through the bridge as it does a xiaozhi device's."""

import json
import socket
import sys

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.toolnames import check_tool_names
from tests.support import ROOT
from tools.sim.board import SimBoard, config_for

pytestmark = [pytest.mark.timeout(120), pytest.mark.anyio]
TOKEN = "bridge-token"
BOARD = "cc:cc:cc:cc:cc:03"
ALIAS = "shelf"
READ_TIMEOUT = 30


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_a_board_at_the_endpoint_is_listed_and_called_through_the_bridge(tmp_path):
    port = free_port()
    endpoint = "ws://127.0.0.1:%d/mcp_endpoint/mcp/?token=%s" % (port, TOKEN)
    bridge = StdioServerParameters(command=sys.executable, cwd=ROOT, args=[
        "-m", "tools.bridge", "--port", str(port), "--token", TOKEN, "--host", "127.0.0.1",
        "--alias", "endpoint:%s=%s" % (BOARD, ALIAS)])
    config = config_for(device_id=BOARD, mcp_endpoint=endpoint, backoff_min=0.1, backoff_max=0.3)
    with open(tmp_path / "device.log", "w") as log, \
            SimBoard(config, root=str(tmp_path / "state"), log=log):
        async with Client(bridge, read_timeout_seconds=READ_TIMEOUT) as client:
            with anyio.fail_after(READ_TIMEOUT):
                while True:
                    devices = (await client.call_tool("bridge__list_devices", {})).structured_content["devices"]
                    if any(device["online"] and device["alias"] == ALIAS for device in devices):
                        break
                    await anyio.sleep(0.1)
            names = check_tool_names(tool.name for tool in (await client.list_tools()).tools)
            set_volume = await client.call_tool(ALIAS + "__audio_speaker_set_volume", {"volume": 23})
            status = await client.call_tool(ALIAS + "__get_device_status", {})
    shelf = next(device for device in devices if device["alias"] == ALIAS)
    assert shelf["device_id"] == "endpoint:" + BOARD and shelf["transport"] == "mcp_endpoint"
    assert ALIAS + "__audio_speaker_set_volume" in names
    assert ALIAS + "__reboot" not in names  # the owner's user-only tools stay home
    assert set_volume.content[0].text == "true"
    assert json.loads(status.content[0].text)["audio_speaker"]["volume"] == 23
