"""Wi-Fi set up on the board (umcpfw.wifisetup) end to end in the simulator, on CPython and
MicroPython: a generic board with no Wi-Fi, or whose network is unreachable (hwsim-network.json),
opens its access point (hwsim's record) and serves the setup page on a loopback port; a real
HTTP client fills it in, bad fields are refused with the message shown (escaped) and
config.json unchanged, a good answer is saved and the board restarts onto the new network
(its connects in hwsim's record) and reaches the backend; self.system.reconfigure_wifi
enters the mode again. The same page filled in by headless Chromium: test_wifi_setup_browser."""

import asyncio
import json

import pytest

from tests.support import oledtext
from tests.support.firmwareharness import RUNTIMES, TOKEN, run
from tests.support.wifisetupharness import (STATUS_OLED, answer_and_join, free_port, http, log_count, logged, page_up,
                                              read_config, rejoin_when_back, setup_board, surroundings)

pytestmark = pytest.mark.timeout(120)
OFFICE = {"ssid": "office", "password": "12345678"}
HOME = {"ssid": "home", "password": "correct horse"}
CHECK_S = 0.2  # wifi_check_interval: the setup's retries come soon
IDLE = 1000  # the station's status after a failed try (hwsim: the ESP32 port's STAT_IDLE)


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_no_wifi_opens_the_setup_page_and_a_good_answer_restarts_onto_it(tmp_path, micropython):
    port = free_port()
    url = "http://127.0.0.1:%d/" % port
    with open(tmp_path / "hwsim-network.json", "w") as f:
        json.dump({"scan": [["attic", -80], ["home <net>", -40]]}, f)

    async def scenario():
        async with setup_board(tmp_path, micropython, port, wifi={"ssid": "", "password": ""}) as (backend, sim):
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
            await answer_and_join(url, backend, "home")
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
    shown = oledtext.lines(setup_boot["hwsim"]["oleds"]["0:60"], micropython)
    assert shown == ["Wi-Fi setup", "Join " + ap["ssid"], "Key " + ap["key"], "192.168.4.1"]
    assert next_boot["wifi"]["connects"] == [["home", "correct horse"]]
    assert not next_boot["wifi"]["access_point"]["active"]


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_board_with_no_server_gets_one_from_the_page_and_never_a_config_it_cannot_start(tmp_path, micropython):
    # Neither Wi-Fi nor a server in config.json: the network alone, or a WebSocket URL
    # without its token, would leave a board that cannot start (a computer needed again).
    port = free_port()
    url = "http://127.0.0.1:%d/" % port

    async def scenario():
        async with setup_board(tmp_path, micropython, port, wifi=None, url=None, token=None) as (backend, sim):
            status, page = await page_up(url, sim)
            assert status == 200 and 'name="token" type="password" value=""' in page
            before = read_config(tmp_path)
            assert before.get("url") is None and before.get("token") is None
            for form, words in (
                    ({"ssid": "home", "password": ""},
                     "Server: give the OTA URL, or the server&#39;s WebSocket URL and its token"),
                    ({"ssid": "home", "password": "", "url": backend.url},
                     "Token: the server&#39;s WebSocket URL needs its token"),
                    ({"ssid": "home", "password": "", "url": "ftp://x", "token": "s3cret-token"},
                     "Server URL: ws:// or wss://")):
                status, page = await asyncio.to_thread(http, "POST", url, form)
                assert status == 400 and words in page, page
                assert "s3cret-token" not in page  # a token is never shown back
            assert read_config(tmp_path) == before
            await answer_and_join(url, backend, "home", token=TOKEN)
        return backend.url

    server = run(scenario(), timeout=100)
    config = read_config(tmp_path)
    assert config["wifi"] == {"ssid": "home", "password": "correct horse"}
    assert config["url"] == server and config["token"] == TOKEN


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_an_unreachable_network_then_reconfigure_wifi(tmp_path, micropython):
    # "office" stays down all along, and the owner answers with another network: the
    # board's retries of "office" (umcpfw.wifisetup.keep_trying) cannot come first.
    port = free_port()
    url = "http://127.0.0.1:%d/" % port
    surroundings(tmp_path, unreachable=["office"], scan=[["home", -40]])

    async def scenario():
        async with setup_board(tmp_path, micropython, port, wifi=OFFICE, wifi_setup_after=1,
                               wifi_check_interval=CHECK_S) as (backend, sim):
            status, page = await page_up(url, sim)  # given up on "office" after a second
            assert status == 200 and 'value="home"' in page
            before = read_config(tmp_path)
            status, _ = await asyncio.to_thread(http, "POST", url, HOME)
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
            # "home" is up, but the owner asked to change it: the page does not give up for
            # it. Asked for a while (many retry intervals), the page still answers; the
            # board's record at the stop below says it never tried "home".
            for _ in range(20):
                await asyncio.sleep(CHECK_S / 2)
                status, page = await asyncio.to_thread(http, "GET", url)
                assert status == 200 and 'name="ssid"' in page
            assert read_config(tmp_path) == dict(before, wifi=HOME)
        return sim

    sim = run(scenario(), timeout=100)
    first, second, third = sim.records()[-3:]
    assert first["wifi"]["connects"][0] == ["office", "12345678"]  # tried before giving up
    assert set(tuple(c) for c in first["wifi"]["connects"]) == {("office", "12345678")}
    assert first["wifi"]["access_point"]["active"]
    assert second["wifi"]["connects"] == [["home", "correct horse"]] and not second["wifi"]["access_point"]["active"]
    assert third["reason"] == "stop"  # still in the setup when the test stopped it
    assert third["wifi"]["access_point"]["active"]  # reconfigure_wifi's boot: no connect tried
    assert third["wifi"]["connects"] == []
    assert log_count(sim, "Wi-Fi setup (asked for by self.system.reconfigure_wifi)") == 1
    assert log_count(sim, "is back before the setup was answered") == 0


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_an_unreachable_network_back_while_the_setup_waits_restarts_the_board_onto_it(tmp_path, micropython):
    # After a power cut the router may come back later than the board gave up on it.
    port = free_port()
    url = "http://127.0.0.1:%d/" % port
    surroundings(tmp_path, unreachable=["office"])

    async def scenario():
        async with setup_board(tmp_path, micropython, port, wifi=OFFICE, wifi_setup_after=1,
                               wifi_check_interval=CHECK_S) as (backend, sim):
            status, _ = await page_up(url, sim)
            assert status == 200
            before = read_config(tmp_path)
            # Tried again while the page waits (keep_trying's first pause is CHECK_S; the
            # start's own retries pause 1 s), still down: the page carries on.
            await logged(sim, "Wi-Fi office not connected (status %d); retrying in %s s" % (IDLE, CHECK_S))
            status, page = await asyncio.to_thread(http, "GET", url)
            assert status == 200 and 'name="ssid"' in page
            await rejoin_when_back(tmp_path, url, backend, "office", before)
        return sim

    sim = run(scenario(), timeout=100)
    assert sim.read_settings().get("wifi_setup") is None  # no flag: the next start is a normal one
    setup_boot, next_boot = sim.records()[-2:]
    assert setup_boot["reason"] == "reset" and setup_boot["wifi"]["access_point"]["active"]
    connects = setup_boot["wifi"]["connects"]
    # The start's tries, at least one failed retry while the page waited, the one that worked.
    assert len(connects) >= 4 and set(tuple(c) for c in connects) == {("office", "12345678")}
    assert log_count(sim, "Wi-Fi setup (Wi-Fi office not reachable): join") == 1
    assert log_count(sim, "Wi-Fi office is back before the setup was answered: restarting") == 1
    assert next_boot["reason"] == "stop" and not next_boot["wifi"]["access_point"]["active"]
    assert next_boot["wifi"]["connects"] == [["office", "12345678"]]
    assert log_count(sim, "Traceback") == 0
