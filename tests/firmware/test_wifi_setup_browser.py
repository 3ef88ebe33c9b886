"""The Wi-Fi setup page (umcpfw.wifisetup) filled in by a person's browser: a real headless
Chromium (Playwright, the system's browser, as the web console's tests drive it) against the
simulated generic board in MicroPython, with no Wi-Fi configured: the empty form, a bad answer
refused with what to fix (what was typed shown back as text, never as markup; config.json
unchanged), then a good answer saved and the board restarting onto the new network (hwsim's
record). Screenshots of each step: build/artifacts/web-console/wifi-setup/."""

import asyncio
import json

import pytest

from tests.support.firmwareharness import Backend, Sim
from tests.support.wifisetupharness import STATUS_OLED, free_port, page_up, read_config, setup_config
from tests.support.webharness import Shots, browser_page

pytestmark = [pytest.mark.timeout(150), pytest.mark.anyio]

GOOD_SSID = "Home & <i>garden</i>"  # markup in a network's name stays text on the page
LOAD_FAILED = "Failed to load resource: the server responded with a status of %d"


async def submit(page):
    """Press the form's button, as a person does; returns (status, HTML) of the board's
    answer, loaded in the page."""
    async with page.expect_navigation() as navigation:
        await page.click('button[type="submit"]')
    answer = await navigation.value
    return answer.status, await answer.text()


async def test_the_setup_page_in_chromium(tmp_path):
    shots = Shots("wifi-setup")
    port = free_port()
    url = "http://127.0.0.1:%d/" % port
    with open(tmp_path / "hwsim-network.json", "w") as f:
        json.dump({"scan": [["attic", -80], ["home <net>", -40]]}, f)
    backend = await Backend().start()
    sim = Sim(backend.url, tmp_path, micropython=True,
              extra_config=setup_config(port, wifi={"ssid": "", "password": ""})).start()
    try:
        await page_up(url, sim)  # the board booted into the mode
        before = read_config(tmp_path)
        async with browser_page(tmp_path, viewport={"width": 420, "height": 700}) as page:
            answer = await page.goto(url)
            assert answer.status == 200
            assert await page.title() == "Wi-Fi setup"
            assert await page.locator("#problem").count() == 0
            for name in ("ssid", "password", "ota_url", "url"):
                assert await page.locator('input[name="%s"]' % name).input_value() == ""
            # The scan's networks offered to pick from, strongest first, their names as text.
            offered = await page.locator("#nets option").evaluate_all("options => options.map(o => o.value)")
            assert offered == ["home <net>", "attic"]
            print("screenshot:", await shots.take(page, "empty-form"))

            # A bad answer: the password too short, markup in the network's name.
            await page.fill('input[name="ssid"]', "<b>home</b>")
            await page.fill('input[name="password"]', "abc")
            await page.fill('input[name="ota_url"]', "ftp://example.com/fw.bin")
            status, html = await submit(page)
            assert status == 400
            problem = page.locator("#problem")
            assert await problem.is_visible()
            said = await problem.inner_text()
            assert "Password: empty (an open network) or 8 to 63 characters, got 3" in said
            assert "OTA URL: http:// or https://" in said
            assert "Network" not in said  # the name itself was fine
            # What was typed is back in the form as text (the browser decoded the escaped
            # attribute): no <b> element was made of it; the password is never sent back.
            assert await page.locator('input[name="ssid"]').input_value() == "<b>home</b>"
            assert await page.locator("b").count() == 0
            assert 'value="&lt;b&gt;home&lt;/b&gt;"' in html and "<b>home" not in html
            assert await page.locator('input[name="password"]').input_value() == ""
            assert await page.locator('input[name="ota_url"]').input_value() == "ftp://example.com/fw.bin"
            print("screenshot:", await shots.take(page, "bad-answer-refused"))
            assert read_config(tmp_path) == before

            # A good answer: saved, the confirmation says where the board goes.
            await page.fill('input[name="ssid"]', GOOD_SSID)
            await page.fill('input[name="password"]', "correct horse")
            await page.fill('input[name="ota_url"]', "")
            await page.fill('input[name="url"]', backend.url)
            status, html = await submit(page)
            assert status == 200
            assert await page.locator("h1").inner_text() == "Saved"
            assert await page.locator("p").inner_text() == "The board restarts and joins %s." % GOOD_SSID
            assert await page.locator("b").inner_text() == GOOD_SSID  # one element, the name its text
            assert await page.locator("i").count() == 0
            print("screenshot:", await shots.take(page, "saved"))
            # Nothing went wrong in the page: the only console lines are the browser's own
            # notes on the refused answer (400) and the favicon the board does not have (404).
            expected = {"console: " + LOAD_FAILED % 400 + " (Bad Request)",
                        "console: " + LOAD_FAILED % 404 + " (Not Found)"}
            assert set(page.problems) <= expected, page.problems

        device = await asyncio.wait_for(backend.next_device(), 60)  # restarted, on the new network
        await device.initialize()
        assert (await device.call_json("self.get_device_status"))["network"]["ssid"] == GOOD_SSID
    finally:
        assert sim.stop() == 0
        await backend.stop()

    config = read_config(tmp_path)
    assert config["wifi"] == {"ssid": GOOD_SSID, "password": "correct horse"}
    assert config["url"] == backend.url and "ota_url" not in config
    assert config["board"] == "generic" and config["parts"] == [STATUS_OLED]
    setup_boot, next_boot = sim.records()[-2:]
    assert setup_boot["reason"] == "reset"
    assert setup_boot["wifi"]["access_point"]["active"] and setup_boot["wifi"]["connects"] == []
    assert next_boot["wifi"]["connects"] == [[GOOD_SSID, "correct horse"]]
    assert not next_boot["wifi"]["access_point"]["active"]
