"""tools.backend against the simulated device (tools.sim, a real subprocess) on loopback:
onboarding as xiaozhi-esp32-server does it, tool calls, the vision endpoint, the console,
refusals; and against scripted devices for the faults a real device should not have."""

import asyncio
import contextlib
import http.client
import json
import socket
import struct
import urllib.error
import urllib.parse
import urllib.request

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tools.backend import Backend
from tools.backend.console import Console
from tools.hub.vision import VISION_PATH, describe_image, jpeg_dimensions
from tools.sim.board import SimBoard, config_for

pytestmark = [pytest.mark.timeout(60), pytest.mark.anyio]
TOKEN = "test-token"
WAIT = 30  # seconds for the simulated device to boot and onboard


def tiny_jpeg(width, height, progressive=False):
    """SOI, an APP0 segment, a fill byte, then SOF0/SOF2 with the dimensions, then EOI."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff" + (b"\xc2" if progressive else b"\xc0") + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + b"\xff" + sof + b"\xff\xd9"


def simulated_photo():
    """The JPEG the host board's camera takes: its driver over the simulated camera module."""
    import hwsim
    from boards import host
    from drivers.camera import Camera

    try:
        return Camera(host.PINS["camera"]).capture()
    finally:
        hwsim.reset()


class Recording(list):
    """A list that can be awaited until some item satisfies `test`."""

    def __init__(self):
        super().__init__()
        self._grew = asyncio.Event()

    def append(self, item):
        super().append(item)
        self._grew.set()

    async def wait_for(self, test):
        while not any(test(item) for item in self):
            self._grew.clear()
            await self._grew.wait()


class Transcript(Recording):
    def __call__(self, line):
        self.append(line)

    def text(self):
        return "\n".join(self)


@contextlib.asynccontextmanager
async def running_backend(**options):
    out = Transcript()
    backend = Backend(TOKEN, host="127.0.0.1", out=out, **options)
    await backend.start()
    try:
        yield backend, out
    finally:
        await backend.close()


@contextlib.contextmanager
def device_for(backend, tmp_path, max_payload=None):
    """The simulated device connected to `backend`."""
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
    with open(tmp_path / "device.log", "w") as log:
        with SimBoard(config_for(url=url, token=TOKEN, max_payload=max_payload), root=str(tmp_path / "state"),
                      log=log) as sim:
            yield sim


def text_of(result):
    return result["content"][0]["text"]


async def test_onboards_pages_calls_and_drops_a_vanished_device(tmp_path):
    async with running_backend() as (backend, out):
        with device_for(backend, tmp_path, max_payload=1200) as sim:
            device = await backend.wait_ready(WAIT)
            transcript = out.text()
            assert '"features":{"mcp":true}' in transcript
            assert "answered hello, session %s" % device.session_id in transcript
            assert "-> initialize protocolVersion 2024-11-05, vision %s" % backend.vision_url in transcript
            pages = [line for line in out if "<- tools/list page" in line]
            assert len(pages) >= 2 and "last page" in pages[-1]
            names = [tool["name"] for tool in device.tools]
            assert len(names) == len(set(names))
            assert {"self.get_device_status", "self.audio_speaker.set_volume", "self.camera.take_photo"} <= set(names)
            assert "self.reboot" not in names  # user-only tools are not offered to the model

            result = await backend.call(device, "self.audio_speaker.set_volume", {"volume": 37})
            assert result is not None and not result.get("isError")
            status = json.loads(text_of(await backend.call(device, "self.get_device_status")))
            assert status["audio_speaker"]["volume"] == 37

            photo = await backend.call(device, "self.camera.take_photo", {"question": "What is on the desk?"})
            answer = json.loads(text_of(photo))
            assert answer["success"] is True
            assert "JPEG image" in answer["response"] and "pixels" in answer["response"]
            assert "What is on the desk?" in answer["response"]
            assert any(line.startswith("vision: %s uploaded a JPEG" % device.id) for line in out)

            assert await backend.call(device, "self.no_such_tool") is None
            assert "<- error -32602" in out[-1]

            sim.stop(wait=False)
            await asyncio.wait_for(device.closed.wait(), 10)
            assert device.id not in backend.devices
            assert "%s disconnected" % device.id in out


async def test_console_lists_devices_and_tools_and_calls(tmp_path):
    async with running_backend() as (backend, out):
        with device_for(backend, tmp_path):
            device = await backend.wait_ready(WAIT)
            console = Console(backend, out)
            await console.execute("devices")
            assert out[-1].startswith("1. %s  session %s" % (device.id, device.session_id))
            await console.execute("tools --all 1")
            listing = out.text()
            assert "self.reboot" in listing and "self.get_device_status" in listing
            await console.execute('call %s self.audio_speaker.set_volume {"volume": 64}' % device.id)
            await console.execute("call 1 self.get_device_status")
            assert json.loads(out[-1].split("<- ", 1)[1])["audio_speaker"]["volume"] == 64
            await console.execute("call 1 self.camera.get_photo")  # a user-only tool returning an image
            assert out[-1] == "%s: <- [image image/jpeg, %d bytes]" % (device.id, len(simulated_photo()))
            await console.execute("call 1 self.audio_speaker.set_volume {volume: 1}")
            assert out[-1].startswith("error: arguments are not JSON")
            await console.execute("call 9 self.reboot")
            assert out[-1] == "error: no device '9' (see `devices`)"
            assert await console.execute("quit") is False


async def test_refuses_a_wrong_or_missing_token_with_a_reason():
    async with running_backend() as (backend, out):
        url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
        for headers, reason in (({"Authorization": "Bearer nope"}, "wrong token"), ({}, "missing token")):
            with pytest.raises(InvalidStatus) as refused:
                async with connect(url, additional_headers=headers):
                    pass
            assert refused.value.response.status_code == 401
            assert reason in refused.value.response.body.decode()
        with pytest.raises(InvalidStatus) as refused:
            async with connect("ws://127.0.0.1:%d/other" % backend.port):
                pass
        assert refused.value.response.status_code == 404
        assert "refused a device: wrong token" in out.text()


# ---- scripted devices: faults the simulator does not have --------------------------

@contextlib.asynccontextmanager
async def scripted_device(backend, answer, device_id="11:22:33:44:55:66"):
    """A device that says hello, then answers each request with answer(request) (None:
    stay silent, or answer later with received.reply(id, result)). Yields the list of
    payloads it received."""
    received = Recording()
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
    headers = {"Authorization": "Bearer " + TOKEN, "Device-Id": device_id}
    async with connect(url, additional_headers=headers) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 1, "features": {"mcp": True}}))
        session = json.loads(await ws.recv())["session_id"]

        async def reply(request_id, result):
            reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
            await ws.send(json.dumps({"session_id": session, "type": "mcp", "payload": reply}))

        received.reply = reply

        async def serve():
            async for text in ws:
                payload = json.loads(text)["payload"]
                received.append(payload)
                result = answer(payload) if "id" in payload else None
                if result is not None:
                    await reply(payload["id"], result)

        task = asyncio.create_task(serve())
        try:
            yield received
        finally:
            task.cancel()


def initialize_result():
    return {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}}, "serverInfo": {"name": "x", "version": "1"}}


async def test_a_repeated_cursor_stops_the_listing():
    def answer(request):
        if request["method"] == "initialize":
            return initialize_result()
        return {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": "same"}

    async with running_backend() as (backend, out):
        async with scripted_device(backend, answer) as received:
            await asyncio.wait_for(out.wait_for(lambda line: "onboarding failed" in line), 10)
            assert "repeated tools/list cursor 'same'" in out.text()
            assert [p.get("params", {}).get("cursor") for p in received if p.get("method") == "tools/list"] \
                == [None, "same"]


async def test_a_call_that_gets_no_answer_times_out_and_is_cancelled():
    def answer(request):
        if request["method"] == "initialize":
            return initialize_result()
        if request["method"] == "tools/list":
            return {"tools": [{"name": "slow", "inputSchema": {"type": "object"}}]}
        return None  # tools/call: never answered

    async with running_backend() as (backend, out):
        async with scripted_device(backend, answer) as received:
            device = await backend.wait_ready(10)
            assert await backend.call(device, "slow", timeout=0.5) is None
            assert out[-1].endswith("<- no answer within 0.5 s")
            call = next(p for p in received if p.get("method") == "tools/call")
            await asyncio.wait_for(received.wait_for(lambda p: p.get("method") == "notifications/cancelled"), 5)
            cancel = next(p for p in received if p.get("method") == "notifications/cancelled")
            assert cancel["params"] == {"requestId": call["id"]}


async def test_calls_beyond_what_a_device_queues_wait_in_the_backend_not_at_the_device():
    # A device answers "busy" once one client has more calls waiting than it queues
    # (umcp: MAX_QUEUED_CALLS), and the backend or the bridge is one client whatever the
    # number of MCP clients behind it: the rest wait here, and every call is answered.
    from tools.hub.xiaozhi import CALLS_IN_FLIGHT

    outstanding = set()
    most = []

    def answer(request):
        if request["method"] == "initialize":
            return initialize_result()
        if request["method"] == "tools/list":
            return {"tools": [{"name": "slow", "inputSchema": {"type": "object"}}]}
        outstanding.add(request["id"])
        most.append(len(outstanding))
        return None  # answered below, a little later

    async with running_backend() as (backend, out):
        async with scripted_device(backend, answer) as received:
            device = await backend.wait_ready(10)
            calls = [asyncio.create_task(backend.invoke(device, "slow", {"n": n})) for n in range(20)]
            answered = 0
            while answered < 20:
                await asyncio.sleep(0.02)
                for request_id in sorted(outstanding):
                    outstanding.discard(request_id)
                    await received.reply(request_id, {"content": [{"type": "text", "text": "done"}]})
                    answered += 1
            results = await asyncio.wait_for(asyncio.gather(*calls), 10)
    assert [r["content"][0]["text"] for r in results] == ["done"] * 20
    assert max(most) == CALLS_IN_FLIGHT == 8  # as many as the device queues, never more


# ---- the vision endpoint -----------------------------------------------------------

def test_jpeg_dimensions_come_from_the_sof_marker():
    assert jpeg_dimensions(tiny_jpeg(640, 480)) == (640, 480)
    assert jpeg_dimensions(tiny_jpeg(1600, 1200, progressive=True)) == (1600, 1200)
    assert jpeg_dimensions(b"\xff\xd8\xff\xd9") is None
    assert jpeg_dimensions(b"GIF89a") is None
    assert describe_image(tiny_jpeg(320, 240), "image/jpeg") == "a JPEG image of %d bytes, 320x240 pixels" % len(
        tiny_jpeg(320, 240))
    assert "not a JPEG or PNG" in describe_image(b"hello", "text/plain")


def post_photo(url, token, device_id, image, question="What is this?"):
    boundary = "umcpboundary"
    body = ("--%s\r\nContent-Disposition: form-data; name=\"question\"\r\n\r\n%s\r\n"
            "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\n"
            "Content-Type: image/jpeg\r\n\r\n" % (boundary, question, boundary)).encode() + image + \
        ("\r\n--%s--\r\n" % boundary).encode()
    headers = {"Content-Type": "multipart/form-data; boundary=" + boundary, "Authorization": "Bearer " + token}
    if device_id is not None:
        headers["Device-Id"] = device_id
    request = urllib.request.Request(url, body, headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def announce_oversized_upload(url, token, device_id):
    """Headers announcing a 6 MB upload and no body: only an early answer ends this."""
    parts = urllib.parse.urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
                      "Device-Id: %s\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                      "Content-Length: %d\r\n\r\n" % (parts.path, parts.netloc, token, device_id,
                                                        6 * 1024 * 1024)).encode())
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, json.load(response)


async def test_vision_endpoint_checks_token_and_device_and_describes_the_image():
    async with running_backend() as (backend, out):
        url = "http://127.0.0.1:%d%s" % (backend.http_port, VISION_PATH)
        token = backend.vision.token_for("aa:bb")
        status, answer = await asyncio.to_thread(post_photo, url, token, "aa:bb", tiny_jpeg(800, 600))
        assert status == 200
        assert answer["success"] is True and answer["action"] == "RESPONSE"
        assert "800x600 pixels" in answer["response"] and "What is this?" in answer["response"]
        status, answer = await asyncio.to_thread(post_photo, url, token, "cc:dd", tiny_jpeg(8, 8))
        assert (status, answer["success"]) == (401, False)
        status, answer = await asyncio.to_thread(post_photo, url, "forged", "aa:bb", tiny_jpeg(8, 8))
        assert status == 401
        # A token never given out and no Device-Id: both unknown, which is no match.
        status, answer = await asyncio.to_thread(post_photo, url, "forged", None, tiny_jpeg(8, 8))
        assert status == 401
        # An announced body over the limit is refused before a byte of it is read.
        status, answer = await asyncio.to_thread(announce_oversized_upload, url, token, "aa:bb")
        assert status == 413 and "larger than" in answer["message"]


async def test_a_board_speaking_first_is_one_line_of_the_console(tmp_path):
    # An alarm's listen/detect frame: "[device_call]" + label is said as it is by a xiaozhi
    # server, a label alone is a turn for its model; this backend logs each as one line.
    async with running_backend() as (backend, out):
        with device_for(backend, tmp_path):
            device = await backend.wait_ready(WAIT)
            for arguments in ({"in_seconds": 1, "label": "the oven is hot"},
                              {"in_seconds": 1, "label": "what should I cook?", "ask": True}):
                result = await backend.call(device, "self.alarms.add", arguments)
                assert result is not None and not result.get("isError"), result
            said = "%s says: the oven is hot (a server speaks it as it is)" % device.id
            asked = "%s asks: what should I cook? (a server takes it" % device.id
            await asyncio.wait_for(out.wait_for(lambda line: line.startswith(asked)), WAIT)
            await asyncio.wait_for(out.wait_for(lambda line: line == said), WAIT)
            assert not [line for line in out if "ignored a 'listen'" in line]
