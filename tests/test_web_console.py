"""The backend's web console in a real headless Chromium: the simulated device comes online,
its volume slider sets the codec's register, a photo shows, a log notification appears, a
bad value is refused in the page and on the device; a hostile device's HTML stays text; the
console's guards against other machines and other sites; and its speed with 20 devices.
Screenshots of each step: build/artifacts/web-console/."""

import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from websockets.asyncio.client import connect

from tools.sim.demo import simulated_device, stop_process
from web_harness import (ROOT, SLIDE_AND_WAIT, TOKEN, Shots, browser_page, chromium_path, console_backend,
                         record_timing)

pytestmark = [pytest.mark.timeout(120), pytest.mark.anyio]
WAIT_MS = 30000  # a simulated device boots and onboards within this
VOLUME = "self.audio_speaker.set_volume"
ES8311_DAC_VOLUME = 0x32


def expected_dac_register(volume):
    """What the host board's ES8311 driver writes to the DAC volume register for `volume`,
    computed by the driver itself over the simulated I2C bus."""
    import hwsim
    import machine
    from boards import host
    from drivers.es8311 import ES8311
    from machine import I2C, Pin

    try:
        codec = machine.I2CDevice()
        machine.sim_attach_i2c(0, host.PINS["es8311_addr"], codec)
        i2c = I2C(0, sda=Pin(host.PINS["i2c_sda"]), scl=Pin(host.PINS["i2c_scl"]))
        ES8311(i2c, host.PINS["es8311_addr"], host.SAMPLE_RATE).set_volume(volume)
        return [value for reg, value in codec.writes if reg == ES8311_DAC_VOLUME][-1]
    finally:
        hwsim.reset()


def http(url, method="GET", body=None, headers=None):
    """(status, parsed JSON body or text) of a plain HTTP request."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data, headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            status, text, kind = response.status, response.read().decode(), response.headers.get("content-type", "")
    except urllib.error.HTTPError as error:
        status, text, kind = error.code, error.read().decode(), error.headers.get("content-type", "")
    return status, json.loads(text) if "json" in kind else text


def card_fact(page, device_id, fact):
    return page.locator('.device[data-device="%s"] .fact[data-fact="%s"] dd' % (device_id, fact))


def tool(page, name):
    return page.locator('details[data-tool="%s"]' % name)


async def test_the_console_drives_the_simulated_device(tmp_path):
    shots = Shots("simulated-device")
    lines = []
    async with console_backend(out=lines.append) as backend, browser_page(tmp_path) as page:
        base = "http://127.0.0.1:%d/" % backend.http_port
        await page.goto(base)
        await page.wait_for_selector("#link.up")
        assert await page.locator("#no-devices").is_visible()
        await shots.take(page, "no-device-yet")

        url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
        state = tmp_path / "state"
        with open(tmp_path / "device.log", "w") as log, \
                simulated_device(url, TOKEN, str(state), log, extra=["--device-id", "sim-web"]) as sim:
            # Comes online without a reload; with one device, its tools are on the first page.
            await page.wait_for_selector('.device.online[data-device="sim-web"]', timeout=WAIT_MS)
            await page.wait_for_selector('#panel[data-ready="true"] details[data-tool="%s"]' % VOLUME)
            await page.wait_for_function(
                "document.querySelector('.device[data-device=\"sim-web\"] .fact[data-fact=\"board\"] dd')"
                "?.textContent === 'host'")
            assert await card_fact(page, "sim-web", "transport").text_content() == "websocket"
            assert re.fullmatch(r"\d+\.\d+\.\d+.*", await card_fact(page, "sim-web", "firmware").text_content())
            assert await card_fact(page, "sim-web", "signal").text_content() == "host network"
            assert re.fullmatch(r"(\d+h )?\d+m \d+s", await card_fact(page, "sim-web", "uptime").text_content())
            assert await card_fact(page, "sim-web", "volume").text_content() == "70"  # the settings' default
            volume = tool(page, VOLUME)
            assert await volume.locator("input[type=range]").get_attribute("max") == "100"
            assert await volume.locator(".required").count() == 1
            await shots.take(page, "device-online")

            # The slider is the control: let go at 42, the device's own status shows 42.
            elapsed = await page.evaluate(SLIDE_AND_WAIT, [VOLUME, "sim-web", "volume", 42])
            assert await volume.locator(".result[data-state=ok]").text_content() == "true" + \
                await volume.locator(".result .ms").text_content()
            status = tool(page, "self.get_device_status")
            await status.locator("button[type=submit]").click()
            await status.locator(".result[data-state=ok] pre").wait_for()
            reported = json.loads(await status.locator(".result pre").text_content())
            assert reported["audio_speaker"]["volume"] == 42
            await shots.take(page, "volume-42")

            # A photo: the vision endpoint's answer as pretty JSON, the photo as a thumbnail.
            photo = tool(page, "self.camera.take_photo")
            await photo.locator("input[name=question]").fill("What is on the desk?")
            await photo.locator("button[type=submit]").click()
            answer = json.loads(await photo.locator(".result[data-state=ok] pre").text_content())
            assert answer["success"] is True and "JPEG image" in answer["response"]
            await page.wait_for_function(
                "[...document.querySelectorAll('#photos img.thumb')].some(i => i.complete && i.naturalWidth > 0)")
            assert await page.locator("#photos figure").first.get_attribute("data-photo") is not None
            await shots.take(page, "photo")

            # A log notification, live: the stdin console's way of upgrading (no progress
            # token) answers at once and reports the failure as a notifications/message.
            device = backend.devices["sim-web"]
            missing = "http://127.0.0.1:%d/ota/missing.bin" % backend.http_port
            result = await backend.call(device, "self.upgrade_firmware", {"url": missing, "sha256": "0" * 64})
            assert "upgrade started" in result["content"][0]["text"]
            note = page.locator(".feed .note.level-error .text")
            await note.first.wait_for(timeout=15000)
            assert "firmware upgrade from %s failed" % missing in await note.first.text_content()
            await shots.take(page, "log-notification")

            # Out of range: refused in the page (nothing sent) ...
            calls_before = sum("-> tools/call %s" % VOLUME in line for line in lines)
            await volume.locator("input[type=number]").fill("150")
            await volume.locator("button[type=submit]").click()
            error = volume.locator(".result[data-state=error]")
            await error.wait_for()
            assert "volume must be at most 100" in await error.text_content()
            assert await volume.locator("input[type=number][aria-invalid]").count() == 1
            assert sum("-> tools/call %s" % VOLUME in line for line in lines) == calls_before
            await shots.take(page, "out-of-range-refused-in-page")
            # ... and on the device, for a request that skips the page.
            status_code, body = await asyncio.to_thread(
                http, base + "api/devices/sim-web/call", "POST", {"name": VOLUME, "arguments": {"volume": 150}},
                {"Content-Type": "application/json"})
            assert status_code == 200
            refused = body.get("error", {}).get("message") or body["result"]["content"][0]["text"]
            assert "volume" in refused and (body.get("error") or body["result"]["isError"])

            # The user-only tools, behind their switch: a photo as an image result.
            assert await tool(page, "self.camera.get_photo").count() == 0
            await page.locator(".panel-head input.switch").check()
            get_photo = tool(page, "self.camera.get_photo")
            await get_photo.wait_for()
            assert await get_photo.locator(".badge.user").count() == 1
            if not await get_photo.evaluate("d => d.open"):
                await get_photo.locator("summary").click()
            await get_photo.locator("button[type=submit]").click()
            await page.wait_for_function(
                "document.querySelector('details[data-tool=\"self.camera.get_photo\"] .result img')?.naturalWidth > 0")
            await shots.take(page, "user-only-photo")

            stop_process(sim)
            await page.wait_for_selector('.device.offline[data-device="sim-web"]', timeout=15000)
            await shots.take(page, "device-offline")
        assert page.problems == []
    record_timing("slider_to_device_ms_one_device", round(elapsed, 1))
    # What the codec got: the last DAC volume write of that boot is the driver's value for 42.
    boot = json.loads((state / "hwsim.jsonl").read_text().splitlines()[-1])
    writes = [value for reg, value in boot["es8311_writes"] if reg == ES8311_DAC_VOLUME]
    assert writes[-1] == expected_dac_register(42)
