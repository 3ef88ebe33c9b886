"""The real device through the backend's OTA endpoint: `python3 -m tools.sim --ota-url`
(the unchanged firmware on the simulated board, with only Wi-Fi and the OTA URL in its
config.json) checks in, is activated by the owner's console command, and connects where
the answer says: over WebSocket, or over MQTT through the embedded broker or mosquitto
with the credentials it was issued; then it answers tools/call through the backend."""

import asyncio
import contextlib
import json
import re
import subprocess
import sys

import pytest

from tests.backend.test_backend import TOKEN, Transcript
from tests.support import ROOT
from tools.backend import Backend
from tools.backend.console import Console
from tools.hub.mosquitto import Mosquitto

pytestmark = [pytest.mark.timeout(120), pytest.mark.anyio]
WAIT = 60
MOSQUITTO_PARAM = pytest.param("mosquitto", marks=[
    pytest.mark.mosquitto,
])


@contextlib.asynccontextmanager
async def backend_for(kind, tmp_path, **options):
    out = Transcript()
    broker = None
    if kind == "mosquitto":
        broker = Mosquitto(tmp_path).start()
        options.update(mqtt=broker.url, mqtt_passwd=broker.passwd, mqtt_pidfile=broker.pidfile)
    elif kind == "embedded":
        options.update(mqtt="embedded")
    backend = Backend(TOKEN, host="127.0.0.1", out=out, **options)
    try:
        await backend.start()
        yield backend, out
    finally:
        await backend.close()
        if broker is not None:
            broker.stop()


@contextlib.contextmanager
def device_checking_in(backend, tmp_path):
    """tools.sim with only the OTA URL: it asks the backend where to connect."""
    state = tmp_path / "state"
    command = [sys.executable, "-m", "tools.sim", "--ota-url", backend.ota_url, "--state-dir", str(state),
               "--device-id", "aa:bb:cc:dd:ee:42", "--extra-config", json.dumps({"ota_retry": 0.2})]
    with open(tmp_path / "device.log", "w") as log:
        sim = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield sim
        finally:
            sim.terminate()
            try:
                sim.wait(15)
            except subprocess.TimeoutExpired:
                sim.kill()
                sim.wait()


async def calls_work(backend, device):
    result = await backend.call(device, "self.audio_speaker.set_volume", {"volume": 41})
    assert result is not None and not result.get("isError"), result
    status = json.loads((await backend.call(device, "self.get_device_status"))["content"][0]["text"])
    assert status["audio_speaker"]["volume"] == 41


async def test_the_device_asks_the_ota_endpoint_and_connects_over_websocket(tmp_path):
    async with backend_for("websocket", tmp_path) as (backend, out):
        with device_checking_in(backend, tmp_path):
            device = await backend.wait_ready(WAIT)
            assert device.id == "aa:bb:cc:dd:ee:42" and getattr(device, "transport", "websocket") == "websocket"
            await calls_work(backend, device)


@pytest.mark.parametrize("kind", ["embedded", MOSQUITTO_PARAM])
async def test_the_device_gets_mqtt_credentials_and_answers_over_mqtt(kind, tmp_path):
    async with backend_for(kind, tmp_path) as (backend, out):
        with device_checking_in(backend, tmp_path):
            device = await backend.wait_ready(WAIT)
            assert device.transport == "mqtt" and device.id == "aa:bb:cc:dd:ee:42"
            assert device.hello.get("transport") == "udp" and device.hello.get("version") == 3
            await calls_work(backend, device)


async def test_the_device_waits_for_the_owner_to_activate_it(tmp_path):
    async with backend_for("embedded", tmp_path, activation=True) as (backend, out):
        with device_checking_in(backend, tmp_path):
            await asyncio.wait_for(out.wait_for(lambda line: "asks to be activated" in line), WAIT)
            code = re.search(r"activate (\d{6})", next(line for line in out if "asks to be activated" in line))[1]
            await asyncio.sleep(1)
            assert not backend.devices  # nothing to connect to before the owner confirms
            await Console(backend, out).execute("activate " + code)
            device = await backend.wait_ready(WAIT)
            assert any(line == "ota: aa:bb:cc:dd:ee:42 activated" for line in out)
            await calls_work(backend, device)
