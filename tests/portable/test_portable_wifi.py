# Wi-Fi bring-up (umcpfw.station) and upkeep (umcpfw.app's, which loads umcpfw.station's
# recover() when the network is lost) over the simulated network module.
# Runs under pytest and inside MicroPython.
import asyncio

import hwsim
import network
from umcpfw import station
from umcpfw.app import keep_connected

SSID = "workshop"
PASSWORD = "s3cret"
_GUARD_S = 5  # a hang guard, not a timing assertion


def _station():
    hwsim.reset()
    return network.WLAN(network.STA_IF)


async def test_connects_at_the_first_try():
    wlan = _station()
    await asyncio.wait_for(station.connect(wlan, SSID, PASSWORD), _GUARD_S)
    assert wlan.active() and wlan.isconnected()
    assert network.sim_connects() == [(SSID, PASSWORD)]


async def test_the_bring_up_code_leaves_the_heap_once_the_station_is_up():
    import sys

    wlan = _station()
    assert await asyncio.wait_for(station.connect(wlan, SSID, PASSWORD), _GUARD_S) is True
    assert station.set_clock(_Ntp()) is True
    if sys.implementation.name == "micropython":  # loaded for each call, then dropped
        assert "umcpfw.station" not in sys.modules
    # The upkeep, resident, loads it again when the network is lost.
    network.sim_drop()
    upkeep = asyncio.create_task(keep_connected(_App({"wifi_check_interval": 0.01}), wlan))
    try:
        await asyncio.wait_for(_until(wlan.isconnected), _GUARD_S)
    finally:
        upkeep.cancel()
    assert len(network.sim_connects()) == 2
    if sys.implementation.name == "micropython":
        assert "umcpfw.station" not in sys.modules


async def test_retries_after_failures_until_connected():
    wlan = _station()
    network.sim_fail_connects(2, network.STAT_WRONG_PASSWORD)
    await asyncio.wait_for(station.connect(wlan, SSID, PASSWORD, pause_s=0.01), _GUARD_S)
    assert wlan.isconnected()
    assert len(network.sim_connects()) == 3


async def test_a_definitive_failure_ends_the_attempt_before_its_timeout():
    wlan = _station()
    wlan.active(True)
    network.sim_fail_connects(1, network.STAT_NO_AP_FOUND)
    # Waiting out attempt_s (an hour) would trip the guard.
    ok = await asyncio.wait_for(station._attempt(wlan, SSID, PASSWORD, 3600), _GUARD_S)
    assert ok is False


async def test_a_connect_that_raises_is_a_failed_attempt():
    wlan = _station()  # inactive: the ESP32 port raises OSError("Wifi Not Started")
    assert await station._attempt(wlan, SSID, PASSWORD, 1) is False


async def test_upkeep_brings_a_dropped_link_back():
    wlan = _station()
    await station.connect(wlan, SSID, PASSWORD)
    upkeep = asyncio.create_task(keep_connected(_App({"wifi_check_interval": 0.01}), wlan,
                                                     pause_s=0.01))
    try:
        network.sim_drop()
        assert not wlan.isconnected()

        async def reconnected():
            while not wlan.isconnected():
                await asyncio.sleep(0.01)

        await asyncio.wait_for(reconnected(), _GUARD_S)
        assert len(network.sim_connects()) == 2
    finally:
        upkeep.cancel()


async def _until(condition):
    while not condition():
        await asyncio.sleep(0.01)


class _App:
    """What the upkeep uses of the Application: its config, settings and reboot()."""

    def __init__(self, config=None):
        self.config = dict(config or {}, wifi={"ssid": SSID, "password": PASSWORD})
        self.saved = {}
        self.settings = self
        self.reboots = []

    def get(self, key):
        return self.saved.get(key)

    def set(self, key, value):
        self.saved[key] = value

    def reboot(self, delay_ms=0):
        self.reboots.append(delay_ms)

    def wifi_credentials(self):
        return SSID, PASSWORD


async def test_a_network_lost_for_the_set_time_restarts_into_the_setup():
    wlan = _station()
    await station.connect(wlan, SSID, PASSWORD)
    app = _App({"wifi_check_interval": 0.01, "wifi_lost_setup_after": 0.05})
    upkeep = asyncio.create_task(keep_connected(app, wlan, pause_s=0.01))
    try:
        network.sim_unreachable([SSID])  # drops the station that is on it
        assert not wlan.isconnected()
        await asyncio.wait_for(_until(lambda: app.reboots), _GUARD_S)
        assert len(network.sim_connects()) >= 3  # joined, then tried again before giving up
        assert app.saved == {"wifi_setup": "lost"}  # the next start's setup, and why
        assert app.reboots == [0]
        # Until the restart comes, the upkeep carries on: the network back, the station too.
        network.sim_unreachable(())
        await asyncio.wait_for(_until(wlan.isconnected), _GUARD_S)
    finally:
        upkeep.cancel()


async def test_a_network_back_before_the_set_time_restarts_nothing():
    wlan = _station()
    await station.connect(wlan, SSID, PASSWORD)
    app = _App({"wifi_check_interval": 0.01, "wifi_lost_setup_after": 3600})
    upkeep = asyncio.create_task(keep_connected(app, wlan, pause_s=0.01, pause_max_s=0.01))
    try:
        network.sim_unreachable([SSID])
        await asyncio.wait_for(_until(lambda: len(network.sim_connects()) >= 3), _GUARD_S)
        assert not wlan.isconnected()  # tried again, still lost
        network.sim_unreachable(())
        await asyncio.wait_for(_until(wlan.isconnected), _GUARD_S)
        assert app.reboots == [] and app.saved == {}
    finally:
        upkeep.cancel()


async def test_the_upkeep_takes_its_timings_from_config_json():
    wlan = _station()
    await station.connect(wlan, SSID, PASSWORD)
    app = _App({"wifi_lost_setup_after": 0.05, "wifi_check_interval": 0.01})
    upkeep = asyncio.create_task(keep_connected(app, wlan))
    try:
        network.sim_unreachable([SSID])
        await asyncio.wait_for(_until(lambda: app.reboots), _GUARD_S)
        assert app.saved == {"wifi_setup": "lost"}
    finally:
        upkeep.cancel()


class _SetupApp(_App):
    """What the setup's retries use of the Application: its board's station and reboot()."""

    def __init__(self, wlan):
        _App.__init__(self)
        self.board = self
        self.wlan = wlan


async def test_the_setup_keeps_trying_the_network_and_restarts_once_it_is_back():
    from umcpfw import wifisetup

    wlan = _station()
    network.sim_unreachable([SSID])  # down since the start: the setup opened
    app = _SetupApp(wlan)
    trying = asyncio.create_task(wifisetup.keep_trying(app, station.connect, SSID, PASSWORD, 0.01))
    try:
        await asyncio.wait_for(_until(lambda: len(network.sim_connects()) >= 2), _GUARD_S)
        assert app.reboots == [] and not wlan.isconnected()  # still down: the page waits
        network.sim_unreachable(())
        await asyncio.wait_for(_until(lambda: app.reboots), _GUARD_S)
        assert app.reboots == [0] and wlan.isconnected()
        assert set(network.sim_connects()) == {(SSID, PASSWORD)}
        assert app.saved == {}  # no flag: the next start is a normal one
    finally:
        trying.cancel()


def test_good_wifi_timings_pass_the_start_check():
    from umcpfw.configcheck import check

    for config in ({}, {"wifi_setup_after": None, "wifi_lost_setup_after": 0, "wifi_check_interval": 0.5},
                   {"wifi_setup_after": 0, "wifi_lost_setup_after": None},
                   {"wifi_lost_setup_after": 2.5, "wifi_check_interval": 30}):
        assert check(config) == []  # raises nothing, knows every key


def test_a_bad_wifi_timing_is_one_clear_line():
    from umcpfw.app import ConfigError
    from umcpfw.configcheck import check

    cases = [
        ({"wifi_lost_setup_after": -1}, '"wifi_lost_setup_after" must be a number of seconds '
                                        '(0 or more, or null: never), not -1'),
        ({"wifi_lost_setup_after": "5 min"}, "not '5 min'"),
        ({"wifi_lost_setup_after": True}, '"wifi_lost_setup_after"'),
        ({"wifi_lost_setup_after": [300]}, '"wifi_lost_setup_after"'),
        ({"wifi_setup_after": -5}, '"wifi_setup_after" must be'),
        ({"wifi_check_interval": 0}, '"wifi_check_interval" must be a number of seconds above 0'),
        ({"wifi_check_interval": None}, '"wifi_check_interval"'),
    ]
    for config, words in cases:
        try:
            check(config)
        except ConfigError as e:
            said = str(e)
            assert said.startswith("config.json: ") and words in said, (config, said)
            assert "\n" not in said
            continue
        assert False, config


class _Ntp:
    """ntptime's settime(), failing `fails` times first."""

    def __init__(self, fails=0):
        self.fails = fails
        self.calls = 0

    def settime(self):
        self.calls += 1
        if self.calls <= self.fails:
            raise OSError(110, "ETIMEDOUT")


def test_clock_is_set_from_ntp_with_retries():
    ntp = _Ntp(fails=2)
    assert station.set_clock(ntp) is True and ntp.calls == 3
    ntp = _Ntp(fails=5)
    assert station.set_clock(ntp, attempts=3) is False and ntp.calls == 3  # logged, not raised
    try:
        import ntptime  # noqa: F401
    except ImportError:  # the host and the simulator: the clock is left as it is
        assert station.set_clock() is False


def test_the_ntptime_module_leaves_the_heap_once_the_clock_is_set():
    import sys

    try:
        import ntptime  # noqa: F401
    except ImportError:  # the host and the simulator: a stand-in, as a board has it frozen
        sys.modules["ntptime"] = _Ntp(fails=1)
    assert station.set_clock() is True
    if sys.implementation.name == "micropython":  # used once, then dropped
        assert "ntptime" not in sys.modules
    sys.modules.pop("ntptime", None)
