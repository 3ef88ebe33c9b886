"""Alarms and timers kept in flash: the alarms and the task that sleeps until the next one,
all that stays on the heap while there is an alarm. Imported only then: at boot when
alarms.json holds one (umcpfw.boot reads it), or by the first self.alarms.add
(umcpfw.alarmtools); once the last alarm is gone it leaves the heap again. The rest (the
time, the store, the next sleep) is umcpfw.alarmring's, loaded when the sleep ends or the
alarms change; what is due and the ringing umcpfw.alarmbell's, loaded when the sleep ends.

The store, alarms.json beside settings.json, is replaced atomically as devsvc.settings
saves: {"next": the next id, "alarms": [{"id", "label", "due": seconds on the board's
clock, "repeat": "daily" or null, "ask": bool}]}. Time: the board's clock (the OTA
check's server_time or NTP), carried on ticks from the first schedule on, so that a clock
set again later moves no alarm. Alarms found at boot start once the link is first up (or
_SETTLE_S after the services start without it); one past due then rings once, "late"."""

import asyncio

from umcp.compat import await_then_forget, call_then_forget, const, forget_modules

ALARMS_FILE = "alarms.json"
_SETTLE_S = const(60)


class AlarmClock:
    """The alarms (dicts, as stored) of the Application `app`, kept in `path`, the next id
    `next_id`; `task` sleeps until the next one (sleep()), `ms` and `ticks` carry the time
    (umcpfw.alarmring's). tools.alarms holds it while there are alarms; at boot it is also
    one of the application's services (run(), stop())."""

    def __init__(self, app, alarms=None, next_id=1, path=ALARMS_FILE):
        self.app = app
        self.path = path
        self.alarms = alarms or []
        self.next_id = next_id
        self.task = None  # sleep()'s, while it sleeps or the alarms ring
        self.ringing = False
        self.ms = None  # the board's time in ms, carried on ticks
        self.ticks = 0

    async def run(self):
        """As a service: the first schedule once the clock is what it will be (above)."""
        app = self.app
        for _ in range(_SETTLE_S):
            link = app.link
            if not app.xiaozhi or link is not None and link.connected.is_set():
                break
            await asyncio.sleep(1)
        if self.task is None:
            call_then_forget("umcpfw.alarmring", "schedule", self)

    async def stop(self):
        """As a service: nothing to close (the application cancels the task)."""

    async def sleep(self, seconds):
        """The task (umcpfw.alarmring.schedule makes it): umcpfw.alarmbell's due() after
        `seconds`, its code (and umcpfw.alarmring's, which it uses) loaded only then."""
        await asyncio.sleep(seconds)
        self.ringing = True
        try:
            await await_then_forget("umcpfw.alarmbell", "due", self)
        finally:
            self.ringing = False
            forget_modules("umcpfw.alarmring")
