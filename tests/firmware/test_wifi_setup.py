"""Wi-Fi set up on the board (umcpfw.wifisetup) end to end in the simulator, on CPython and
MicroPython: a generic board with no Wi-Fi, or whose network is unreachable (hwsim-network.json),
opens its access point (hwsim's record) and serves the setup page on a loopback port; a real
HTTP client fills it in, bad fields are refused with the message shown (escaped) and
config.json unchanged, a good answer is saved and the board restarts onto the new network
(its connects in hwsim's record) and reaches the backend; self.system.reconfigure_wifi
enters the mode again. The same page filled in by headless Chromium: test_wifi_setup_browser."""

import asyncio
import json
import os

import pytest

from tests.support import oled_text
from tests.support.firmware_harness import RUNTIMES, Backend, Sim, run
from tests.support.wifi_setup_harness import STATUS_OLED, free_port, http, page_up, read_config, setup_config

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_no_wifi_opens_the_setup_page_and_a_good_answer_restarts_onto_it(tmp_path, micropython):
    port = free_port()
    url = "http://127.0.0.1:%d/" % port
    with open(tmp_path / "hwsim-network.json", "w") as f:
        json.dump({"scan": [["attic", -80], ["home <net>", -40]]}, f)

    async def scenario():
        backend = await Backend().start()
        sim = Sim(backend.url, tmp_path, micropython=micropython,
                  extra_config=setup_config(port, wifi={"ssid": "", "password": ""})).start()
        try:
            status, page = await page_up(url, sim)
            assert status == 200
            assert '<form method="post" action="/">' in page and 'name="ssid"' in page
            # The scan's networks offered, strongest first, their names escaped.
            assert page.index('value="home &lt;net&gt;"') < page.index('value="attic"')
            assert "<script" not in page and "http" not in page.split("<body>")[1].replace(url, "")
            before = read_config(tmp_path)

            # Bad fields: every problem said, what was typed shown back escaped, the password
            # never; config.json untouched.
            status, page = await asyncio.to_thread(http, "POST", url, {
                "ssid": "<b>x</b>" * 5, "password": "short", "ota_url": "ftp://x", "url": ""})
            assert status == 400
            assert "Network: 1 to 32 bytes, got 40" in page
            assert "Password: empty (an open network) or 8 to 63 characters, got 5" in page
            assert "OTA URL: http:// or https://" in page
            assert "<b>x</b>" not in page and 'value="&lt;b&gt;x&lt;/b&gt;' in page
            assert "short" not in page
            status, page = await asyncio.to_thread(http, "POST", url, {
                "ssid": "home", "password": "", "url": 'javascript:alert("x")'})
            assert status == 400 and "Server URL: ws:// or wss://" in page
            assert 'javascript:alert(&quot;x&quot;)' in page and 'alert("x")' not in page
            assert read_config(tmp_path) == before

            # A good answer: saved, then the board restarts and joins it.
            status, page = await asyncio.to_thread(http, "POST", url, {
                "ssid": "home", "password": "correct horse", "url": backend.url})
            assert status == 200 and "joins <b>home</b>" in page
            device = await backend.next_device()  # after the restart, over the new network
            await device.initialize()
            assert (await device.call_json("self.get_device_status"))["network"]["ssid"] == "home"
        finally:
            assert sim.stop() == 0
            await backend.stop()
        return sim

    sim = run(scenario(), timeout=100)
    config = read_config(tmp_path)
    assert config["wifi"] == {"ssid": "home", "password": "correct horse"}
    assert config["board"] == "generic" and config["parts"] == [STATUS_OLED]  # the rest kept
    setup_boot, next_boot = sim.records()[-2:]
    assert setup_boot["reason"] == "reset"
    ap = setup_boot["wifi"]["access_point"]
    assert ap["active"] and ap["ssid"].startswith("umcp-") and len(ap["key"]) == 8
    assert ap["security"] == 3  # WPA2
    assert setup_boot["wifi"]["connects"] == []  # nothing to connect to: no network configured
    # The status screen showed the access point and its password (still on the panel at the
    # reset: the page's answer was the last thing the board did).
    shown = oled_text.lines(setup_boot["hwsim"]["oleds"]["0:60"], micropython)
    assert shown == ["Wi-Fi setup", "Join " + ap["ssid"], "Key " + ap["key"], "192.168.4.1"]
    assert next_boot["wifi"]["connects"] == [["home", "correct horse"]]
    assert not next_boot["wifi"]["access_point"]["active"]


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_an_unreachable_network_then_reconfigure_wifi(tmp_path, micropython):
    port = free_port()
    url = "http://127.0.0.1:%d/" % port
    network_file = tmp_path / "hwsim-network.json"
    with open(network_file, "w") as f:
        json.dump({"unreachable": ["office"]}, f)

    async def scenario():
        backend = await Backend().start()
        sim = Sim(backend.url, tmp_path, micropython=micropython,
                  extra_config=setup_config(port, wifi={"ssid": "office", "password": "12345678"},
                                            wifi_setup_after=1)).start()
        try:
            status, page = await page_up(url, sim)  # given up on "office" after a second
            assert status == 200
            before = read_config(tmp_path)
            # The office network is back: the owner saves it again, with its password.
            os.remove(network_file)
            status, _ = await asyncio.to_thread(http, "POST", url, {
                "ssid": "office", "password": "12345678"})
            assert status == 200
            device = await backend.next_device()
            await device.initialize()
            listed, _ = await device.list_tools(with_user_tools=True)
            assert "self.system.reconfigure_wifi" in {tool["name"] for tool in listed}
            visible, _ = await device.list_tools()
            assert "self.system.reconfigure_wifi" not in {tool["name"] for tool in visible}
            said = await device.call("self.system.reconfigure_wifi")
            assert said["isError"] is False and "Wi-Fi setup" in said["content"][0]["text"]
            status, page = await page_up(url, sim)  # the same mode again, by request
            assert status == 200 and 'name="ssid"' in page
            assert read_config(tmp_path) == dict(before, wifi={"ssid": "office", "password": "12345678"})
        finally:
            assert sim.stop() == 0
            await backend.stop()
        return sim

    sim = run(scenario(), timeout=100)
    first, second, third = sim.records()[-3:]
    assert first["wifi"]["connects"][0] == ["office", "12345678"]  # tried before giving up
    assert first["wifi"]["access_point"]["active"]
    assert second["wifi"]["connects"] == [["office", "12345678"]] and not second["wifi"]["access_point"]["active"]
    assert third["wifi"]["access_point"]["active"]  # reconfigure_wifi's boot: no connect tried
    assert third["wifi"]["connects"] == []
