"""The backend's web console in a real headless Chromium: the simulated device comes online,
its volume slider sets the codec's register, a photo shows, a log notification appears, a
bad value is refused in the page and on the device; a hostile device's HTML stays text; the
console's guards against other machines and other sites; and its speed with 20 devices.
Screenshots of each step: build/artifacts/web-console/."""

import asyncio
import contextlib
import json
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from websockets.asyncio.client import connect

from tools.childprocess import stop_process
from tools.sim.board import SimBoard, config_for
from tests.support.webharness import ROOT, SLIDE_AND_WAIT, TOKEN, Shots, browser_page, console_backend

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
                SimBoard(config_for(url=url, token=TOKEN, device_id="sim-web"), root=str(state), log=log) as sim:
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
            # The form starts at the device's current setting.
            await page.wait_for_function(
                "document.querySelector('details[data-tool=\"%s\"] input[type=range]').value === '70'" % VOLUME)
            assert await volume.locator("input[type=number]").input_value() == "70"
            # The theme's enum is a select, starting at the device's theme.
            theme = tool(page, "self.screen.set_theme").locator("select[name=theme]")
            assert await theme.locator("option").all_text_contents() == ["choose…", "light", "dark"]
            assert await theme.evaluate("s => s.options[s.selectedIndex].text") == "light"
            assert await volume.locator(".required").count() == 1
            await shots.take(page, "device-online")

            # The slider is the control: let go at 42, the device's own status shows 42.
            await page.evaluate(SLIDE_AND_WAIT, [VOLUME, "sim-web", "volume", 42])  # rejects if it never shows
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
            assert await error.text_content() == "not sent: volume must be at most 100"
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

            # The stdin console's `call DEVICE TOOL JSON`: any name, arguments as typed. An
            # argument the schema does not declare passes the page and the device refuses it.
            raw = page.locator("details.raw-call")
            await raw.locator("summary").click()
            await raw.locator("input[name=raw-name]").fill(VOLUME)
            await raw.locator("textarea").fill('{"volume": 5, "loud": true}')
            await raw.locator("button[type=submit]").click()
            refused = raw.locator(".result[data-state=error]")
            await refused.wait_for()
            assert "loud" in await refused.text_content()
            assert sum("-> tools/call %s {\"volume\":5,\"loud\":true}" % VOLUME in line for line in lines) == 1
            await raw.locator("textarea").fill('{"volume": "5"}')
            await raw.locator("button[type=submit]").click()
            assert "volume must be an integer" in await raw.locator(".result[data-state=error]").text_content()
            await shots.take(page, "raw-call-refused-by-device")

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

            sim.stop()
            await page.wait_for_selector('.device.offline[data-device="sim-web"]', timeout=15000)
            await shots.take(page, "device-offline")
        assert page.problems == []
    # What the codec got: the last DAC volume write of that boot is the driver's value for 42.
    boot = json.loads((state / "hwsim.jsonl").read_text().splitlines()[-1])
    writes = [value for reg, value in boot["es8311_writes"] if reg == ES8311_DAC_VOLUME]
    assert writes[-1] == expected_dac_register(42)


async def test_a_board_at_the_mcp_endpoint_shows_beside_its_xiaozhi_self_and_is_driven_there(tmp_path):
    shots = Shots("mcp-endpoint")
    async with console_backend() as backend, browser_page(tmp_path) as page:
        await page.goto("http://127.0.0.1:%d/" % backend.http_port)
        await page.wait_for_selector("#link.up")
        url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
        state = tmp_path / "state"
        config = config_for(url=url, token=TOKEN, device_id="sim-both", mcp_endpoint=backend.endpoint_url)
        with open(tmp_path / "device.log", "w") as log, \
                SimBoard(config, root=str(state), log=log) as sim:
            # One board, two cards: the xiaozhi device and the tool provider at the endpoint.
            await page.wait_for_selector('.device.online[data-device="sim-both"]', timeout=WAIT_MS)
            await page.wait_for_selector('.device.online[data-device="endpoint:sim-both"]', timeout=WAIT_MS)
            await page.wait_for_function(
                "document.querySelector('.device[data-device=\"endpoint:sim-both\"] .fact[data-fact=\"board\"] dd')"
                "?.textContent === 'host'")
            assert await card_fact(page, "endpoint:sim-both", "transport").text_content() == "MCP endpoint"
            assert await card_fact(page, "sim-both", "transport").text_content() == "websocket"
            await page.locator('.device[data-device="endpoint:sim-both"]').click()
            await page.wait_for_selector('#panel[data-ready="true"] details[data-tool="%s"]' % VOLUME)
            # The owner's user-only tools stay home: the switch finds none at the endpoint.
            await page.locator(".panel-head input.switch").check()
            await page.wait_for_function("document.getElementById('panel').textContent"
                                         ".includes('tools (user-only included)')")
            assert await tool(page, "self.get_system_info").count() == 0
            assert await tool(page, VOLUME).count() == 1
            await shots.take(page, "endpoint-board")
            await page.evaluate(SLIDE_AND_WAIT, [VOLUME, "endpoint:sim-both", "volume", 33])
            await shots.take(page, "volume-33-through-the-endpoint")
            sim.stop()
        assert page.problems == []
    boot = json.loads((state / "hwsim.jsonl").read_text().splitlines()[-1])
    writes = [value for reg, value in boot["es8311_writes"] if reg == ES8311_DAC_VOLUME]
    assert writes[-1] == expected_dac_register(33)


# ---- a hostile device: its text must stay text ------------------------------------------

XSS = "<img src=x onerror=\"window.__pwned='%s'\">"
HOSTILE_ID = "evil<b>" + XSS % "id"
HOSTILE_TOOL = "x" + XSS % "name" + "<script>window.__pwned='script'</script>"
HOSTILE_LOG = "log line " + XSS % "log" + "<script>window.__pwned='log-script'</script>"


def hostile_answer(request):
    method = request["method"]
    if method == "initialize":
        return {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                "serverInfo": {"name": XSS % "server", "version": "<i>1</i>"}}
    if method == "tools/list":
        return {"tools": [{
            "name": HOSTILE_TOOL,
            "description": "<script>window.__pwned='description'</script>" + XSS % "description",
            "inputSchema": {"type": "object", "required": ["mode"], "properties": {
                "mode": {"type": "string", "enum": [XSS % "enum", "plain"], "description": XSS % "help"},
                "loud": {"type": "boolean", "description": "a switch"},
            }},
        }]}
    name = request["params"]["name"]
    if name == "self.get_system_info":
        return {"content": [{"type": "text", "text": json.dumps({
            "board": XSS % "board", "firmware_version": "<svg onload=\"window.__pwned='fw'\">",
            "activation": {"code": "<b>123456</b>", "message": XSS % "activation"}})}]}
    if name == "self.get_device_status":
        return {"content": [{"type": "text", "text": "not json " + XSS % "status"}], "isError": True}
    return {"content": [{"type": "text", "text": "result " + XSS % "result"}]}


@contextlib.asynccontextmanager
async def scripted_device(backend, answer, device_id):
    """A device over a real WebSocket that answers each request with answer(request), and
    after each tools/call sends a log notification (HOSTILE_LOG)."""
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
    headers = {"Authorization": "Bearer " + TOKEN, "Device-Id": device_id}
    async with connect(url, additional_headers=headers) as ws:
        await ws.send(json.dumps({"type": "hello", "version": 1, "transport": "websocket", "features": {"mcp": True}}))
        session = json.loads(await ws.recv())["session_id"]

        async def send(payload):
            await ws.send(json.dumps({"session_id": session, "type": "mcp", "payload": payload}))

        async def serve():
            async for text in ws:
                payload = json.loads(text)["payload"]
                if "id" not in payload:
                    continue
                await send({"jsonrpc": "2.0", "id": payload["id"], "result": answer(payload)})
                if payload["method"] == "tools/call" and payload["params"]["name"] == HOSTILE_TOOL:
                    # A malformed progress first (an object as its token, markup as its value).
                    await send({"jsonrpc": "2.0", "method": "notifications/progress",
                                "params": {"progressToken": {"x": 1}, "progress": XSS % "progress"}})
                    await send({"jsonrpc": "2.0", "method": "notifications/message",
                                "params": {"level": "warning", "logger": "<u>logger</u>", "data": HOSTILE_LOG}})

        task = asyncio.create_task(serve())
        try:
            yield
        finally:
            task.cancel()


async def test_a_devices_html_and_script_show_as_text(tmp_path):
    shots = Shots("hostile-device")
    async with console_backend() as backend, browser_page(tmp_path) as page:
        async with scripted_device(backend, hostile_answer, HOSTILE_ID):
            await page.goto("http://127.0.0.1:%d/" % backend.http_port)
            card = page.locator(".device.online").first
            await card.wait_for()
            await page.wait_for_function("document.querySelector('.activation strong')?.textContent === '<b>123456</b>'")
            assert await card.locator(".device-id").text_content() == HOSTILE_ID
            assert await card.locator('.fact[data-fact="board"] dd').text_content() == XSS % "board"
            assert await card.locator('.fact[data-fact="firmware"] dd').text_content() == \
                "<svg onload=\"window.__pwned='fw'\">"
            assert await card.locator(".activation").text_content() == \
                "activation code <b>123456</b> " + XSS % "activation"

            hostile = page.locator("details.tool").first
            await hostile.wait_for()
            assert await hostile.locator(".tool-name").text_content() == HOSTILE_TOOL
            assert (await hostile.locator(".description").text_content()).startswith("<script>")
            assert await hostile.locator(".help").first.text_content() == XSS % "help"
            # enum -> select (its options as text), boolean -> switch, required marked
            options = await hostile.locator("select option").all_text_contents()
            assert options[1:] == [XSS % "enum", "plain"]
            assert await hostile.locator("input[type=checkbox][role=switch]").count() == 1
            assert await hostile.locator('.field[data-field="mode"] .required').count() == 1
            await shots.take(page, "listed")

            await hostile.locator("button[type=submit]").click()  # mode is required
            assert "mode is required" in await hostile.locator(".result[data-state=error]").text_content()
            await hostile.locator("select").select_option(index=1)
            await hostile.locator("button[type=submit]").click()
            await hostile.locator(".result[data-state=ok]").wait_for()
            assert (await hostile.locator(".result pre").text_content()) == "result " + XSS % "result"
            note = page.locator(".feed .note .text").first
            await note.wait_for()
            assert await note.text_content() == "<u>logger</u>: " + HOSTILE_LOG
            assert await page.locator(".feed .note .text").nth(1).text_content() == XSS % "progress"
            await shots.take(page, "called")

            # Nothing ran, nothing was parsed as markup: no <img>, <script>, <b>, <svg> from
            # the device anywhere in the document, and no failed image load.
            assert await page.evaluate("window.__pwned") is None
            assert await page.evaluate(
                "document.querySelectorAll('main img, main script, main b, main svg, main u, main i').length") == 0
        assert page.problems == []


# ---- who may use the console: plain HTTP requests ----------------------------------------

async def test_on_loopback_it_refuses_other_sites_and_other_host_names():
    async with console_backend() as backend:
        base = "http://127.0.0.1:%d" % backend.http_port
        json_post = {"Content-Type": "application/json"}
        get = lambda path, headers=None: asyncio.to_thread(http, base + path, "GET", None, headers)  # noqa: E731
        status, body = await get("/api/devices")
        assert status == 200 and body["devices"] == []
        status, page = await get("/")
        assert status == 200 and '<script type="module" src="/static/app.js">' in page
        # Another site's page in the browser: its Origin, or Chromium's Sec-Fetch-Site.
        status, body = await get("/api/devices", {"Origin": "http://evil.example"})
        assert status == 403 and "cross-origin" in body["error"]["message"]
        status, body = await get("/api/devices", {"Sec-Fetch-Site": "cross-site"})
        assert status == 403
        status, body = await get("/api/devices", {"Origin": base})  # our own page
        assert status == 200
        # A name that resolves to 127.0.0.1 for someone else's page (DNS rebinding).
        status, body = await get("/api/devices", {"Host": "evil.example:%d" % backend.http_port})
        assert status == 403 and "unexpected Host" in body["error"]["message"]
        status, _ = await get("/", {"Host": "evil.example"})
        assert status == 403
        # A POST another site could make without asking (a form: not JSON) is refused.
        status, body = await asyncio.to_thread(http, base + "/api/devices/x/call", "POST", {"name": "t"},
                                               {"Content-Type": "text/plain"})
        assert status == 415
        status, body = await asyncio.to_thread(http, base + "/api/devices/x/call", "POST", {"name": "t"}, json_post)
        assert status == 404 and "no device 'x'" in body["error"]["message"]
        status, _ = await get("/static/../web.py")
        assert status == 404
        # The page runs only its own scripts.
        def policy_of(url):
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.headers["Content-Security-Policy"]

        policy = await asyncio.to_thread(policy_of, base + "/")
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy


def test_a_connection_from_another_machine_is_refused_unless_opened_to_others():
    from starlette.requests import Request

    from tools.backend.web import WebConsole

    class FakeBackend:
        listeners, http_port = [], 8003

    def request(client, headers=()):
        return Request({"type": "http", "method": "GET", "scheme": "http", "path": "/api/devices",
                        "query_string": b"", "client": (client, 50000),
                        "headers": [(b"host", b"192.168.1.20:8003")] + list(headers)})

    closed = WebConsole(FakeBackend())
    refused = closed._refusal(request("192.168.1.7"), api=True)
    assert refused.status_code == 403 and b"--console-host 0.0.0.0" in refused.body
    opened = WebConsole(FakeBackend(), remote=True, token="s3cret")
    assert opened._refusal(request("192.168.1.7"), api=True).status_code == 401
    assert opened._refusal(request("192.168.1.7", [(b"authorization", b"Bearer nope")]), api=True).status_code == 401
    assert opened._refusal(request("192.168.1.7", [(b"authorization", b"Bearer s3cret")]), api=True) is None
    assert opened._refusal(request("192.168.1.7", [(b"authorization", b"Bearer s3cret"),
                                                   (b"origin", b"http://evil.example")]), api=True).status_code == 403
    assert WebConsole(FakeBackend(), remote=True).token  # none given: one of its own


async def test_opened_to_others_it_needs_the_token():
    async with console_backend(remote=True, token="console-secret") as backend:
        assert backend.web.url.endswith("#token=console-secret")
        base = "http://127.0.0.1:%d" % backend.http_port
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "console-secret"}):
            status, body = await asyncio.to_thread(http, base + "/api/devices", "GET", None, headers)
            assert status == 401 and "token" in body["error"]["message"]
        good = {"Authorization": "Bearer console-secret"}
        status, body = await asyncio.to_thread(http, base + "/api/devices", "GET", None, good)
        assert status == 200
        status, _ = await asyncio.to_thread(http, base + "/api/events", "GET", None, {})
        assert status == 401
        status, body = await asyncio.to_thread(http, base + "/api/devices", "GET", None,
                                               dict(good, Origin="http://evil.example"))
        assert status == 403


def test_the_backend_prints_the_console_url_and_serves_it():
    process = subprocess.Popen([sys.executable, "-m", "tools.backend", "--port", "0", "--http-port", "0",
                                "--host", "127.0.0.1", "--token", "t"], cwd=ROOT, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        url = None
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            found = re.match(r"backend: web console (http://127\.0\.0\.1:\d+/)$", line.strip())
            url = found and found.group(1)
        assert url, "no console URL printed"
        status, page = http(url)
        assert status == 200 and "umcp console" in page
    finally:
        process.stdin.close()
        stop_process(process)


# ---- speed, with 20 simulated devices online ----------------------------------------------

DEVICES = 20


async def test_twenty_devices_usable_within_a_second_and_a_slider_round_trip(tmp_path):
    """20 real simulated devices (the firmware on CPython, one process each). The page is
    usable when all 20 are listed and the first one's tools are ready to call; a control's
    effect is a slider let go until the device's own status shows the value."""
    shots = Shots("twenty-devices")
    async with console_backend() as backend:
        url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
        with open(tmp_path / "devices.log", "w") as log, contextlib.ExitStack() as stack:
            for n in range(DEVICES):
                stack.enter_context(SimBoard(config_for(url=url, token=TOKEN, device_id="sim-%02d" % n),
                                             root=str(tmp_path / ("state%02d" % n)), log=log))
            deadline = time.monotonic() + 90
            while not (len(backend.web.records) == DEVICES and
                       all(r.ready and r.info for r in backend.web.records.values())):
                assert time.monotonic() < deadline, "the 20 devices did not all come online"
                await asyncio.sleep(0.1)
            async with browser_page(tmp_path) as page:
                await page.goto("http://127.0.0.1:%d/" % backend.http_port)
                await page.wait_for_function("performance.getEntriesByName('umcp-usable').length > 0")
                usable_ms = await page.evaluate("performance.getEntriesByName('umcp-usable')[0].startTime")
                assert await page.locator(".device.online").count() == DEVICES
                first = await page.get_attribute("#panel", "data-device")
                await shots.take(page, "desktop")
                effects = []
                for value in (30, 55, 31, 56, 32, 57, 33):
                    effects.append(await page.evaluate(SLIDE_AND_WAIT, [VOLUME, first, "volume", value]))
                assert page.problems == []
            async with browser_page(tmp_path, viewport={"width": 390, "height": 844}) as phone:
                await phone.goto("http://127.0.0.1:%d/" % backend.http_port)
                await phone.wait_for_selector('#panel[data-ready="true"]')
                # A phone's screen: one column, nothing wider than the screen.
                assert await phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
                await shots.take(phone, "phone")
                assert phone.problems == []
    effect_ms = statistics.median(effects)
    print("web console: usable in %.0f ms with %d devices; slider -> device status %.1f ms (median of %d), "
          "max %.1f ms" % (usable_ms, DEVICES, effect_ms, len(effects), max(effects)))
    # The targets are 1 s and 100 ms; the bounds here leave room for a loaded CI host.
    assert usable_ms < 3000
    assert effect_ms < 300


# ---- a firmware upgrade from the page: its progress bar -----------------------------------

WATCH_PROGRESS = """(tool) => {
  // What the progress bar and its label showed while the call ran.
  window.progressSeen = [];
  const card = document.querySelector(`details[data-tool="${tool}"]`);
  const bar = card.querySelector("progress"), label = card.querySelector(".progress-text");
  new MutationObserver(() => {
    if (!bar.hidden && label.textContent) window.progressSeen.push(label.textContent);
  }).observe(label, {childList: true, characterData: true, subtree: true});
  // And the progress notifications listed in the feed (gone with the panel at the reboot).
  window.progressNotes = 0;
  new MutationObserver((changes) => {
    for (const change of changes) for (const node of change.addedNodes) {
      if (node.dataset && node.dataset.method === "notifications/progress") window.progressNotes++;
    }
  }).observe(document.querySelector("#panel .feed"), {childList: true});
}"""


async def test_an_upgrade_from_the_page_shows_its_progress(tmp_path):
    import hashlib

    shots = Shots("upgrade")
    from portable_support import esp_image

    firmware = esp_image(300 * 1024)  # a valid ESP32-S3 application image (the device checks it)
    (tmp_path / "ota").mkdir()
    (tmp_path / "ota" / "app.bin").write_bytes(firmware)
    async with console_backend(ota_dir=str(tmp_path / "ota")) as backend, browser_page(tmp_path) as page:
        await page.goto("http://127.0.0.1:%d/" % backend.http_port)
        url = "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port
        with open(tmp_path / "device.log", "w") as log, \
                SimBoard(config_for(url=url, token=TOKEN, device_id="sim-ota"), root=str(tmp_path / "state"), log=log):
            await page.wait_for_selector('#panel[data-ready="true"]', timeout=WAIT_MS)
            await page.locator(".panel-head input.switch").check()
            upgrade = tool(page, "self.upgrade_firmware")
            await upgrade.wait_for()
            if not await upgrade.evaluate("d => d.open"):
                await upgrade.locator("summary").click()
            await upgrade.locator("input[name=url]").fill("http://127.0.0.1:%d/ota/app.bin" % backend.http_port)
            await upgrade.locator("input[name=sha256]").fill(hashlib.sha256(firmware).hexdigest())
            await page.evaluate(WATCH_PROGRESS, "self.upgrade_firmware")
            before = backend.devices["sim-ota"]
            await upgrade.locator("button[type=submit]").click()
            done = upgrade.locator(".result[data-state=ok]")
            await done.wait_for(timeout=30000)
            assert "firmware updated (%d bytes, sha256 verified)" % len(firmware) in await done.text_content()
            await shots.take(page, "upgraded")
            seen = await page.evaluate("window.progressSeen")
            # The device reports the bytes written (it does not announce a total: the bar is
            # indeterminate), every 64 KiB and at the end.
            # (The last report and the answer travel on two connections: either may come first.)
            written = [int(text.split()[0]) for text in seen]
            assert written and written == sorted(written) and set(written) <= {65536 * n for n in range(1, 5)} | {
                len(firmware)}
            assert seen[0] == "%d bytes written" % written[0]
            assert await page.evaluate("window.progressNotes") >= 4
            # It reboots into the new image and comes back (a new connection, ready again).
            deadline = time.monotonic() + 30
            while backend.devices.get("sim-ota") in (None, before) or \
                    not backend.web.records["sim-ota"].ready:
                assert time.monotonic() < deadline, "the device did not come back after the upgrade"
                await asyncio.sleep(0.1)
            await page.wait_for_selector('.device.online[data-device="sim-ota"]', timeout=WAIT_MS)
            # Its panel comes back by itself once the device is ready again, with the
            # notifications from before the reboot.
            await page.wait_for_selector('#panel[data-ready="true"] details[data-tool="%s"]' % VOLUME, timeout=WAIT_MS)
            assert await page.locator('.feed .note[data-method="notifications/progress"]').count() == \
                await page.evaluate("window.progressNotes")
            await shots.take(page, "back-online")
        assert page.problems == []


async def test_opened_to_others_the_page_asks_for_the_token_or_takes_it_from_the_url(tmp_path):
    shots = Shots("token")
    async with console_backend(remote=True, token="console-secret") as backend, browser_page(tmp_path) as page:
        base = "http://127.0.0.1:%d/" % backend.http_port
        async with scripted_device(backend, hostile_answer, "dev-1"):
            await page.goto(base)
            await page.locator("#login").wait_for()
            assert await page.locator(".device").count() == 0
            await shots.take(page, "asks-for-token")
            await page.locator("#token").fill("console-secret")
            await page.locator("#login button[type=submit]").click()
            await page.wait_for_selector('.device.online[data-device="dev-1"]')
            await page.wait_for_selector("#link.up")
            await shots.take(page, "in")
        # The printed URL carries the token; the page keeps it for the tab, not in the address bar.
        async with browser_page(tmp_path) as fresh:
            await fresh.goto(base + "#token=console-secret")
            await fresh.wait_for_selector("#link.up")
            assert fresh.url == base
            assert await fresh.locator("#login").is_hidden()
        # 401s while asking for the token are expected console errors; nothing else.
        assert all("401" in problem for problem in page.problems)
