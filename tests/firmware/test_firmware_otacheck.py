"""The OTA check end to end: `python3 -m tools.sim --ota-url URL` (config.json holds only
Wi-Fi and that URL) asks a scripted OTA server (tests/support/otacheckserver.py) where to connect,
sets its clock, activates, offers or installs newer firmware, saves the server settings,
and connects over WebSocket or MQTT+UDP (an in-process amqtt broker and a scripted MQTT
backend); on CPython and under the MicroPython unix port."""

import asyncio
import contextlib
import hashlib
import hmac
import json
import os

import pytest
import umcp

from tests.support.firmwareharness import RUNTIMES, TOKEN, WAIT_S, Backend, ImageServer, Sim, run
from tests.support.mqttharness import MqttBackend
from tests.support.otacheckserver import OtaCheckServer
from portable_support import esp_image

pytestmark = pytest.mark.timeout(120)

# The firmware reports umcp's release; an offer is for the next one.
VERSION = umcp.__version__
NEWER = ".".join(VERSION.split(".")[:1] + [str(int(VERSION.split(".")[1]) + 1), "0"])
SERVER_TIME = {"timestamp": 1795000000000, "timezone_offset": 480}  # 2026-11-18 11:06:40 UTC
CLOCK_LINE = "clock set to 2026-11-18 19:06:40"  # with the +8 h offset, as the reference


def websocket_answer(backend, **extra):
    answer = {"server_time": SERVER_TIME, "firmware": {"version": VERSION, "url": ""},
              "websocket": {"url": backend.url, "token": TOKEN}}
    answer.update(extra)
    return answer


def mqtt_block(broker):
    return {"endpoint": "127.0.0.1:%d" % broker.port, "client_id": "GID_host@@@aa_bb@@@x",
            "username": "dev", "password": "pw", "publish_topic": "device-server",
            "subscribe_topic": "devices/p2p/aa_bb"}


@contextlib.contextmanager
def sim_running(tmp_path, ota, micropython=False, extra_config=None):
    config = {"ota_retry": 0.2}
    config.update(extra_config or {})
    sim = Sim(None, tmp_path, micropython=micropython, ota_url=ota.url,
              extra_config=config).start()
    try:
        yield sim
    finally:
        assert sim.stop() == 0


def sim_log(sim):
    with open(sim.log_path, errors="replace") as f:
        return f.read()


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_ota_url_alone_gives_the_websocket_server(tmp_path, micropython):
    async def scenario():
        backend = await Backend().start()
        with OtaCheckServer([websocket_answer(backend)]) as ota:
            with sim_running(tmp_path, ota, micropython) as sim:
                device = await backend.next_device()
                assert device.headers["Authorization"] == "Bearer " + TOKEN
                await device.initialize()
                result = await device.call("self.audio_speaker.set_volume", {"volume": 33})
                assert not result.get("isError"), result
                status = await device.call_json("self.get_device_status")
                assert status["audio_speaker"]["volume"] == 33
                sim.clock = (await device.call_json("self.get_system_info"))["rtc"]
        await backend.stop()
        return sim, ota

    sim, ota = run(scenario())
    headers, body = ota.checks[0]
    assert headers["Device-Id"] == body["mac_address"]
    assert headers["Client-Id"] == body["uuid"] and len(body["uuid"]) == 36
    assert headers["User-Agent"] == "host/" + VERSION
    assert headers["Activation-Version"] == "1"
    assert headers["Accept-Language"] == "en-US"
    assert headers["Content-Type"] == "application/json"
    assert body["application"]["version"] == VERSION and body["board"]["type"] == "host"
    assert "chip_model_name" in body
    settings = sim.read_settings()
    assert settings["transport"] == {"websocket": {"url": ota.answers[0]["websocket"]["url"],
                                                   "token": TOKEN}}
    if not micropython:  # it logs warnings only
        assert CLOCK_LINE in sim_log(sim)
    assert sim.clock[:7] == [2026, 11, 18, 2, 19, 6, 40]  # a Wednesday, +8 h


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_ota_answer_with_mqtt_connects_over_mqtt(tmp_path, micropython, broker):

    async def scenario():
        backend = await MqttBackend(broker.port).start()
        try:
            with OtaCheckServer([{"server_time": SERVER_TIME, "mqtt": mqtt_block(broker)}]) as ota:
                with sim_running(tmp_path / "sim", ota, micropython) as sim:
                    device = await backend.next_device(30)
                    assert device.hello["version"] == 3 and device.hello["transport"] == "udp"
                    await device.initialize()
                    tools, _ = await device.list_tools()
                    assert "self.get_device_status" in [t["name"] for t in tools]
                    result = await device.call("self.audio_speaker.set_volume", {"volume": 44})
                    assert not result.get("isError"), result
                    assert (await device.request("ping"))["result"] == {}
                    # A reboot: the device says goodbye, then comes back with a hello.
                    await device.send_raw(json.dumps({"session_id": device.session_id,
                                                      "type": "system", "command": "reboot"}))
                    again = await backend.next_device(30)
                    assert backend.goodbyes == [{"session_id": device.session_id,
                                                 "type": "goodbye"}]
                    assert (await again.request("ping"))["result"] == {}
        finally:
            await backend.stop()
        return sim

    sim = run(scenario())
    assert sim.read_settings()["transport"]["mqtt"]["client_id"] == "GID_host@@@aa_bb@@@x"


def test_activation_pending_then_done(tmp_path):
    serial = "SN-0123456789"
    key = bytes(range(32))

    async def scenario():
        backend = await Backend().start()
        pending = websocket_answer(backend, activation={
            "message": "enter the code in the console", "code": "482915",
            "challenge": "c-123", "timeout_ms": 30000})
        with OtaCheckServer([pending, websocket_answer(backend)], activate_statuses=[202, 200]) as ota:
            with sim_running(tmp_path, ota, extra_config={
                    "serial_number": serial, "activation_key": key.hex()}) as sim:
                device = await backend.next_device(30)
                assert (await device.request("ping"))["result"] == {}
        await backend.stop()
        return sim, ota

    sim, ota = run(scenario())
    assert len(ota.checks) == 2  # checked again once activated
    assert [h["Activation-Version"] for h, _ in ota.checks] == ["2", "2"]
    assert ota.checks[0][0]["Serial-Number"] == serial
    assert len(ota.activations) == 2  # 202, then 200
    body = json.loads(ota.activations[0][1])
    assert body == {"algorithm": "hmac-sha256", "serial_number": serial, "challenge": "c-123",
                    "hmac": hmac.new(key, b"c-123", hashlib.sha256).hexdigest()}
    log = sim_log(sim)
    assert "activation code 482915: enter the code in the console" in log
    assert "activated" in log


def test_newer_firmware_is_offered_or_installed(tmp_path):
    image = esp_image(100 * 1024)

    async def scenario(images):
        backend = await Backend().start()
        answer = websocket_answer(backend, firmware={"version": NEWER, "url": images.url})
        with OtaCheckServer([answer]) as ota:
            # Offered only: logged and shown in get_system_info.
            with sim_running(tmp_path / "offer", ota) as sim:
                device = await backend.next_device()
                info = await device.call_json("self.get_system_info")
                assert info["firmware_offer"] == {"version": NEWER, "url": images.url}
                assert images.requests == 0
            assert "firmware %s offered at" % NEWER in sim_log(sim)
            # auto_upgrade: installed (url alone: the image's own checks) and rebooted into.
            with sim_running(tmp_path / "auto", ota, extra_config={"auto_upgrade": True}) as sim:
                first = await backend.next_device()
                second = await backend.next_device(30)  # after the reboot
                info = await second.call_json("self.get_system_info")
                assert info["ota"] == {"running": "ota_1", "boot": "ota_1"}
                assert first is not second
                # The new image still says VERSION (it is this firmware): the same offer is
                # not installed a second time.
                assert images.requests == 1
            assert "was installed once already" in sim_log(sim)
        await backend.stop()
        return sim

    with ImageServer(image) as images:
        sim = run(scenario(images))
    assert sim.records()[0]["set_boot_calls"] == ["ota_1"]
    assert sim.read_settings()["auto_upgraded"] == NEWER


def test_malformed_answer_is_dropped_and_the_last_good_settings_stay(tmp_path):
    async def scenario():
        backend = await Backend().start()
        with OtaCheckServer([websocket_answer(backend)]) as ota:
            with sim_running(tmp_path, ota) as sim:
                await backend.next_device()
        good = sim.read_settings()["transport"]
        bad_answers = [{"websocket": {"url": "http://not-ws/", "token": "t"}},
                       {"mqtt": {"endpoint": ""}}, "not json", [1, 2], 500]
        for bad in bad_answers:
            with OtaCheckServer([bad]) as ota:  # the next boot hears only this answer
                with sim_running(tmp_path, ota) as sim:
                    device = await backend.next_device()  # with the saved settings
                    assert (await device.request("ping"))["result"] == {}
            assert sim.read_settings()["transport"] == good
        await backend.stop()
        return sim

    sim = run(scenario())
    log = sim_log(sim)
    for what in ("OTA answer dropped: websocket.url must be a ws:// or wss:// URL",
                 "OTA answer dropped: mqtt: mqtt endpoint missing",
                 "OTA answer dropped: not JSON", "OTA answer dropped: not a JSON object",
                 "HTTP 500"):
        assert what in log, what


def test_unreachable_ota_server_with_fixed_url_still_connects(tmp_path):
    async def scenario():
        backend = await Backend().start()
        with OtaCheckServer([503]) as ota:
            sim = Sim(backend.url, tmp_path, ota_url=ota.url,
                      extra_config={"ota_retry": 0.2}).start()
            try:
                device = await backend.next_device(30)
                assert (await device.request("ping"))["result"] == {}
            finally:
                assert sim.stop() == 0
        await backend.stop()
        return ota

    ota = run(scenario())
    assert len(ota.checks) >= 1


async def _until(predicate):
    while not predicate():
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_later_check_with_new_settings_moves_the_board_to_them(tmp_path, micropython, broker):
    """Every ota_interval the board checks again; other server settings (here: MQTT instead
    of WebSocket) make it hang up and connect with them."""
    async def scenario():
        backend = await Backend().start()
        mqtt_backend = await MqttBackend(broker.port).start()
        try:
            answers = [websocket_answer(backend), {"mqtt": mqtt_block(broker)}]
            with OtaCheckServer(answers) as ota:
                with sim_running(tmp_path / "sim", ota, micropython,
                                 extra_config={"ota_interval": 1}) as sim:
                    first = await backend.next_device()
                    assert (await first.request("ping"))["result"] == {}
                    moved = await mqtt_backend.next_device(30)
                    assert (await moved.request("ping"))["result"] == {}
                    assert len(ota.checks) >= 2
        finally:
            await mqtt_backend.stop()
            await backend.stop()
        return sim

    sim = run(scenario())
    assert "mqtt" in sim.read_settings()["transport"]
    assert "server settings changed: reconnecting" in sim_log(sim)


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_an_activation_key_that_is_not_hex_stops_the_start_saying_why(tmp_path, micropython):
    sim = Sim(None, tmp_path, micropython=micropython, ota_url="http://127.0.0.1:9/xiaozhi/ota/",
              extra_config={"serial_number": "SN-1", "activation_key": "not hex"}).start()
    assert sim.wait(WAIT_S) == 1
    log = sim_log(sim)
    assert "umcp cannot start: config.json: activation_key must be the device's key in hex" in log, log
