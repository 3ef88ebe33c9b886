"""An alarm due: each due alarm taken off the store (a daily one to its next day), the
store saved, each rung (ring()): the board speaking first. Loaded with umcpfw.alarmring
by umcpfw.alarms' task when its sleep ends, and dropped after: a board whose alarms are
still ahead keeps none of this. A buzzer part beeps and the status screen shows the label
for a minute; MCP clients get a notifications/message (logger "alarms") and
resources/updated on device://alarms; the xiaozhi link sends {"type": "listen", "state":
"detect", "text": "[device_call]" + label} (said as it is), or the label alone where the
alarm asks (a turn for the model): umcpfw.speak, which waits for a link still connecting.
Each way is tried whatever the others did (docs/speaking.md)."""

import asyncio
import time

from umcp.compat import await_then_forget, const, forget_modules, get_logger
from umcpfw.alarmring import drop, known, load, next_sleep, now, save

_BEEP = {"frequency": 2000, "duration_ms": 600}
_SHOWN_S = const(60)  # how long the status screen shows a label
_LATE_S = const(60)  # an alarm rung more than this after its time is "late"
_DAY_S = const(86400)

log = get_logger("alarms")


async def due(app):
    """The alarms of the Application `app` due now (its tools' clock: umcpfw.alarmring's):
    each taken off or set for its next day, the store saved, each rung. Returns the next
    sleep, for the alarms stored then (a call may have changed them meanwhile), or None
    with none left (the clock dropped)."""
    tools = app.tools
    clock = tools.alarms
    try:
        clock["ringing"] = True
        try:
            await _ring_due(app, clock)
        finally:
            clock["ringing"] = False
        seconds = next_sleep(clock, load()[1])
        if seconds is None:
            drop(tools, clock)
        return seconds
    finally:
        forget_modules("umcpfw.alarmring")


async def _ring_due(app, clock):
    next_id, alarms = load()
    current = now(clock)
    real = int(time.time())
    if not known(current) and known(real):  # the clock was just set: what was made before moves
        for alarm in alarms:
            if not known(alarm["due"]):
                alarm["due"] += real - current
        clock["ms"] = None
        current = now(clock)
    rung = []
    for alarm in list(alarms):
        if alarm["due"] <= current:
            rung.append((alarm, current - alarm["due"] > _LATE_S))
            if alarm["repeat"] == "daily":
                while alarm["due"] <= current:
                    alarm["due"] += _DAY_S
            else:
                alarms.remove(alarm)
    try:
        save(next_id, alarms)
    except OSError as e:
        log.warning("cannot save the alarms: %s", e)
    alarms = None
    for alarm, late in rung:
        await ring(app, alarm, late)


async def ring(app, alarm, late):
    """Say the alarm (a stored alarm's dict) on every way the Application `app` has."""
    label = alarm["label"]
    log.warning("alarm %d%s: %s", alarm["id"], " (late)" if late else "", label)
    for say in (_board, _clients, _link):
        try:
            await say(app, alarm, label, late)
        except Exception as e:  # one way failing must not keep the others silent
            log.warning("alarm %d: %r", alarm["id"], e)


async def _board(app, alarm, label, late):
    for part in app.board.parts:
        if part.kind == "buzzer":
            part.beep(_BEEP)
            break
    view = app.status_view
    if view is not None:
        view.note = label
        view.changed()
        asyncio.create_task(_unshow(view, label))


async def _unshow(view, label):
    await asyncio.sleep(_SHOWN_S)
    if view.note == label:
        view.note = None
        view.changed()


async def _clients(app, alarm, label, late):
    await app.server.log("notice", {"alarm": alarm["id"], "label": label, "late": late,
                                    "repeat": alarm["repeat"]}, "alarms")
    app.server.resource_updated("device://alarms")


async def _link(app, alarm, label, late):
    await await_then_forget("umcpfw.speak", "to_link", app, label, alarm["ask"], "alarm %d" % alarm["id"])
