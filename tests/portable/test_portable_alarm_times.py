# self.alarms.add's "at" ("HH:MM", the board's local time) on either side of midnight, from
# a board clock set to a known minute: today's when it is ahead, "has passed" when it is
# not, tomorrow's with repeat daily. The end-to-end tests (tests/firmware/test_alarms.py)
# run on the host's clock, whatever the hour; these pin the hours they cannot choose.
# Runs under pytest and inside MicroPython.
import asyncio
import os
import time

from umcp import InvalidParams
from umcp.compat import ticks_ms
from umcpfw import alarmtools

ALARMS_FILE = "alarms.json"  # umcpfw.alarmring's store, in the working directory


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


class _Server:
    updated = None

    def resource_updated(self, uri):
        self.updated = uri


class _Tools:
    """What alarmtools reads of the board's CommonTools: the alarms' clock (umcpfw.alarmring's)
    set to 2026-12-07 at `hour`:`minute`:30 local time, the server told of device://alarms."""

    def __init__(self, hour, minute):
        seconds = time.mktime((2026, 12, 7, hour, minute, 30, 0, 0, -1))
        self.alarms = {"task": None, "ms": seconds * 1000, "ticks": ticks_ms(), "ringing": False}
        self.app = None
        self.server = _Server()


async def _add(tools, at, repeat="none"):
    """The alarm add() makes of `at` (its entry), or the InvalidParams message; no alarm is
    left behind (its task cancelled, the store removed)."""
    _remove(ALARMS_FILE)
    try:
        return alarmtools.add(tools, {"label": "x", "in_seconds": 0, "at": at, "repeat": repeat, "ask": False})
    except InvalidParams as e:
        return str(e)
    finally:
        task = tools.alarms["task"] if tools.alarms else None
        if task is not None:
            task.cancel()
            tools.alarms["task"] = None
            await asyncio.sleep(0)
        _remove(ALARMS_FILE)


async def test_late_in_the_evening_a_time_after_midnight_is_tomorrow_s_only_when_daily():
    tools = _Tools(23, 0)
    refused = await _add(tools, "22:50")
    assert "22:50 has passed today (the board's time is 23:00)" in refused, refused
    assert "has passed" in await _add(tools, "00:05")
    ahead = await _add(tools, "23:30")
    assert (ahead["due"], ahead["in_seconds"], ahead["repeat"]) == ("2026-12-07 23:30", 29 * 60 + 30, None), ahead
    assert tools.server.updated == "device://alarms"
    daily = await _add(tools, "00:05", "daily")
    assert (daily["due"], daily["in_seconds"], daily["repeat"]) == ("2026-12-08 00:05", 3870, "daily"), daily
    daily = await _add(tools, "22:50", "daily")
    assert (daily["due"], daily["in_seconds"]) == ("2026-12-08 22:50", 86400 - 630), daily


async def test_just_after_midnight_a_late_evening_time_is_still_ahead_today():
    tools = _Tools(0, 5)
    late = await _add(tools, "23:55")
    assert (late["due"], late["in_seconds"]) == ("2026-12-07 23:55", 23 * 3600 + 50 * 60 - 30), late
    assert "00:00 has passed today (the board's time is 00:05)" in await _add(tools, "00:00")
    assert "has passed" in await _add(tools, "0:05")  # this very minute: not ahead
    soon = await _add(tools, "0:06")
    assert (soon["due"], soon["in_seconds"]) == ("2026-12-07 00:06", 30), soon
