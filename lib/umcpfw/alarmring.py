"""What is done when the alarms change or one is due, loaded for that and dropped after (by
umcpfw.alarmtools, umcpfw.alarms' task): the board's time carried on ticks (now()), the
store saved (save()), the task that sleeps until the next alarm made (schedule(), which
lets umcpfw.alarms go with the last alarm). What is due rung is umcpfw.alarmbell's,
loaded with this only when the sleep ends. `clock` is umcpfw.alarms' AlarmClock."""

import asyncio
import time

from devsvc.settings import write_atomically
from umcp.compat import const, forget_modules, ticks_diff, ticks_ms

KNOWN_YEAR = const(2025)  # a clock before this year was never set (an ESP32 starts in 2000)
_LOOK_S = const(30)  # the longest sleep while the clock is not known: its setting is seen
_SLEEP_S = const(3600)  # the longest sleep: well within what ticks can measure (days)


def known(seconds):
    """Whether `seconds` on the board's clock is a time the clock knew (set, not 2000)."""
    return time.localtime(seconds)[0] >= KNOWN_YEAR


def now(clock):
    """The board's time in seconds: its clock, carried on ticks from the first call on."""
    t = ticks_ms()
    if clock.ms is None:
        clock.ms = int(time.time()) * 1000
    else:
        clock.ms += ticks_diff(t, clock.ticks)
    clock.ticks = t
    return clock.ms // 1000


def save(clock):
    """Keep the clock's alarms in flash, replaced atomically (the file goes with the last)."""
    if clock.alarms:
        write_atomically(clock.path, {"next": clock.next_id, "alarms": clock.alarms})
        return
    import os

    try:
        os.remove(clock.path)
    except OSError:
        pass


def schedule(clock):
    """The task that sleeps until the next alarm, in place of one sleeping (none while the
    alarms ring: umcpfw.alarmbell's due() schedules when done); with no alarm left, umcpfw.alarms leaves the
    heap (the Application's tools and services let the clock go)."""
    if clock.ringing:
        return
    if clock.task is not None:
        clock.task.cancel()
        clock.task = None
    if not clock.alarms:
        app = clock.app
        if app.tools.alarms is clock:
            app.tools.alarms = None
        if clock in app.services:
            app.services.remove(clock)
        forget_modules("umcpfw.alarms")
        return
    current = now(clock)
    wait = min([alarm["due"] for alarm in clock.alarms]) - current
    clock.task = asyncio.create_task(clock.sleep(max(0, min(wait, _SLEEP_S if known(current) else _LOOK_S))))
