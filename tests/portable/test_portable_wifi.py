# Wi-Fi bring-up and upkeep (firmware/wifi.py) over the simulated network module.
# Runs under pytest and inside MicroPython.
import asyncio

import hwsim
import network
from umcpfw import wifi

SSID = "workshop"
PASSWORD = "s3cret"
_GUARD_S = 5  # a hang guard, not a timing assertion


def _station():
    hwsim.reset()
    return network.WLAN(network.STA_IF)


async def test_connects_at_the_first_try():
    wlan = _station()
    await asyncio.wait_for(wifi.connect(wlan, SSID, PASSWORD), _GUARD_S)
    assert wlan.active() and wlan.isconnected()
    assert network.sim_connects() == [(SSID, PASSWORD)]


async def test_retries_after_failures_until_connected():
    wlan = _station()
    network.sim_fail_connects(2, network.STAT_WRONG_PASSWORD)
    await asyncio.wait_for(wifi.connect(wlan, SSID, PASSWORD, pause_s=0.01), _GUARD_S)
    assert wlan.isconnected()
    assert len(network.sim_connects()) == 3


async def test_a_definitive_failure_ends_the_attempt_before_its_timeout():
    wlan = _station()
    wlan.active(True)
    network.sim_fail_connects(1, network.STAT_NO_AP_FOUND)
    # Waiting out attempt_s (an hour) would trip the guard.
    ok = await asyncio.wait_for(wifi._attempt(wlan, SSID, PASSWORD, 3600), _GUARD_S)
    assert ok is False


async def test_a_connect_that_raises_is_a_failed_attempt():
    wlan = _station()  # inactive: the ESP32 port raises OSError("Wifi Not Started")
    assert await wifi._attempt(wlan, SSID, PASSWORD, 1) is False


async def test_upkeep_brings_a_dropped_link_back():
    wlan = _station()
    await wifi.connect(wlan, SSID, PASSWORD)
    upkeep = asyncio.create_task(wifi.keep_connected(wlan, SSID, PASSWORD, check_s=0.01,
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
    assert wifi.set_clock(ntp) is True and ntp.calls == 3
    ntp = _Ntp(fails=5)
    assert wifi.set_clock(ntp, attempts=3) is False and ntp.calls == 3  # logged, not raised
    try:
        import ntptime  # noqa: F401
    except ImportError:  # the host and the simulator: the clock is left as it is
        assert wifi.set_clock() is False
