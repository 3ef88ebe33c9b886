"""Alarms and timers kept in flash, and what happens when one is due: the board speaking
first. Imported only where there is an alarm: at boot when alarms.json holds one
(umcpfw.boot), or by the first self.alarms.* call (umcpfw.alarmtools, which checks the
arguments); once the last alarm is gone the clock's task ends and this module leaves the
heap again, so a board without alarms keeps none of it.

The store, alarms.json beside settings.json, replaced atomically as devsvc.settings saves
(a power cut leaves the old file or the new one): {"next": the next id, "alarms": [{"id",
"label", "due": seconds on the board's clock (time.time()), "repeat": "daily" or null,
"ask": bool}]}.

Time: the board's clock, as the OTA check's server_time (its local time) or NTP set it.
The clock runs on ticks from start() on, so that a clock set again later (NTP after a lost
network gives UTC where the OTA check gave local time) moves no alarm; an alarm made
before the clock was known at all (the year before 2025) moves with the clock once it is.

When an alarm is due (fire()): the xiaozhi link sends {"type": "listen", "state":
"detect", "text": "[device_call]" + label} (the server says the label as it is), or the
label alone where the alarm asks (a turn for the model); MCP clients get a
notifications/message and resources/updated on device://alarms; a buzzer part beeps and
the status screen shows the label. An alarm found past due at boot fires once, "late"."""

import asyncio
import json
import os
import time

from devsvc.settings import write_atomically
from umcp.compat import const, forget_modules, get_logger, ticks_diff, ticks_ms

ALARMS_FILE = "alarms.json"
ALARMS_URI = "device://alarms"
DEVICE_CALL = "[device_call]"  # the text the server says as it is (xiaozhi-esp32-server)
LATE_S = const(60)  # an alarm fired more than this after its time is "late"
DAY_S = const(86400)
KNOWN_YEAR = const(2025)  # a clock before this year was never set (an ESP32 starts in 2000)
_LOOK_S = const(30)  # the longest wait: a clock set meanwhile is seen within it
_BEEP = {"frequency": 2000, "duration_ms": 600}
_SHOWN_S = const(60)  # how long the status screen shows a label
_LINK_WAIT_S = const(120)  # how long a due alarm waits for the link to say it

log = get_logger("alarms")


def known(seconds):
    """Whether `seconds` on the board's clock is a time the clock knew (set, not 2000)."""
    return time.localtime(seconds)[0] >= KNOWN_YEAR


def local(seconds):
    """"YYYY-MM-DD HH:MM" of `seconds` on the board's clock (its local time)."""
    t = time.localtime(seconds)
    return "%04d-%02d-%02d %02d:%02d" % (t[0], t[1], t[2], t[3], t[4])


class AlarmClock:
    """The alarms of the Application `app` (its link, server, board and status view, by
    their public names), kept in `path`. tools.alarms holds it while it has alarms."""

    def __init__(self, app, path=ALARMS_FILE):
        self.app = app
        self.path = path
        self.alarms = []
        self.next_id = 1
        self._task = None
        self._wake = asyncio.Event()
        self._ms = None  # the clock in ms on ticks, from start() on
        self._ticks = 0
        try:
            with open(path) as f:
                stored = json.loads(f.read())
            self.alarms = stored["alarms"]
            self.next_id = stored["next"]
        except OSError:
            pass  # none yet
        except (ValueError, KeyError, TypeError) as e:
            log.warning("%s unreadable (%s): no alarms", path, e)

    def now(self):
        """The board's time in seconds: its clock, carried on ticks once started."""
        if self._ms is None:
            return int(time.time())
        t = ticks_ms()
        self._ms += ticks_diff(t, self._ticks)
        self._ticks = t
        return self._ms // 1000

    def start(self):
        """Run the alarms from now on (once the clock is as it will be; a tool call that
        comes sooner starts them itself)."""
        if self._task is None:
            self._ms = int(time.time()) * 1000
            self._ticks = ticks_ms()
            self._task = asyncio.create_task(self.run())

    def save(self):
        """Keep the alarms in flash (the file goes with the last one)."""
        if self.alarms:
            write_atomically(self.path, {"next": self.next_id, "alarms": self.alarms})
        else:
            try:
                os.remove(self.path)
            except OSError:
                pass

    def changed(self):
        """The alarms changed (a tool): saved, the clock's task told, subscribers too."""
        self.save()
        self._wake.set()
        self.app.server.resource_updated(ALARMS_URI)

    def entry(self, alarm, now=None):
        """An alarm as the tools show it: id, label, due (local time, null while the board
        does not know the time), repeat, ask and in_seconds (from now)."""
        if now is None:
            now = self.now()
        due = alarm["due"]
        return {"id": alarm["id"], "label": alarm["label"], "due": local(due) if known(due) else None,
                "repeat": alarm["repeat"], "ask": alarm["ask"], "in_seconds": max(0, due - now)}

    async def run(self):
        """Fire each alarm when due, until none is left; then the module leaves the heap."""
        try:
            while self.alarms:
                self._wake.clear()
                now = self._settle(self.now())
                for alarm in list(self.alarms):
                    if alarm["due"] <= now:
                        await self.fire(alarm, now - alarm["due"] > LATE_S, now)
                if not self.alarms:
                    break
                wait = min([alarm["due"] for alarm in self.alarms]) - now
                try:
                    await asyncio.wait_for(self._wake.wait(), max(1, min(wait, _LOOK_S)))
                except asyncio.TimeoutError:
                    pass
        finally:
            self._task = None
        if not self.alarms and self.app.tools.alarms is self:
            self.app.tools.alarms = None
            forget_modules("umcpfw.alarms")

    def _settle(self, now):
        """`now`, after moving the alarms made before the clock was known by as much as the
        clock moved when it was set."""
        real = time.time()
        if not known(now) and known(real):
            jump = int(real - now)
            for alarm in self.alarms:
                if not known(alarm["due"]):
                    alarm["due"] += jump
            self._ms = int(real) * 1000
            self._ticks = ticks_ms()
            self.save()
            return int(real)
        return now

    async def fire(self, alarm, late, now):
        """The alarm is due: said on every way the board has, then removed (or, daily, set
        for its next day) and saved. Nothing here may stop the clock."""
        label = alarm["label"]
        log.warning("alarm %d%s: %s", alarm["id"], " (late)" if late else "", label)
        if alarm["repeat"] == "daily":
            while alarm["due"] <= now:
                alarm["due"] += DAY_S
        else:
            self.alarms.remove(alarm)
        try:
            self.save()
        except OSError as e:
            log.warning("cannot save %s: %s", self.path, e)
        app = self.app
        for say in (self._board, self._clients, self._link):
            try:
                await say(app, alarm, label, late)
            except Exception as e:  # one way failing must not keep the others silent
                log.warning("alarm %d: %s", alarm["id"], e)

    async def _link(self, app, alarm, label, late):
        # What xiaozhi-esp32-server's listenMessageHandler reads: "type", "state", "text".
        # A link still connecting (the boot of a board that finds an alarm missed) is
        # waited for, a while.
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

    async def _clients(self, app, alarm, label, late):
        await app.server.log("notice", {"alarm": alarm["id"], "label": label, "late": late,
                                        "repeat": alarm["repeat"]}, "alarms")
        app.server.resource_updated(ALARMS_URI)

    async def _board(self, app, alarm, label, late):
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
