"""What is done when an alarm is due (umcpfw.alarms' clock loads this module for it and
drops it after): due() moves the alarms made before the clock was first set, takes each
due alarm off (a daily one to its next day), saves the store (save(), which the tools'
changes use too) and rings it: the board speaking first.

- On the board: a buzzer part beeps, the status screen shows the label for a minute.
- To MCP clients: a notifications/message (logger "alarms": the id, label, whether it is
  late, repeat) and resources/updated on device://alarms.
- On the xiaozhi link: {"type": "listen", "state": "detect", "text": "[device_call]" +
  label}, which xiaozhi-esp32-server says as it is (text to speech, no model), or the label
  alone where the alarm asks, which the server takes as the user's words: a turn for the
  model, which may call the board's tools back. A link still connecting (a board that
  found an alarm missed at boot) is waited for, up to _LINK_WAIT_S.

Each way is tried whatever the others did."""

import asyncio
import time

from devsvc.settings import write_atomically
from umcp.compat import const, get_logger

DEVICE_CALL = "[device_call]"  # the prefix the server says the rest of as it is
_BEEP = {"frequency": 2000, "duration_ms": 600}
_SHOWN_S = const(60)  # how long the status screen shows a label
_LINK_WAIT_S = const(120)
_LATE_S = const(60)  # an alarm rung more than this after its time is "late"
_DAY_S = const(86400)
_KNOWN_YEAR = const(2025)  # umcpfw.alarms' (not imported: it loads this module)

log = get_logger("alarms")


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


async def due(clock, now):
    """The alarms of `clock` (umcpfw.alarms.AlarmClock) due at `now`: each taken off or set
    for its next day, the store saved, then each rung."""
    real = int(time.time())
    if not _known(now) and _known(real):  # the clock was just set: what was made before moves
        for alarm in clock.alarms:
            if not _known(alarm["due"]):
                alarm["due"] += real - now
        clock.anchor()
        now = clock.now()
    rung = []
    for alarm in list(clock.alarms):
        if alarm["due"] <= now:
            rung.append((alarm, now - alarm["due"] > _LATE_S))
            if alarm["repeat"] == "daily":
                while alarm["due"] <= now:
                    alarm["due"] += _DAY_S
            else:
                clock.alarms.remove(alarm)
    try:
        save(clock)
    except OSError as e:
        log.warning("cannot save %s: %s", clock.path, e)
    for alarm, late in rung:
        await ring(clock.app, alarm, late)


def _known(seconds):
    return time.localtime(seconds)[0] >= _KNOWN_YEAR


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
    # What xiaozhi-esp32-server's listenMessageHandler reads: "type", "state", "text".
    if not app.xiaozhi:
        return  # MCP endpoints only: no server to speak to
    for _ in range(_LINK_WAIT_S * 2):
        link = app.link
        if link is not None and link.connected.is_set():
            if await link.send_message({"type": "listen", "state": "detect",
                                        "text": label if alarm["ask"] else DEVICE_CALL + label}):
                return
        await asyncio.sleep(0.5)
    log.warning("alarm %d: the link was not up to say it", alarm["id"])
