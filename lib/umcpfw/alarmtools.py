"""The self.alarms.* tools' calls (add, list, remove) and the device://alarms resource's
read, loaded for each (umcp.compat.OnDemand) and dropped after: the arguments checked
against what a schema cannot say, then the alarms (umcpfw.alarms, which add loads where
the board had none; list and remove never load it) changed through umcpfw.alarmring,
loaded for the call too. `tools` is the board's CommonTools; its `app` is the
Application, its `alarms` the AlarmClock while there is one."""

import time

from umcp import InvalidParams
from umcp.compat import forget_modules

MAX_LABEL = 120
MAX_SECONDS = 604800  # a week
MAX_ALARMS = 16


def entry(alarm, now, known):
    """An alarm as the tools show it: id, label, due (the board's local time, "YYYY-MM-DD
    HH:MM"; null while the board does not know the time), repeat, ask and in_seconds (from
    `now`). `known`: umcpfw.alarmring's."""
    due = alarm["due"]
    return {"id": alarm["id"], "label": alarm["label"],
            "due": "%04d-%02d-%02d %02d:%02d" % time.localtime(due)[:5] if known(due) else None,
            "repeat": alarm["repeat"], "ask": alarm["ask"], "in_seconds": max(0, due - now)}


def _ring():
    """umcpfw.alarmring, for this call (forgotten by _done())."""
    from umcpfw import alarmring

    return alarmring


def _done(tools):
    """After a call: umcpfw.alarmring forgotten, and umcpfw.alarms where no alarm is left
    (an add refused)."""
    forget_modules("umcpfw.alarmring")
    if tools.alarms is None:
        forget_modules("umcpfw.alarms")


def add(tools, args):
    """self.alarms.add: a new alarm in args["in_seconds"] seconds or at args["at"] ("HH:MM",
    the board's local time) -> the alarm (entry()); InvalidParams (-32602) for arguments
    that cannot be an alarm, ValueError (an isError result) for "at" while the board does
    not know the time."""
    label = args["label"]
    if not 1 <= len(label) <= MAX_LABEL:
        raise InvalidParams("label must be 1 to %d characters, not %d" % (MAX_LABEL, len(label)))
    seconds, at, repeat = args["in_seconds"], args["at"], args["repeat"]
    if at and seconds:
        raise InvalidParams("give in_seconds or at, not both")
    if not at and not 1 <= seconds <= MAX_SECONDS:
        raise InvalidParams('in_seconds must be 1 to %d seconds from now (or give at, "HH:MM"), '
                            "not %d" % (MAX_SECONDS, seconds))
    hour, minute = _hour_minute(at) if at else (0, 0)
    alarms = tools.alarms
    if alarms is not None and len(alarms.alarms) >= MAX_ALARMS:
        raise InvalidParams("the board keeps at most %d alarms: remove one first" % MAX_ALARMS)
    ring = _ring()
    try:
        if alarms is None:
            from umcpfw.alarms import AlarmClock  # stays while there are alarms

            alarms = AlarmClock(tools.app)
        now = ring.now(alarms)
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
        alarm = {"id": alarms.next_id, "label": label, "due": due,
                 "repeat": "daily" if repeat == "daily" else None, "ask": args["ask"]}
        alarms.next_id += 1
        alarms.alarms.append(alarm)
        tools.alarms = alarms
        _changed(tools, alarms, ring)
        return entry(alarm, now, ring.known)
    finally:
        _done(tools)


def _changed(tools, alarms, ring):
    """The alarms changed: saved, the sleep until the next one made again, the resource's
    subscribers told."""
    ring.save(alarms)
    ring.schedule(alarms)
    tools.server.resource_updated("device://alarms")


def _hour_minute(at):
    """(hour, minute) of "HH:MM" (or "H:MM"); InvalidParams for anything else."""
    hour, _, minute = at.partition(":")
    if (1 <= len(hour) <= 2 and len(minute) == 2 and hour.isdigit() and minute.isdigit()
            and int(hour) < 24 and int(minute) < 60):
        return int(hour), int(minute)
    raise InvalidParams('at must be "HH:MM" (00:00 to 23:59), not "%s"' % at[:20])


def listed(tools, args=None):
    """self.alarms.list -> {"alarms": [each alarm's entry, soonest first]}."""
    alarms = tools.alarms
    if alarms is None:
        return {"alarms": []}
    ring = _ring()
    try:
        now = ring.now(alarms)
        entries = [entry(alarm, now, ring.known) for alarm in alarms.alarms]
    finally:
        _done(tools)
    entries.sort(key=lambda shown: (shown["in_seconds"], shown["id"]))  # (MicroPython: not stable)
    return {"alarms": entries}


def remove(tools, args):
    """self.alarms.remove: the alarm of args["id"] gone -> {"removed": id}; InvalidParams
    when there is none."""
    wanted = args["id"]
    alarms = tools.alarms
    for alarm in alarms.alarms if alarms is not None else ():
        if alarm["id"] == wanted:
            alarms.alarms.remove(alarm)
            try:
                _changed(tools, alarms, _ring())
            finally:
                _done(tools)
            return {"removed": wanted}
    raise InvalidParams("no alarm %d (self.alarms.list shows them)" % wanted)


def read(tools):
    """device://alarms: self.alarms.list's answer."""
    return listed(tools)
