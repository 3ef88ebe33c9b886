"""The self.alarms.* tools' calls (add, list, remove) and the device://alarms resource's
read, loaded for each (umcp.compat.OnDemand) and dropped after: the arguments checked
against what a schema cannot say, then the alarm clock (umcpfw.alarms) changed, which add
loads where the board had no alarm (list and remove never load it). `tools` is the
board's CommonTools; its `app` is the Application, its `alarms` the clock while there is
one."""

import time

from umcp import InvalidParams
from umcp.compat import call_then_forget

MAX_LABEL = 120
MAX_SECONDS = 604800  # a week
MAX_ALARMS = 16


def entry(alarm, now):
    """An alarm as the tools show it: id, label, due (the board's local time, "YYYY-MM-DD
    HH:MM"; null while the board does not know the time), repeat, ask and in_seconds (from
    `now`). Only where there is a clock (umcpfw.alarms loaded)."""
    from umcpfw.alarms import known

    due = alarm["due"]
    return {"id": alarm["id"], "label": alarm["label"],
            "due": "%04d-%02d-%02d %02d:%02d" % time.localtime(due)[:5] if known(due) else None,
            "repeat": alarm["repeat"], "ask": alarm["ask"], "in_seconds": max(0, due - now)}


def clock(tools):
    """The board's alarm clock, made and started where there is none yet."""
    alarms = tools.alarms
    if alarms is None:
        from umcpfw.alarms import AlarmClock  # stays while there are alarms

        tools.alarms = alarms = AlarmClock(tools.app)
    alarms.start()
    return alarms


def add(tools, args):
    """self.alarms.add: a new alarm in args["in_seconds"] seconds or at args["at"] ("HH:MM",
    the board's local time) -> the alarm (entry()); InvalidParams (-32602)
    for arguments that cannot be an alarm, ValueError (an isError result) for "at" while
    the board does not know the time."""
    label = args["label"]
    if not 1 <= len(label) <= MAX_LABEL:
        raise InvalidParams("label must be 1 to %d characters, not %d" % (MAX_LABEL, len(label)))
    seconds, at, repeat = args["in_seconds"], args["at"], args["repeat"]
    if at and seconds:
        raise InvalidParams("give in_seconds or at, not both")
    if not at and not 1 <= seconds <= MAX_SECONDS:
        raise InvalidParams('in_seconds must be 1 to %d seconds from now (or give at, "HH:MM"), '
                            "not %d" % (MAX_SECONDS, seconds))
    hour, minute = _hour_minute(at) if at else (0, 0)  # before the clock: a bad "at" is the caller's
    if tools.alarms is not None and len(tools.alarms.alarms) >= MAX_ALARMS:
        raise InvalidParams("the board keeps at most %d alarms: remove one first" % MAX_ALARMS)
    alarms = clock(tools)
    from umcpfw.alarms import known  # (loaded by clock())

    now = alarms.now()
    if at:
        if not known(now):
            raise ValueError("the board does not know the time yet (no OTA check or NTP answered): "
                             "use in_seconds")
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
    changed(tools, alarms)
    return entry(alarm, now)


def changed(tools, alarms):
    """The alarms changed: saved (umcpfw.alarmring's save()), the clock's task told, the
    resource's subscribers too."""
    call_then_forget("umcpfw.alarmring", "save", alarms)
    alarms.wake.set()
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
    now = alarms.now()
    entries = [entry(alarm, now) for alarm in alarms.alarms]
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
            changed(tools, alarms)
            return {"removed": wanted}
    raise InvalidParams("no alarm %d (self.alarms.list shows them)" % wanted)


def read(tools):
    """device://alarms: self.alarms.list's answer."""
    return listed(tools)
