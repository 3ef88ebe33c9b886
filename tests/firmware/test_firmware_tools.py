"""Every tool of the host board, end to end: the firmware on the simulator, a scripted backend
calling the tools, real HTTP servers for the vision upload and the firmware image, and the
simulated hardware's records (tools/sim/device.py writes them when a boot ends)."""

import asyncio
import base64
import hashlib
import json
import os
import socket

import pytest

from tests.support.firmwareharness import (RUNTIMES, RUNTIMES_MPY, WAIT_S, ImageServer, VisionServer, device_session,
                              run)
from portable_support import esp_image

pytestmark = pytest.mark.timeout(90)

VISIBLE = {
    "self.get_device_status", "self.alarms.add", "self.alarms.list", "self.alarms.remove", "self.audio_speaker.set_volume", "self.screen.set_brightness",
    "self.screen.set_theme", "self.camera.take_photo",
    # the host board's own tools, after the common ones
    "self.led_strip.set_color", "self.led_strip.get_state", "self.host.get_temperature",
}
USER_ONLY = {
    "self.get_system_info", "self.reboot", "self.upgrade_firmware", "self.screen.get_info",
    "self.assets.set_download_url", "self.camera.get_photo", "self.tools.set_enabled",
}
ES8311_DAC_VOLUME = 0x32  # 0x00 = -95.5 dB ... 0xBF = 0 dB
PWM_FULL = 65535


def error_text(reply):
    """The message of a refused call: a JSON-RPC error or an isError result."""
    if "error" in reply:
        return reply["error"]["message"]
    assert reply["result"]["isError"] is True, reply
    return reply["result"]["content"][0]["text"]


async def call_error(device, name, arguments):
    return error_text(await device.request("tools/call", {"name": name, "arguments": arguments}))


def dac_volume_writes(record):
    return [value for reg, value in record["es8311_writes"] if reg == ES8311_DAC_VOLUME]


@pytest.mark.parametrize("micropython", RUNTIMES_MPY)
def test_every_tool_on_the_host_board(tmp_path, micropython):
    async def scenario(vision):
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            init = await device.initialize({"url": vision.url, "token": "vision-token"})
            visible, _ = await device.list_tools()
            every, _ = await device.list_tools(with_user_tools=True)
            assert {t["name"] for t in visible} == VISIBLE
            assert {t["name"] for t in every} == VISIBLE | USER_ONLY
            assert visible[0]["annotations"]["readOnlyHint"] is True

            status = await device.call_json("self.get_device_status")
            assert status["audio_speaker"] == {"volume": 70}  # the settings' default
            assert status["screen"] == {"brightness": 75, "theme": "light"}
            assert status["network"] == {"type": "host"}
            assert status["board"] == "host"

            assert await device.call_json("self.audio_speaker.set_volume", {"volume": 50})
            assert "volume" in await call_error(device, "self.audio_speaker.set_volume",
                                                {"volume": 101})
            assert await device.call_json("self.screen.set_brightness", {"brightness": 30})
            assert await device.call_json("self.screen.set_theme", {"theme": "dark"})
            message = await call_error(device, "self.screen.set_theme", {"theme": "blue"})
            assert "light" in message and "dark" in message
            status = await device.call_json("self.get_device_status")
            assert status["audio_speaker"] == {"volume": 50}
            assert status["screen"] == {"brightness": 30, "theme": "dark"}

            photo = await device.call("self.camera.take_photo", {"question": "What is it?"})
            assert not photo["isError"], photo
            assert json.loads(photo["content"][0]["text"])["response"] == VisionServer.ANSWER
            picture = await device.call("self.camera.get_photo")
            assert not picture["isError"], picture
            (block,) = picture["content"]
            assert (block["type"], block["mimeType"]) == ("image", "image/jpeg")
            jpeg = base64.b64decode(block["data"], validate=True)
            assert jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9"

            assert await device.call_json("self.led_strip.set_color",
                                          {"red": 255, "green": 0, "blue": 8})
            state = await device.call_json("self.led_strip.get_state")
            assert state == {"color": [255, 0, 8], "leds": 8}
            assert isinstance((await device.call_json("self.host.get_temperature"))["celsius"],
                              (int, float))

            info = await device.call_json("self.get_system_info")
            assert info["board"] == "host"
            assert info["firmware_version"] == init["serverInfo"]["version"]
            assert info["runtime"].startswith("MicroPython" if micropython else "CPython")
            assert info["device_id"] == device.headers["Device-Id"]
            assert info["ota"] == {"running": "ota_0", "boot": "ota_0"}
            assert info["uptime_s"] >= 0
            # The incoming message limit: an eighth of the heap free at boot on MicroPython,
            # the link's default where the heap is unknown; announced in initialize.
            limit = init["capabilities"]["experimental"]["messageLimit"]["maxBytes"]
            assert info["max_message"] == limit
            assert 2048 <= limit <= 32768 if micropython else limit == 32768
            screen = await device.call_json("self.screen.get_info")
            assert (screen["width"], screen["height"]) == (320, 240)
            assert await device.call_json("self.assets.set_download_url",
                                          {"url": "http://assets.example/pack.bin"})
            assert sim.stop() == 0
            return device.headers, sim

    with VisionServer() as vision:
        headers, sim = run(scenario(vision))
        # The upload: question then a JPEG file, with the vision token and the device's ids.
        assert len(vision.uploads) == 1
        upload_headers, parts = vision.uploads[0]
    assert upload_headers["Authorization"] == "Bearer vision-token"
    assert upload_headers["Device-Id"] == headers["Device-Id"]
    assert upload_headers["Client-Id"] == headers["Client-Id"]
    assert [(name, filename, ctype) for name, filename, ctype, _ in parts] == [
        ("question", None, "text/plain"), ("file", "photo.jpg", "image/jpeg")]
    assert parts[0][3] == b"What is it?"
    jpeg = parts[1][3]
    assert jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9"

    # The hardware: what the drivers did, as the simulated machine recorded it.
    record = sim.records()[-1]
    assert record["reason"] == "stop"
    restored, set_50 = dac_volume_writes(record)[-2:]
    assert 0 < set_50 < restored < 0xBF + 1  # volume 50 is quieter than 70, above mute
    assert record["backlight_duty_u16"][-1] == 30 * PWM_FULL // 100
    assert record["led_frames"][-1] == [[255, 0, 8]] * 8
    settings = sim.read_settings()
    assert (settings["volume"], settings["brightness"], settings["theme"]) == (50, 30, "dark")
    assert settings["asset_url"] == "http://assets.example/pack.bin"


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_photo_without_a_reachable_vision_service_is_a_clear_error(tmp_path, micropython):
    # A bound socket that does not listen: connecting to its port is refused.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead_url = "http://127.0.0.1:%d/mcp/vision/explain" % closed.getsockname()[1]

        async def scenario():
            async with device_session(tmp_path, micropython) as (backend, sim, device):
                message = await call_error(device, "self.camera.take_photo", {"question": "hi?"})
                assert "vision" in message and "initialize" in message
                await device.initialize({"url": dead_url, "token": "t"})
                message = await call_error(device, "self.camera.take_photo", {"question": "hi?"})
                assert "vision service" in message and dead_url in message, message
                assert (await device.request("ping"))["result"] == {}

        run(scenario())


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_settings_survive_a_restart(tmp_path, micropython):
    async def first_boot():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            await device.call("self.audio_speaker.set_volume", {"volume": 37})
            await device.call("self.screen.set_theme", {"theme": "dark"})

    async def second_boot():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            return sim, await device.call_json("self.get_device_status")

    run(first_boot())
    sim, status = run(second_boot())
    assert status["audio_speaker"] == {"volume": 37}
    assert status["screen"]["theme"] == "dark"
    first, second = sim.records()
    # The second boot put the saved volume back into the codec before anyone asked.
    assert dac_volume_writes(second)[0] == dac_volume_writes(first)[-1]


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_reboot_tool_and_system_command_restart_the_firmware(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            result = await device.call("self.reboot")
            assert result == {"content": [{"type": "text", "text": "true"}], "isError": False}
            again = await backend.next_device()  # the firmware booted again: a new hello
            assert again.hello["type"] == "hello"
            # It said goodbye before the reset: a normal close, not a dropped connection.
            await asyncio.wait_for(backend.connection_ended.wait(), WAIT_S)
            assert backend.close_codes[0] == 1000
            await again.send_raw(json.dumps({"type": "system", "command": "reboot"}))
            third = await backend.next_device()
            assert (await third.request("ping"))["result"] == {}
            return sim

    sim = run(scenario())
    assert [r["reason"] for r in sim.records()] == ["reset", "reset", "stop"]
    with open(sim.log_path) as log:
        assert "Traceback" not in log.read()  # a reset is how a reboot ends, not an error


def test_upgrade_firmware_sets_boot_only_for_the_right_image(tmp_path):
    # With a progress token the client follows the upgrade: the call answers when it is done.
    image = esp_image(150 * 1024)  # a valid ESP32-S3 application image, SHA-256 appended
    digest = hashlib.sha256(image).hexdigest()
    follow = {"progressToken": "ota-1"}
    corrupt = bytearray(image)
    corrupt[5000] ^= 0x10  # a byte of a segment: the checksum and the appended hash differ
    other_chip = esp_image(150 * 1024, chip_id=0x0000)  # an ESP32 image

    async def scenario(server, bad_server, chip_server):
        async with device_session(tmp_path) as (backend, sim, device):
            wrong = await device.call("self.upgrade_firmware",
                                      {"url": server.url, "sha256": "0" * 64}, meta=follow)
            assert wrong["isError"] and "SHA-256" in wrong["content"][0]["text"]
            missing = await device.call("self.upgrade_firmware",
                                        {"url": server.base + "/nope.bin", "sha256": digest},
                                        meta=follow)
            assert missing["isError"] and "404" in missing["content"][0]["text"]
            # url alone (as the reference's callers send it): the image checks itself.
            bad = await device.call("self.upgrade_firmware", {"url": bad_server.url}, meta=follow)
            assert bad["isError"] and "checksum mismatch" in bad["content"][0]["text"], bad
            wrong_chip = await device.call("self.upgrade_firmware", {"url": chip_server.url},
                                           meta=follow)
            assert wrong_chip["isError"], wrong_chip
            assert "chip id 0x0000, this is 0x0009" in wrong_chip["content"][0]["text"]
            assert chip_server.requests == 1
            info = await device.call_json("self.get_system_info")
            assert info["ota"] == {"running": "ota_0", "boot": "ota_0"}

            device.notifications.clear()  # the failed downloads' progress
            good = await device.call("self.upgrade_firmware",
                                     {"url": server.url, "sha256": digest}, meta=follow)
            assert not good["isError"], good
            progress = [n["params"] for n in device.notifications
                        if n["method"] == "notifications/progress"]
            assert progress and all(p["progressToken"] == "ota-1" for p in progress)
            steps = [p["progress"] for p in progress]
            assert steps == sorted(steps) and steps[-1] == len(image)

            rebooted = await backend.next_device()
            info = await rebooted.call_json("self.get_system_info")
            assert info["ota"] == {"running": "ota_1", "boot": "ota_1"}
            return sim

    with ImageServer(image) as server, ImageServer(bytes(corrupt)) as bad_server, \
            ImageServer(other_chip) as chip_server:
        sim = run(scenario(server, bad_server, chip_server))
        assert server.requests == 3
    upgrade_boot, new_boot = sim.records()
    assert upgrade_boot["reason"] == "reset"
    assert upgrade_boot["set_boot_calls"] == ["ota_1"]  # once: the wrong digest never got it
    assert upgrade_boot["written_blocks"]["ota_0"] == []  # the running image is untouched
    assert new_boot["running"] == "ota_1"
    assert new_boot["marked_valid"] is True  # the new image booted well and kept itself


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_good_upgrade_then_one_cut_off_leaves_a_flash_that_boots_again(tmp_path, micropython):
    # Both OTA partitions hold data once a download breaks after a good upgrade: the
    # simulated flash must still be saved as valid JSON and boot the good image again.
    image = esp_image(150 * 1024)
    digest = hashlib.sha256(image).hexdigest()
    follow = {"progressToken": "up"}

    async def upgrades(good, cut):
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            done = await device.call("self.upgrade_firmware", {"url": good.url, "sha256": digest},
                                     meta=follow)
            assert not done["isError"], done
            rebooted = await backend.next_device()
            broken = await rebooted.call("self.upgrade_firmware", {"url": cut.url, "sha256": digest},
                                         meta=follow)
            assert broken["isError"], broken
            info = await rebooted.call_json("self.get_system_info")
            assert info["ota"] == {"running": "ota_1", "boot": "ota_1"}
            return sim

    async def restarted():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            return await device.call_json("self.get_system_info")

    with ImageServer(image) as good, ImageServer(image, cut_at=70 * 1024) as cut:
        sim = run(upgrades(good, cut))
        assert cut.requests == 1
    upgrade_boot, new_boot = sim.records()
    assert new_boot["written_blocks"]["ota_0"], "the cut download wrote part of ota_0"
    assert new_boot["set_boot_calls"] == []
    with open(tmp_path / "hwsim-flash.json") as f:
        flash = json.load(f)
    assert flash["boot"] == "ota_1"
    assert bytes.fromhex(flash["partitions"]["ota_1"])[:len(image)] == image
    assert set(flash["partitions"]) == {"ota_0", "ota_1"}
    info = run(restarted())
    assert info["ota"] == {"running": "ota_1", "boot": "ota_1"}


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_an_image_announced_larger_than_the_partition_is_refused_before_any_write(
        tmp_path, micropython):
    # The simulated OTA partitions hold 1 MiB; this image announces (and is) 4 KiB more.
    image = b"\xe9" + os.urandom(1024 * 1024 + 4095)
    digest = hashlib.sha256(image).hexdigest()

    async def scenario(server):
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            refused = await device.call("self.upgrade_firmware",
                                        {"url": server.url, "sha256": digest},
                                        meta={"progressToken": "too-big"})
            assert refused["isError"], refused
            text = refused["content"][0]["text"]
            assert "exceeds the 1048576-byte partition" in text and str(len(image)) in text, text
            assert not [n for n in device.notifications
                        if n["method"] == "notifications/progress"]  # no byte was written
            info = await device.call_json("self.get_system_info")
            assert info["ota"] == {"running": "ota_0", "boot": "ota_0"}
            return sim

    with ImageServer(image) as server:
        sim = run(scenario(server))
        assert server.requests == 1
    (record,) = sim.records()
    assert record["written_blocks"] == {"ota_0": [], "ota_1": []}, record["written_blocks"]
    assert record["set_boot_calls"] == []


def started_text(result, url):
    assert not result["isError"], result
    text = result["content"][0]["text"]
    assert text.startswith("upgrade started") and url in text, text
    return text


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_upgrade_without_a_progress_token_answers_at_once_and_logs_the_outcome(
        tmp_path, micropython):
    # As the xiaozhi backend calls it: no progress token, and 30 s for an answer.
    image = esp_image(150 * 1024)
    digest = hashlib.sha256(image).hexdigest()

    async def scenario(server):
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            message = await call_error(device, "self.upgrade_firmware",
                                       {"url": server.url, "sha256": "beef"})
            assert "64 hex digits" in message
            assert server.requests == 0  # refused before any download

            # A wrong digest: "started" while the download is held, a second upgrade is
            # refused meanwhile, then the mismatch arrives as an error log message.
            started_text(await device.call("self.upgrade_firmware",
                                           {"url": server.url, "sha256": "0" * 64}), server.url)
            assert await asyncio.to_thread(server.received.wait, WAIT_S)
            assert "already running" in await call_error(
                device, "self.upgrade_firmware", {"url": server.url, "sha256": digest})
            server.release()
            failed = (await device.notification("notifications/message"))["params"]
            assert failed["level"] == "error" and "SHA-256 mismatch" in failed["data"], failed
            assert (await device.call_json("self.get_system_info"))["ota"] == {
                "running": "ota_0", "boot": "ota_0"}

            # url alone: the image's appended SHA-256 and checksum are what is checked
            started_text(await device.call("self.upgrade_firmware", {"url": server.url}),
                         server.url)
            done = (await device.notification("notifications/message"))["params"]
            assert done["level"] == "info" and "rebooting" in done["data"], done
            rebooted = await backend.next_device()
            info = await rebooted.call_json("self.get_system_info")
            assert info["ota"] == {"running": "ota_1", "boot": "ota_1"}
            assert not [n for n in device.notifications
                        if n["method"] == "notifications/progress"]  # nobody asked for it
            return sim

    with ImageServer(image, hold=True) as server:
        sim = run(scenario(server))
        assert server.requests == 2
    upgrade_boot, new_boot = sim.records()
    assert upgrade_boot["reason"] == "reset"
    assert upgrade_boot["set_boot_calls"] == ["ota_1"]  # only for the right image
    assert upgrade_boot["written_blocks"]["ota_0"] == []
    assert new_boot["running"] == "ota_1" and new_boot["marked_valid"] is True
