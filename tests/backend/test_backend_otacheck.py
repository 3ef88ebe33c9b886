"""The backend's OTA check and activation endpoints (POST /xiaozhi/ota/, /activate), asked
the way the reference device's main/ota.cc asks: its headers and its system-info body.
Every answer shape: websocket only, mqtt with per-device credentials, activation pending
then done (with and without the device's HMAC), a newer firmware image; malformed
requests get 400 with the reason."""

import asyncio
import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request

import pytest

from tests.backend.test_backend import TOKEN, running_backend
from tools.backend.console import Console
from tools.hub.broker import topic_name
from tools.hub.otacheck import newer

pytestmark = [pytest.mark.timeout(60), pytest.mark.anyio]
MAC = "aa:bb:cc:00:11:22"
CLIENT = "0f3c2a4e-8d1b-4c5e-9f00-112233445566"


def system_info(version="0.1.0", board="host", mac=MAC):
    """The body ota.cc posts (Board::GetSystemInfoJson, the parts a server reads)."""
    return {"version": 2, "language": "en-US", "flash_size": 16777216, "mac_address": mac,
            "uuid": CLIENT, "chip_model_name": "esp32s3",
            "application": {"name": "umcp", "version": version, "idf_version": "v5.4"},
            "board": {"type": board, "name": board, "mac": mac}}


def ota_headers(mac=MAC, client=CLIENT, serial=None):
    headers = {"Device-Id": mac, "Client-Id": client, "User-Agent": "host/0.1.0", "Accept-Language": "en-US",
               "Activation-Version": "2" if serial else "1", "Content-Type": "application/json"}
    if serial:
        headers["Serial-Number"] = serial
    return headers


def post(url, body, headers):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


async def check(backend, body=None, headers=None):
    return await asyncio.to_thread(post, backend.ota_url, system_info() if body is None else body,
                                   ota_headers() if headers is None else headers)


async def activate(backend, body, headers=None):
    return await asyncio.to_thread(post, backend.ota_url + "activate", body, headers or ota_headers())


async def test_websocket_answer_has_time_firmware_and_the_websocket_url():
    async with running_backend() as (backend, out):
        before = int(time.time() * 1000)
        status, answer = await check(backend)
        assert status == 200
        assert set(answer) == {"server_time", "firmware", "websocket"}
        assert before <= answer["server_time"]["timestamp"] <= int(time.time() * 1000)
        assert answer["server_time"]["timezone_offset"] == 0
        assert answer["firmware"] == {"version": "0.1.0", "url": ""}  # nothing newer
        assert answer["websocket"] == {"url": "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port, "token": TOKEN}
        # the same path without its trailing slash, as some configs write ota_url
        status, again = await asyncio.to_thread(post, backend.ota_url.rstrip("/"), system_info(), ota_headers())
        assert status == 200 and again["websocket"] == answer["websocket"]


async def test_mqtt_answer_hands_out_per_device_credentials():
    async with running_backend(mqtt="embedded") as (backend, out):
        status, answer = await check(backend)
        assert status == 200 and "websocket" not in answer
        mqtt = answer["mqtt"]
        name = topic_name(MAC)
        assert name == "aa_bb_cc_00_11_22"
        assert mqtt["endpoint"] == "127.0.0.1:%d" % backend.broker.port
        assert mqtt["username"] == name and mqtt["client_id"] == "umcp-" + name
        assert mqtt["publish_topic"] == "umcp/%s/up" % name and mqtt["subscribe_topic"] == "umcp/%s/down" % name
        assert backend.credentials.check(mqtt["client_id"], mqtt["username"], mqtt["password"])
        # another device gets other credentials, which do not open the first one's account
        status, other = await check(backend, system_info(mac="aa:bb:cc:00:11:33"),
                                    ota_headers(mac="aa:bb:cc:00:11:33"))
        assert other["mqtt"]["password"] != mqtt["password"]
        assert not backend.credentials.check(mqtt["client_id"], mqtt["username"], other["mqtt"]["password"])
        # asking again gives the same credentials (a device re-checks at every boot)
        status, again = await check(backend)
        assert again["mqtt"] == mqtt


async def test_activation_pending_until_the_owner_types_the_code():
    async with running_backend(activation=True) as (backend, out):
        status, answer = await check(backend)
        assert status == 200
        block = answer["activation"]
        assert set(block) == {"message", "code", "challenge", "timeout_ms"}
        assert len(block["code"]) == 6 and block["code"] in block["message"]
        assert "websocket" not in answer and "mqtt" not in answer  # nothing to connect to yet
        assert any("activate %s" % block["code"] in line for line in out)  # shown in the console
        # the device polls; without a serial number it sends {} (ota.cc, Activation-Version 1)
        assert (await activate(backend, {}))[0] == 202
        console = Console(backend, out)
        await console.execute("activate 000000" if block["code"] != "000000" else "activate 111111")
        assert out[-1].startswith("error: no device waits for code")
        await console.execute("activate " + block["code"])
        assert out[-1] == "%s: activation confirmed; it completes when the device asks again" % MAC
        status, done = await activate(backend, {})
        assert (status, done["success"]) == (200, True)
        status, answer = await check(backend)
        assert "activation" not in answer and answer["websocket"]["token"] == TOKEN
        # another device still has to be activated
        status, answer = await check(backend, system_info(mac="aa:bb:cc:00:11:44"), ota_headers(mac="aa:bb:cc:00:11:44"))
        assert "activation" in answer


async def test_activation_checks_the_devices_hmac():
    serial = "SN-0001"
    key = bytes(range(32))
    async with running_backend(activation=True, activation_keys={serial: key}) as (backend, out):
        status, answer = await check(backend, headers=ota_headers(serial=serial))
        challenge = answer["activation"]["challenge"]
        signed = hmac.new(key, challenge.encode(), hashlib.sha256).hexdigest()
        payload = {"algorithm": "hmac-sha256", "serial_number": serial, "challenge": challenge, "hmac": signed}
        headers = ota_headers(serial=serial)
        status, refused = await activate(backend, dict(payload, hmac="00" * 32), headers)
        assert (status, refused["message"]) == (403, "hmac does not match")
        status, refused = await activate(backend, dict(payload, serial_number="SN-9"), headers)
        assert (status, refused["message"]) == (403, "unknown serial number")
        status, refused = await activate(backend, dict(payload, challenge="stale"), headers)
        assert status == 403 and "challenge" in refused["message"]
        status, refused = await activate(backend, {}, headers)
        assert status == 403 and "serial number" in refused["message"]
        assert (await activate(backend, payload, headers))[0] == 202
        backend.activate(answer["activation"]["code"])
        assert (await activate(backend, payload, headers))[0] == 200
        assert (await activate(backend, payload, headers))[0] == 200  # asking again is fine


async def test_a_newer_firmware_image_is_offered(tmp_path):
    (tmp_path / "host_0.1.0.bin").write_bytes(b"\xe9old")
    (tmp_path / "host_0.2.0.bin").write_bytes(b"\xe9new image")
    (tmp_path / "host_0.10.1.bin").write_bytes(b"\xe9newest image")
    (tmp_path / "esp32_s3_box3_9.0.0.bin").write_bytes(b"\xe9another board")
    (tmp_path / "notes.txt").write_text("not an image")
    async with running_backend(ota_dir=str(tmp_path)) as (backend, out):
        status, answer = await check(backend, system_info(version="0.2.0"))
        firmware = answer["firmware"]
        assert firmware["version"] == "0.10.1"  # numeric order, not text order
        assert firmware["url"] == "http://127.0.0.1:%d/ota/host_0.10.1.bin" % backend.http_port
        assert firmware["sha256"] == hashlib.sha256(b"\xe9newest image").hexdigest()
        image = await asyncio.to_thread(lambda: urllib.request.urlopen(firmware["url"], timeout=10).read())
        assert image == b"\xe9newest image"
        status, answer = await check(backend, system_info(version="0.10.1"))
        assert answer["firmware"] == {"version": "0.10.1", "url": ""}
        status, answer = await check(backend, system_info(version="1.0", board="m5stack_cores3"))
        assert answer["firmware"]["url"] == ""  # no image for this board


def test_version_order():
    assert newer("0.10.0", "0.9.9") and newer("1.0.1", "1.0") and not newer("1.0", "1.0.0")
    assert newer("2.0.0-rc1", "1.9") and not newer("0.1.0", "0.1.0")


async def test_malformed_requests_are_refused_with_the_reason():
    async with running_backend() as (backend, out):
        headers = ota_headers()
        del headers["Device-Id"]
        status, answer = await check(backend, headers=headers)
        assert (status, answer) == (400, {"success": False, "message": "missing header Device-Id"})
        status, answer = await check(backend, headers={"Content-Type": "application/json"})
        assert (status, answer["message"]) == (400, "missing header Device-Id and Client-Id")
        status, answer = await check(backend, b"{not json")
        assert status == 400 and answer["message"].startswith("body is not JSON")
        status, answer = await check(backend, b"[1, 2]")
        assert (status, answer["message"]) == (400, "body must be a JSON object")
        status, answer = await activate(backend, b"nope")
        assert status == 400 and "not JSON" in answer["message"]
        assert any(line.startswith("ota: refused a check: missing header") for line in out)
        # an empty body is what a GET-less device sends when it has no system info: fine
        status, answer = await check(backend, b"")
        assert status == 200 and answer["firmware"]["version"] == "0.0.0"
