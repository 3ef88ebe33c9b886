"""Alarms and timers kept in flash: the clock that waits for them, all that stays on the
heap while there is an alarm. Imported only then: at boot when alarms.json holds one
(umcpfw.boot reads it), or by the first self.alarms.add (umcpfw.alarmtools, which checks
the arguments and shows the alarms); once the last alarm is gone the clock's task ends and
this module leaves the heap again, so a board without alarms keeps none of it. What is
done when one is due (the store saved, the alarm rung) is umcpfw.alarmring's, loaded for
that.

The store, alarms.json beside settings.json, replaced atomically as devsvc.settings saves
(a power cut leaves the old file or the new one): {"next": the next id, "alarms": [{"id",
"label", "due": seconds on the board's clock (time.time()), "repeat": "daily" or null,
"ask": bool}]}.

Time: the board's clock, as the OTA check's server_time (its local time) or NTP set it.
The clock runs on ticks from start() on, so that a clock set again later (NTP after a lost
network gives UTC where the OTA check gave local time) moves no alarm; an alarm made
before the clock was known at all (a year before 2025) moves with the clock once it is.
Alarms found in flash at boot start once the link is first up (the OTA check has set the
clock by then) or _SETTLE_S after the services start without it; one past due then rings
once, "late"."""

import asyncio
import time

from umcp.compat import await_then_forget, const, forget_modules, get_logger, ticks_diff, ticks_ms

ALARMS_FILE = "alarms.json"
KNOWN_YEAR = const(2025)  # a clock before this year was never set (an ESP32 starts in 2000)
_LOOK_S = const(30)  # the longest wait: a clock set meanwhile is seen within it
_SETTLE_S = const(60)

_log = get_logger("alarms")


def known(seconds):
    """Whether `seconds` on the board's clock is a time the clock knew (set, not 2000)."""
    return time.localtime(seconds)[0] >= KNOWN_YEAR


class AlarmClock:
    """The alarms (dicts, as stored) of the Application `app`, kept in `path`, the next id
    `next_id`; `wake` is set when they change. tools.alarms holds it while there are alarms;
    at boot it is also one of the application's services (run(), stop())."""

    def __init__(self, app, alarms=None, next_id=1, path=ALARMS_FILE):
        self.app = app
        self.path = path
        self.alarms = alarms or []
        self.next_id = next_id
        self.wake = asyncio.Event()
        self._task = None
        self._ms = None  # the clock in ms on ticks, from start() on
        self._ticks = 0

    def now(self):
        """The board's time in seconds: its clock, carried on ticks once started."""
        if self._ms is None:
            return int(time.time())
        t = ticks_ms()
        self._ms += ticks_diff(t, self._ticks)
        self._ticks = t
        return self._ms // 1000

    def anchor(self):
        """Carry the board's clock as it is now (start(); again once it is first set)."""
        self._ms = int(time.time()) * 1000
        self._ticks = ticks_ms()

    def start(self):
        """Ring the alarms from now on (a tool's call starts them at once)."""
        if self._task is None:
            self.anchor()
            self._task = asyncio.create_task(self._wait())

    async def run(self):
        """As a service: start() once the clock is what it will be (above)."""
        app = self.app
        for _ in range(_SETTLE_S):
            link = app.link
            if not app.xiaozhi or link is not None and link.connected.is_set():
                break
            await asyncio.sleep(1)
        self.start()

    async def stop(self):
        """As a service: nothing to close (the application cancels the task)."""

    async def _wait(self):
        """Until no alarm is left: umcpfw.alarmring's due() for each one due (and once the
        clock is first set); then this module leaves the heap."""
        try:
            while self.alarms:
                self.wake.clear()
                now = self.now()
                if min([alarm["due"] for alarm in self.alarms]) <= now or (
                        not known(now) and known(time.time())):
                    try:
                        await await_then_forget("umcpfw.alarmring", "due", self, now)
                    except Exception as e:  # (MemoryError too): tried again after a pause
                        _log.warning("alarms: %r", e)
                    if not self.alarms:
                        break
                    now = self.now()
                wait = min([alarm["due"] for alarm in self.alarms]) - now
                try:
                    await asyncio.wait_for(self.wake.wait(), max(1, min(wait, _LOOK_S)))
                except asyncio.TimeoutError:
                    pass
        finally:
            self._task = None
        app = self.app
        if not self.alarms and app.tools.alarms is self:
            app.tools.alarms = None
            if self in app.services:
                app.services.remove(self)
            forget_modules("umcpfw.alarms")
