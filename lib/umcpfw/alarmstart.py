"""At boot, where alarms.json holds alarms (umcpfw.boot's load_alarms() loads this for
them): Start, one of the application's services, which starts the alarms' task
(umcpfw.alarms' wait(), its first sleep until the clock is what it will be) and then
leaves the services, this module the heap with it."""

import asyncio


class Start:
    """The service of the Application `app`: its tools' clock made now (as
    umcpfw.alarmring's clock_of() makes one, that module not loaded for it), the task
    started once the services run."""

    def __init__(self, app):
        self.app = app
        app.tools.alarms = {"task": None, "ms": None, "ticks": 0, "ringing": False}

    async def run(self):
        """Start the task (unless a call has scheduled one already), and leave."""
        app = self.app
        app.services.remove(self)
        clock = app.tools.alarms
        if clock is not None and clock["task"] is None:
            from umcpfw.alarms import wait  # stays while there are alarms

            clock["task"] = asyncio.create_task(wait(app, -1))

    async def stop(self):
        """As a service: nothing to close."""
