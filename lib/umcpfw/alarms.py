"""Alarms and timers kept in flash: the task that sleeps until the next one, the only code
on the heap while an alarm waits. The alarms themselves are in flash, read when needed;
the board's time carried on ticks is the clock, the CommonTools' `alarms` (a dict:
umcpfw.alarmring's). Imported only while there is an alarm (by umcpfw.alarmtools and
umcpfw.alarmstart, which start the task; umcpfw.alarmring drops it with the last alarm). Everything else (the time, the
store, the next sleep: umcpfw.alarmring; what is due and the ringing: umcpfw.alarmbell)
is loaded when the sleep ends or the alarms change, and dropped after."""

import asyncio

from umcp.compat import await_then_forget, const

_SETTLE_S = const(60)


async def wait(app, seconds):
    """The alarms' task for the Application `app`: umcpfw.alarmbell's due() after `seconds`,
    then again after the seconds it returns, until it returns None (no alarm left). Below
    0: the first after a boot with alarms in flash, once the clock is what it will be (the
    link first up, or _SETTLE_S after the services started without it)."""
    if seconds < 0:
        for _ in range(_SETTLE_S):
            link = app.link
            if not app.xiaozhi or link is not None and link.connected.is_set():
                break
            await asyncio.sleep(1)
        seconds = 0
    while seconds is not None:
        await asyncio.sleep(seconds)
        seconds = await await_then_forget("umcpfw.alarmbell", "due", app)
