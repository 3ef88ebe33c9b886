"""Devices over MQTT through the bridge: the unchanged firmware on the simulated board,
given only the bridge's OTA URL, checks in, gets MQTT credentials for the bridge's
embedded broker, connects over MQTT+UDP, and an MCP client (the SDK's default mode)
calls its tools through the bridge beside a device that came over WebSocket."""

import json
import subprocess
import sys

import anyio
import pytest
from mcp.client import Client

from tests.bridge.test_bridge import TOKEN, devices_online, free_port, wait_for_line
from tests.support import ROOT
from tools.childprocess import stop_process
from tools.sim.board import SimBoard, config_for

pytestmark = [pytest.mark.timeout(120), pytest.mark.anyio]
OVER_MQTT, OVER_WS = "aa:bb:cc:dd:ee:42", "aa:bb:cc:dd:ee:43"


async def test_a_device_over_mqtt_beside_one_over_websocket(tmp_path):
    ws_port, http_port, device_http_port = free_port(), free_port(), free_port()
    bridge = subprocess.Popen(
        [sys.executable, "-m", "tools.bridge", "--port", str(ws_port), "--token", TOKEN, "--host", "127.0.0.1",
         "--http", str(http_port), "--mqtt", "--mqtt-port", "0", "--device-http-port", str(device_http_port)],
        cwd=ROOT, text=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ota_url = "http://127.0.0.1:%d/xiaozhi/ota/" % device_http_port
    try:
        wait_for_line(bridge.stderr, "MCP clients connect to http://127.0.0.1:%d/mcp" % http_port)
        with open(tmp_path / "devices.log", "w") as log, \
                SimBoard(config_for(ota_url=ota_url, device_id=OVER_MQTT, ota_retry=0.2),
                         root=str(tmp_path / "mqtt"), log=log), \
                SimBoard(config_for(url="ws://127.0.0.1:%d/xiaozhi/v1/" % ws_port, token=TOKEN, device_id=OVER_WS),
                         root=str(tmp_path / "ws"), log=log):
            async with Client("http://127.0.0.1:%d/mcp" % http_port, read_timeout_seconds=30) as client:
                devices = await devices_online(client, 2)
                assert devices["dev-ddee42"]["transport"] == "mqtt"
                assert devices["dev-ddee43"]["transport"] == "websocket"
                with anyio.fail_after(30):
                    for alias, volume in (("dev-ddee42", 37), ("dev-ddee43", 38)):
                        result = await client.call_tool(alias + "__audio_speaker_set_volume", {"volume": volume})
                        assert not result.is_error, result
                        status = await client.call_tool(alias + "__get_device_status", {})
                        assert json.loads(status.content[0].text)["audio_speaker"]["volume"] == volume
    finally:
        stop_process(bridge)
