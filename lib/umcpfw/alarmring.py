"""What is done when the alarms change, are listed or one is due, loaded for that and dropped
after (by umcpfw.alarmtools, alarmlist and alarmbell): the store read and saved (load(),
save()), an alarm as the tools show it (entry()), the board's time carried on ticks
(now()), the sleep until the next alarm (next_sleep()), the clock dropped with the last
alarm (drop()). The task is umcpfw.alarms' wait(), started by umcpfw.alarmtools (at boot
umcpfw.alarmstart); umcpfw.alarmbell rings what is due and returns the next sleep to it.
The store, alarms.json beside settings.json, is replaced atomically as devsvc.settings
saves: {"next": the next id, "alarms": [{"id", "label", "due": seconds on the board's
clock, "repeat": "daily" or null, "ask": bool}]}; the alarms are read from it for each
change and each ringing, none kept on the heap. What stays while there are alarms is the
clock, the CommonTools' `alarms`: a dict of "task" (umcpfw.alarms' wait()), "ms" and
"ticks" (the board's time in ms, carried on ticks from the first reading on, so that a
clock set again later moves no alarm) and "ringing" (umcpfw.alarmbell's due() rings: the
task sleeps again when it is done)."""

import json
import time

from devsvc.settings import write_atomically
from umcp.compat import const, forget_modules, get_logger, ticks_diff, ticks_ms

ALARMS_FILE = "alarms.json"
_KNOWN_YEAR = const(2025)  # a clock before this year was never set (an ESP32 starts in 2000)
_LOOK_S = const(30)  # the longest sleep while the clock is not known: its setting is seen
_SLEEP_S = const(3600)  # the longest sleep: well within what ticks can measure (days)


def known(seconds):
    """Whether `seconds` on the board's clock is a time the clock knew (set, not 2000)."""
    return time.localtime(seconds)[0] >= _KNOWN_YEAR


def entry(alarm, now):
    """An alarm as the tools show it: id, label, due (the board's local time, "YYYY-MM-DD
    HH:MM"; null while the board does not know the time), repeat, ask and in_seconds (from
    `now`)."""
    due = alarm["due"]
    return {"id": alarm["id"], "label": alarm["label"],
            "due": "%04d-%02d-%02d %02d:%02d" % time.localtime(due)[:5] if known(due) else None,
            "repeat": alarm["repeat"], "ask": alarm["ask"], "in_seconds": max(0, due - now)}


def clock_of(tools):
    """The alarms' clock (above) of the CommonTools `tools`: theirs while there are alarms,
    else a new one (theirs once umcpfw.alarmtools starts a task on it)."""
    return tools.alarms or {"task": None, "ms": None, "ticks": 0, "ringing": False}


def now(clock):
    """The board's time in seconds: its clock, carried on ticks from the first call on."""
    t = ticks_ms()
    if clock["ms"] is None:
        clock["ms"] = int(time.time()) * 1000
    else:
        clock["ms"] += ticks_diff(t, clock["ticks"])
    clock["ticks"] = t
    return clock["ms"] // 1000


def load(path=ALARMS_FILE):
    """The store at `path`: (the next id, the alarms); (1, []) where there is none, or none
    that can be read (said in the log: the next save replaces it)."""
    try:
        with open(path) as f:
            stored = json.loads(f.read())
        return stored["next"], list(stored["alarms"])
    except OSError:
        return 1, []
    except (ValueError, KeyError, TypeError) as e:
        get_logger("alarms").warning("%s unreadable (%s): no alarms", path, e)
        return 1, []


def save(next_id, alarms, path=ALARMS_FILE):
    """Keep `alarms` and the next id in flash, replaced atomically (the file goes with the
    last alarm)."""
    if alarms:
        write_atomically(path, {"next": next_id, "alarms": alarms})
        return
    import os

    try:
        os.remove(path)
    except OSError:
        pass


def next_sleep(clock, alarms):
    """The seconds to sleep on `clock` (clock_of()) until the next of `alarms` (as stored):
    _SLEEP_S at most, _LOOK_S while the clock is not known; None with no alarm."""
    if not alarms:
        return None
    current = now(clock)
    wait = min([alarm["due"] for alarm in alarms]) - current
    return max(0, min(wait, _SLEEP_S if known(current) else _LOOK_S))


def drop(tools, clock):
    """No alarm is left: the CommonTools `tools` let `clock` go, and umcpfw.alarms (its
    task's code) leaves the heap."""
    if tools.alarms is clock:
        tools.alarms = None
    forget_modules("umcpfw.alarms")
