"""The self.alarms.add and self.alarms.remove calls, loaded for each (umcp.compat.OnDemand)
and dropped after: the arguments checked against what a schema cannot say, then the
alarms (in flash) changed through umcpfw.alarmring, loaded for the call too (remove's
where there are alarms only), and the task that sleeps until the next (umcpfw.alarms'
wait()) started again. The list and device://alarms are umcpfw.alarmlist's.
`tools` is the board's CommonTools; its `app` is the Application, its `alarms` the
alarms' clock while there are some (umcpfw.alarmring's)."""

import asyncio
import time

from umcp import InvalidParams
from umcp.compat import const, forget_modules

_MAX_LABEL = const(120)
_MAX_SECONDS = const(604800)  # a week
_MAX_ALARMS = const(16)


def _ring():
    """umcpfw.alarmring, for this call (forgotten by the call's end)."""
    from umcpfw import alarmring

    return alarmring


def add(tools, args):
    """self.alarms.add: a new alarm in args["in_seconds"] seconds or at args["at"] ("HH:MM",
    the board's local time) -> the alarm (umcpfw.alarmring's entry()); InvalidParams (-32602) for arguments
    that cannot be an alarm, ValueError (an isError result) for "at" while the board does
    not know the time."""
    label = args["label"]
    if not 1 <= len(label) <= _MAX_LABEL:
        raise InvalidParams("label must be 1 to %d characters, not %d" % (_MAX_LABEL, len(label)))
    seconds, at, repeat = args["in_seconds"], args["at"], args["repeat"]
    if at and seconds:
        raise InvalidParams("give in_seconds or at, not both")
    if not at and not 1 <= seconds <= _MAX_SECONDS:
        raise InvalidParams('in_seconds must be 1 to %d seconds from now (or give at, "HH:MM"), '
                            "not %d" % (_MAX_SECONDS, seconds))
    hour, minute = _hour_minute(at) if at else (0, 0)
    ring = _ring()
    try:
        next_id, alarms = ring.load()
        if len(alarms) >= _MAX_ALARMS:
            raise InvalidParams("the board keeps at most %d alarms: remove one first" % _MAX_ALARMS)
        clock = ring.clock_of(tools)
        now = ring.now(clock)
        if at:
            if not ring.known(now):
                raise ValueError("the board does not know the time yet (no OTA check or NTP "
                                 "answered): use in_seconds")
            t = time.localtime(now)
            due = now - (t[3] * 3600 + t[4] * 60 + t[5]) + hour * 3600 + minute * 60
            if due <= now:
                if repeat != "daily":
                    raise InvalidParams("%s has passed today (the board's time is %02d:%02d): give "
                                        "in_seconds for a later day, or repeat daily" % (at, t[3], t[4]))
                due += 86400
        else:
            due = now + seconds
        alarm = {"id": next_id, "label": label, "due": due,
                 "repeat": "daily" if repeat == "daily" else None, "ask": args["ask"]}
        alarms.append(alarm)
        _changed(tools, ring, next_id + 1, alarms, clock)
        return ring.entry(alarm, now)
    finally:
        forget_modules("umcpfw.alarmring")


def _changed(tools, ring, next_id, alarms, clock):
    """The alarms changed: saved, the task that sleeps until the next one made again (none
    while they ring: it sleeps again when done), the resource's subscribers told."""
    ring.save(next_id, alarms)
    if not clock["ringing"]:
        task = clock["task"]
        clock["task"] = None
        if task is not None:
            task.cancel()
        seconds = ring.next_sleep(clock, alarms)
        if seconds is None:
            ring.drop(tools, clock)
        else:
            from umcpfw.alarms import wait  # stays while there are alarms

            tools.alarms = clock
            # Not through umcp.compat.await_then_drop: its frame at the first alarm's add is
            # what board (h) of docs/bench/stock.md lacks at 96K (umcpfw.alarms is small).
            clock["task"] = asyncio.create_task(wait(tools.app, seconds))
    tools.server.resource_updated("device://alarms")


def _hour_minute(at):
    """(hour, minute) of "HH:MM" (or "H:MM"); InvalidParams for anything else."""
    hour, _, minute = at.partition(":")
    if (1 <= len(hour) <= 2 and len(minute) == 2 and hour.isdigit() and minute.isdigit()
            and int(hour) < 24 and int(minute) < 60):
        return int(hour), int(minute)
    raise InvalidParams('at must be "HH:MM" (00:00 to 23:59), not "%s"' % at[:20])


def remove(tools, args):
    """self.alarms.remove: the alarm of args["id"] gone -> {"removed": id}; InvalidParams
    when there is none."""
    wanted = args["id"]
    clock = tools.alarms
    if clock is not None:
        ring = _ring()
        try:
            next_id, alarms = ring.load()
            for alarm in alarms:
                if alarm["id"] == wanted:
                    alarms.remove(alarm)
                    _changed(tools, ring, next_id, alarms, clock)
                    return {"removed": wanted}
        finally:
            forget_modules("umcpfw.alarmring")
    raise InvalidParams("no alarm %d (self.alarms.list shows them)" % wanted)
