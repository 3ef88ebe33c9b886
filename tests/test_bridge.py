"""tools.bridge as a real subprocess, the simulated device connected to it, and the
official MCP SDK client on the other side: over stdio and over streamable HTTP."""

import base64
import json
import socket
import subprocess
import sys
import threading

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from test_backend import simulated_photo
from tools.sim.demo import ROOT, simulated_device

pytestmark = [pytest.mark.timeout(90), pytest.mark.anyio]
TOKEN = "bridge-token"
PAGE_LIMIT = 1200  # several tools/list pages from the device
READ_TIMEOUT = 30  # the device may still be booting when the first request arrives
USER_ONLY = {"self.reboot", "self.camera.get_photo"}  # some of the device's user-only tools


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def bridge_command(ws_port, *extra):
    return [sys.executable, "-m", "tools.bridge", "--port", str(ws_port), "--token", TOKEN,
            "--host", "127.0.0.1"] + list(extra)


async def exercise(client):
    """What an MCP client does with the device: every tool, calls, an error, a photo."""
    listing = await client.list_tools()
    assert listing.next_cursor is None  # the bridge followed the device's pages itself
    names = [tool.name for tool in listing.tools]
    assert len(names) == len(set(names))
    assert {"self.get_device_status", "self.audio_speaker.set_volume", "self.camera.take_photo"} <= set(names)
    assert not USER_ONLY & set(names)  # without --user-tools the model is not offered them
    wire = sum(len(json.dumps(tool.model_dump(by_alias=True, exclude_none=True))) for tool in listing.tools)
    assert wire > PAGE_LIMIT  # so the device had to page, and every page arrived
    volume = next(tool for tool in listing.tools if tool.name == "self.audio_speaker.set_volume")
    assert volume.input_schema["properties"]["volume"] == {"type": "integer", "minimum": 0, "maximum": 100}

    result = await client.call_tool("self.audio_speaker.set_volume", {"volume": 42})
    assert not result.is_error and result.content[0].text == "true"
    status = await client.call_tool("self.get_device_status", {})
    assert json.loads(status.content[0].text)["audio_speaker"]["volume"] == 42

    with pytest.raises(MCPError) as unknown:
        await client.call_tool("self.no_such_tool", {})
    assert unknown.value.code == -32602 and "self.no_such_tool" in unknown.value.message
    with pytest.raises(MCPError) as out_of_range:
        await client.call_tool("self.audio_speaker.set_volume", {"volume": 101})
    assert out_of_range.value.code == -32602 and "volume" in out_of_range.value.message

    photo = await client.call_tool("self.camera.take_photo", {"question": "Is anyone there?"})
    assert not photo.is_error
    answer = json.loads(photo.content[0].text)
    assert answer["success"] is True and "JPEG image" in answer["response"]
    assert "Is anyone there?" in answer["response"]


async def test_sdk_client_over_stdio(tmp_path):
    ws_port = free_port()
    server = StdioServerParameters(command=sys.executable, args=bridge_command(ws_port)[1:], cwd=ROOT)
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % ws_port
    async with Client(server, mode="legacy", read_timeout_seconds=READ_TIMEOUT) as client:
        with open(tmp_path / "device.log", "w") as log:
            with simulated_device(url, TOKEN, str(tmp_path / "state"), log, PAGE_LIMIT):
                await exercise(client)


async def test_user_tools_option_lists_them_and_an_image_arrives_as_the_device_sent_it(tmp_path):
    ws_port = free_port()
    server = StdioServerParameters(command=sys.executable, args=bridge_command(ws_port, "--user-tools")[1:],
                                   cwd=ROOT)
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % ws_port
    async with Client(server, mode="legacy", read_timeout_seconds=READ_TIMEOUT) as client:
        with open(tmp_path / "device.log", "w") as log:
            with simulated_device(url, TOKEN, str(tmp_path / "state"), log, PAGE_LIMIT):
                listing = await client.list_tools()
                names = [tool.name for tool in listing.tools]
                assert listing.next_cursor is None and len(names) == len(set(names))
                assert USER_ONLY | {"self.get_device_status", "self.camera.take_photo"} <= set(names)
                photo = await client.call_tool("self.camera.get_photo", {})
    assert not photo.is_error and len(photo.content) == 1
    image = photo.content[0]
    assert (image.type, image.mime_type) == ("image", "image/jpeg")
    jpeg = base64.b64decode(image.data, validate=True)
    assert jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9"  # SOI ... EOI
    assert jpeg == simulated_photo()


async def test_sdk_client_over_streamable_http(tmp_path):
    import anyio

    ws_port, http_port = free_port(), free_port()
    bridge = subprocess.Popen(bridge_command(ws_port, "--http", str(http_port)), cwd=ROOT, text=True,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = "ws://127.0.0.1:%d/xiaozhi/v1/" % ws_port
        with open(tmp_path / "device.log", "w") as log:
            with simulated_device(url, TOKEN, str(tmp_path / "state"), log, PAGE_LIMIT):
                # The bridge says where to connect once it listens there.
                await anyio.to_thread.run_sync(
                    wait_for_line, bridge.stderr, "MCP clients connect to http://127.0.0.1:%d/mcp" % http_port)
                async with Client("http://127.0.0.1:%d/mcp" % http_port, mode="legacy",
                                  read_timeout_seconds=READ_TIMEOUT) as client:
                    await exercise(client)
    finally:
        bridge.terminate()
        bridge.wait(10)


async def test_when_its_device_goes_the_bridge_falls_back_to_another_ready_one(tmp_path):
    """Two devices: calls go to the newest ready one, and to the other once it disconnects."""
    import anyio

    ws_port = free_port()
    server = StdioServerParameters(command=sys.executable, args=bridge_command(ws_port, "--user-tools")[1:],
                                   cwd=ROOT)
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % ws_port
    first, second = "aa:aa:aa:aa:aa:01", "bb:bb:bb:bb:bb:02"
    changed = anyio.Event()

    async def on_message(message):
        # The bridge tells its clients the tool list changed whenever its device changes.
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async def device_changed():
        nonlocal changed
        with anyio.fail_after(READ_TIMEOUT):
            await changed.wait()
        changed = anyio.Event()

    async def answering_device():
        info = await client.call_tool("self.get_system_info", {})
        return json.loads(info.content[0].text)["device_id"]

    async with Client(server, mode="legacy", read_timeout_seconds=READ_TIMEOUT,
                      message_handler=on_message) as client:
        with open(tmp_path / "device.log", "w") as log:
            with simulated_device(url, TOKEN, str(tmp_path / "a"), log, extra=("--device-id", first)):
                assert await answering_device() == first
                changed = anyio.Event()  # what came before belongs to the first device
                with simulated_device(url, TOKEN, str(tmp_path / "b"), log, extra=("--device-id", second)):
                    await device_changed()
                    assert await answering_device() == second
                await device_changed()
                # The second device is gone: the first, still connected and ready, answers.
                assert await answering_device() == first


def wait_for_line(stream, text):
    """Read `stream` up to a line containing `text`, then drain the rest on a thread (so the
    writer never blocks on a full pipe)."""
    for line in stream:
        if text in line:
            threading.Thread(target=stream.read, daemon=True).start()
            return
    raise AssertionError("the bridge ended without saying %r" % text)


async def test_device_notifications_reach_the_client():
    """Progress, log messages and tools/list_changed, sent by a scripted device while a
    call runs, arrive at the SDK client (the simulator sends progress only during OTA)."""
    import anyio
    from websockets.asyncio.client import connect

    ws_port = free_port()
    server = StdioServerParameters(command=sys.executable, args=bridge_command(ws_port)[1:], cwd=ROOT)
    logs, changed = [], anyio.Event()

    async def on_log(params):
        logs.append((params.level, params.data))

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async def device():
        headers = {"Authorization": "Bearer " + TOKEN, "Device-Id": "de:ad:be:ef:00:01"}
        async with connect("ws://127.0.0.1:%d/xiaozhi/v1/" % ws_port, additional_headers=headers) as ws:
            await ws.send(json.dumps({"type": "hello", "version": 1, "features": {"mcp": True}}))
            session = json.loads(await ws.recv())["session_id"]

            async def send(payload):
                await ws.send(json.dumps({"session_id": session, "type": "mcp", "payload": payload}))

            async for text in ws:
                request = json.loads(text)["payload"]
                method, params = request.get("method"), request.get("params") or {}
                if method == "initialize":
                    await send({"jsonrpc": "2.0", "id": request["id"], "result": {
                        "protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": True}},
                        "serverInfo": {"name": "scripted", "version": "1"}}})
                elif method == "tools/list":  # the SDK lists before it checks a result
                    await send({"jsonrpc": "2.0", "id": request["id"], "result": {
                        "tools": [{"name": "self.slow", "inputSchema": {"type": "object"}}]}})
                elif method == "tools/call":
                    token = params["_meta"]["progressToken"]
                    for step in (1, 2):
                        await send({"jsonrpc": "2.0", "method": "notifications/progress",
                                    "params": {"progressToken": token, "progress": step, "total": 2}})
                    await send({"jsonrpc": "2.0", "method": "notifications/message",
                                "params": {"level": "warning", "data": "fan is loud"}})
                    await send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                    await send({"jsonrpc": "2.0", "id": request["id"],
                                "result": {"content": [{"type": "text", "text": "done"}]}})

    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total))

    async with Client(server, mode="legacy", read_timeout_seconds=READ_TIMEOUT, logging_callback=on_log,
                      message_handler=on_message) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(device)
            result = await client.call_tool("self.slow", {}, progress_callback=on_progress)
            with anyio.fail_after(10):
                await changed.wait()
            group.cancel_scope.cancel()
    assert result.content[0].text == "done"
    assert progress == [(1, 2), (2, 2)]
    assert ("warning", "fan is loud") in logs
