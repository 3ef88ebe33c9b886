"""A network lost while the board runs (umcpfw.app's upkeep, config.json's
wifi_lost_setup_after), in the simulator on CPython and MicroPython: the test takes the
board's network away and brings it back through hwsim-network.json (hwsim drops the station
that is on a network made unreachable). Lost for the set time, the board restarts into the
same setup as at the start (access point with a fresh WPA2 password on the status screen
and in the log, the page on a loopback port); a real HTTP client fills it in and the board
restarts onto the new network. Back before the set time: no setup at all. Back while the
setup waits: the board restarts onto it. A bad timing in config.json stops the start with
one line."""

import asyncio

import pytest

from tests.support import oledtext
from tests.support.firmwareharness import RUNTIMES, Sim, run
from tests.support.wifisetupharness import (STATUS_OLED, answer_and_join, free_port, http, log_count, logged, page_up,
                                              read_config, refused, rejoin_when_back, setup_board, surroundings)

pytestmark = pytest.mark.timeout(150)
OFFICE = {"ssid": "office", "password": "12345678"}
CHECK_S = 0.2  # wifi_check_interval: the loss noticed at once


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_network_lost_for_the_set_time_opens_the_setup_and_an_answer_restarts_onto_it(tmp_path, micropython):
    port = free_port()
    url = "http://127.0.0.1:%d/" % port
    surroundings(tmp_path, scan=[["home <net>", -40], ["office", -70]])

    async def scenario():
        async with setup_board(tmp_path, micropython, port, wifi=OFFICE, wifi_lost_setup_after=1,
                               wifi_check_interval=CHECK_S) as (backend, sim):
            device = await backend.next_device()
            await device.initialize()
            assert refused(url)  # no setup while the network is there
            before = read_config(tmp_path)
            surroundings(tmp_path, unreachable=["office"], scan=[["home <net>", -40]])
            status, page = await page_up(url, sim)
            assert status == 200
            assert '<form method="post" action="/">' in page and 'name="ssid"' in page
            assert 'value="home &lt;net&gt;"' in page  # the scan at the mode's start, escaped
            assert "<script" not in page
            # A bad answer: said, shown back escaped, the password never; config.json kept.
            status, page = await asyncio.to_thread(http, "POST", url, {
                "ssid": "<i>home</i>", "password": "short"})
            assert status == 400 and "or 8 to 63 characters, got 5" in page
            assert "<i>home</i>" not in page and "&lt;i&gt;home&lt;/i&gt;" in page and "short" not in page
            assert read_config(tmp_path) == before
            await answer_and_join(url, backend, "home <net>")
        return sim

    sim = run(scenario(), timeout=130)
    config = read_config(tmp_path)
    assert config["wifi"] == {"ssid": "home <net>", "password": "correct horse"}
    assert config["wifi_lost_setup_after"] == 1 and config["parts"] == [STATUS_OLED]  # the rest kept
    assert sim.read_settings().get("wifi_setup") is None  # the setup's flag: once
    lost_boot, setup_boot, next_boot = sim.records()[-3:]
    assert lost_boot["reason"] == "reset" and not lost_boot["wifi"]["access_point"]["active"]
    connects = lost_boot["wifi"]["connects"]
    assert connects[0] == ["office", "12345678"] and len(connects) >= 2  # joined, then retried
    assert set(tuple(c) for c in connects) == {("office", "12345678")}
    assert setup_boot["reason"] == "reset"
    # The lost network tried again while the page waited.
    assert set(tuple(c) for c in setup_boot["wifi"]["connects"]) <= {("office", "12345678")}
    ap = setup_boot["wifi"]["access_point"]
    assert ap["active"] and ap["ssid"].startswith("umcp-") and len(ap["key"]) == 8
    assert ap["security"] == 3  # WPA2, as at the start
    # Its password on the status screen and in the log, as at the start.
    shown = oledtext.lines(setup_boot["hwsim"]["oleds"]["0:60"], micropython)
    assert shown == ["Wi-Fi setup", "Join " + ap["ssid"], "Key " + ap["key"], "192.168.4.1"]
    assert log_count(sim, "Wi-Fi setup (Wi-Fi office lost): join %s with password %s"
                     % (ap["ssid"], ap["key"])) == 1
    assert next_boot["wifi"]["connects"] == [["home <net>", "correct horse"]]
    assert log_count(sim, "Traceback") == 0
    assert not next_boot["wifi"]["access_point"]["active"]


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_network_back_before_the_set_time_opens_no_setup(tmp_path, micropython):
    port = free_port()
    url = "http://127.0.0.1:%d/" % port

    async def scenario():
        async with setup_board(tmp_path, micropython, port, wifi=OFFICE, wifi_lost_setup_after=3600,
                               wifi_check_interval=CHECK_S) as (backend, sim):
            device = await backend.next_device()
            await device.initialize()
            surroundings(tmp_path, unreachable=["office"])
            await logged(sim, "not connected (status")  # noticed, and a connect failed
            surroundings(tmp_path)
            # Back on it; the session carried on through it all.
            while not (await device.call_json("self.get_device_status"))["network"]["connected"]:
                await asyncio.sleep(0.1)
            assert log_count(sim, "Wi-Fi lost") == 1
            assert refused(url)
        return sim

    sim = run(scenario(), timeout=130)
    record = sim.records()[-1]
    assert record["reason"] == "stop"  # no restart
    assert not record["wifi"]["access_point"]["active"]
    assert len(record["wifi"]["connects"]) >= 3  # the start, a failed retry, the one back
    assert log_count(sim, "Wi-Fi setup") == 0
    assert log_count(sim, "Traceback") == 0 and log_count(sim, "ERROR") == 0  # nothing failed


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_network_back_while_the_setup_waits_restarts_the_board_onto_it(tmp_path, micropython):
    port = free_port()
    url = "http://127.0.0.1:%d/" % port

    async def scenario():
        async with setup_board(tmp_path, micropython, port, wifi=OFFICE, wifi_lost_setup_after=0.5,
                               wifi_check_interval=CHECK_S) as (backend, sim):
            device = await backend.next_device()
            await device.initialize()
            before = read_config(tmp_path)
            surroundings(tmp_path, unreachable=["office"])
            status, _ = await page_up(url, sim)
            assert status == 200
            await rejoin_when_back(tmp_path, url, backend, "office", before)
        return sim

    sim = run(scenario(), timeout=130)
    lost_boot, setup_boot, next_boot = sim.records()[-3:]
    assert lost_boot["reason"] == "reset" and not lost_boot["wifi"]["access_point"]["active"]
    assert setup_boot["reason"] == "reset" and setup_boot["wifi"]["access_point"]["active"]
    assert setup_boot["wifi"]["connects"][-1] == ["office", "12345678"]  # the try that worked
    assert log_count(sim, "Wi-Fi office is back before the setup was answered: restarting") == 1
    assert next_boot["reason"] == "stop" and not next_boot["wifi"]["access_point"]["active"]
    assert next_boot["wifi"]["connects"] == [["office", "12345678"]]
    assert log_count(sim, "Traceback") == 0


@pytest.mark.parametrize("micropython", RUNTIMES)
@pytest.mark.parametrize("key, value, words", [
    ("wifi_lost_setup_after", -5, '"wifi_lost_setup_after" must be a number of seconds (0 or more, '
                                  'or null: never), not -5'),
    ("wifi_lost_setup_after", "5 min", "\"wifi_lost_setup_after\" must be a number of seconds"),
])
def test_a_bad_lost_network_timing_stops_the_start_with_one_line(tmp_path, micropython, key, value, words):
    sim = Sim("ws://127.0.0.1:9/xiaozhi/v1/", tmp_path, micropython=micropython,
              extra_config={"board": "generic", key: value}).start()
    assert sim.wait(60) == 1
    with open(sim.log_path) as f:
        log = f.read()
    said = [text for text in log.splitlines() if text.startswith("umcp cannot start:")]
    assert len(said) == 1 and words in said[0], log
    assert "Traceback" not in log
    assert sim.records()[-1]["wifi"]["connects"] == []  # stopped before trying the network
