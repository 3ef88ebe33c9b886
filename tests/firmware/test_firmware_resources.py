"""The firmware's resources end to end: the simulator (CPython and MicroPython) behind a
scripted xiaozhi backend; a subscription to device://status hears about set_volume, and
device://photo/last holds the JPEG take_photo took."""

import base64
import json

import pytest

from tests.support.firmwareharness import RUNTIMES, VisionServer, device_session, run

pytestmark = pytest.mark.timeout(90)

MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {}}


async def read(device, uri, meta=None):
    params = {"uri": uri}
    if meta:
        params["_meta"] = meta
    reply = await device.request("resources/read", params)
    assert "result" in reply, reply
    (contents,) = reply["result"]["contents"]
    assert contents["uri"] == uri
    return contents


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_resources_of_the_host_board(tmp_path, micropython):
    async def scenario(vision):
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            init = await device.initialize({"url": vision.url, "token": "vision-token"})
            assert init["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
            listed = (await device.request("resources/list"))["result"]["resources"]
            assert [r["uri"] for r in listed] == ["device://status", "device://system", "device://log",
                                                  "device://alarms", "device://photo/last"]
            assert (await device.request("resources/templates/list"))["result"] == {"resourceTemplates": []}

            status = await read(device, "device://status")
            assert status["mimeType"] == "application/json"
            assert json.loads(status["text"]) == await device.call_json("self.get_device_status")
            system = json.loads((await read(device, "device://system"))["text"])
            assert system["board"] == "host" and system["firmware_version"] == init["serverInfo"]["version"]

            # a subscriber hears about a volume change, then reads the new status
            assert (await device.request("resources/subscribe", {"uri": "device://status"}))["result"] == {}
            assert await device.call_json("self.audio_speaker.set_volume", {"volume": 35})
            updated = await device.notification("notifications/resources/updated")
            assert updated["params"] == {"uri": "device://status"}
            assert json.loads((await read(device, "device://status"))["text"])["audio_speaker"] == {"volume": 35}
            assert await device.call_json("self.screen.set_theme", {"theme": "dark"})
            assert (await device.notification("notifications/resources/updated"))["params"]["uri"] == "device://status"
            await device.request("resources/unsubscribe", {"uri": "device://status"})

            # no photo yet: not found (-32002 on this revision); then the one take_photo took
            missing = await device.request("resources/read", {"uri": "device://photo/last"})
            assert missing["error"]["code"] == -32002 and "device://photo/last" in missing["error"]["message"]
            photo = await device.call("self.camera.take_photo", {"question": "What is it?"})
            assert not photo["isError"], photo
            blob = await read(device, "device://photo/last")
            assert blob["mimeType"] == "image/jpeg"
            jpeg = base64.b64decode(blob["blob"], validate=True)
            _, parts = vision.uploads[-1]
            assert jpeg == [data for name, _, _, data in parts if name == "file"][0]
            assert jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9"

            # the recent log: what the server logs of a client's message lands there, lines
            # bounded (a theme outside the enum no longer reaches the tool to be logged)
            await device.send_mcp({"jsonrpc": "2.0", "method": "notifications/sepia"})
            log = (await read(device, "device://log"))["text"]
            lines = log.splitlines()
            assert 0 < len(lines) <= 32 and all(len(line) <= 120 for line in lines)
            assert "sepia" in log

            # the same device in revision 2026-07-28's form, no initialize needed
            discover = (await device.request("server/discover", {"_meta": MODERN_META}))["result"]
            assert discover["supportedVersions"][0] == "2026-07-28"
            assert discover["capabilities"]["resources"] == {}
            modern = await device.request("resources/read", {"uri": "device://status", "_meta": MODERN_META})
            assert modern["result"]["resultType"] == "complete" and modern["result"]["ttlMs"] == 0

    with VisionServer() as vision:
        run(scenario(vision))
