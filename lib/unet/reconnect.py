"""What every link that reconnects shares (the xiaozhi links, the MCP endpoint link): the
loop that connects, serves and connects again (Reconnecting), the pause before the next
attempt (exponential, with jitter, so that devices cut off together do not all come back
in the same second) and the guard a reconnect loop needs on CPython 3.11. One copy of the
loop's code on the heap however many kinds of link run. Runs on CPython and MicroPython."""

import asyncio
import gc
import random

from umcp.compat import ticks_diff, ticks_ms


class Backoff:
    """Exponential backoff with jitter: each delay is drawn from [base/2, base], and the
    base doubles from `minimum` up to `maximum` (seconds) until reset()."""

    def __init__(self, minimum, maximum):
        self.minimum = minimum
        self.maximum = maximum
        self._base = minimum

    def next(self):
        base = self._base
        self._base = min(base * 2, self.maximum)
        return base * (0.5 + random.getrandbits(16) / 131072)

    def reset(self):
        self._base = self.minimum

    def slow_down(self):
        """The next delays at the maximum at once (a refusal: retrying soon cannot help)."""
        self._base = self.maximum


def raise_if_cancelled():
    """Raise CancelledError if the running task is being cancelled.

    CPython 3.11's wait_for loses a cancellation that arrives just as the awaited
    operation completes (fixed in 3.12): a reconnect loop calls this after such a wait,
    or it would carry on forever. MicroPython's tasks have no cancelling(): a no-op."""
    task = asyncio.current_task()
    if getattr(task, "cancelling", None) and task.cancelling():
        raise asyncio.CancelledError


class Reconnecting:
    """A link that connects, serves until the connection ends, then connects again after a
    Backoff pause: run() until stop() or cancellation, never raising otherwise.

    The subclass supplies _session() (one connection, served until it ends), _hang_up()
    (drops what is left of it), _close() (stop()'s goodbye), _lost(error) (one log line
    saying why a connection ended) and `mcp`, its Session of the server; it calls _up()
    once a connection is up and _drop() for an MCP message that finds the link down.
    `log` is its logger and `who` what its lines start with. Has: connected (asyncio.Event,
    set while up), attempts (so far), last_delay (the pause before the latest), dropped
    (MCP messages sent while down, since the last connection came up), starved
    (connection attempts in a row that ran out of heap before the link came up); and
    on_starved(who, starved), if set, is told each such attempt (the application says
    what a streak means: the heap is too small for the configuration)."""

    log = None
    who = ""
    on_starved = None

    def __init__(self, backoff_min, backoff_max, stable_after):
        self.backoff = Backoff(backoff_min, backoff_max)
        # A connection must last this long (seconds) before the backoff starts over: a
        # server that takes the device and drops it at once is not hammered every second.
        self.stable_after = stable_after
        self._up_since = None  # ticks_ms when the current connection came up
        self.connected = asyncio.Event()
        self.attempts = 0
        self.last_delay = 0
        self.dropped = 0
        self.starved = 0
        self.stopping = False
        self._stopped = asyncio.Event()

    async def run(self):
        """Connect, serve, reconnect: forever, until stop() or cancellation. A MemoryError
        anywhere on the way (connecting, hanging up, the pause) is collected and the loop
        goes round again: the link always comes back. Once it returns, the link's MCP
        session leaves the server: nothing is sent to it any more (the application builds
        a new link for new settings)."""
        try:
            while not self.stopping:
                try:
                    await self._attempt()
                except MemoryError:
                    gc.collect()
                    self.log.warning("%sout of memory between connections: trying again", self.who)
                    await self._pause(self.backoff.minimum)
        finally:
            self.mcp.close()

    async def _attempt(self):
        """One connection attempt, the connection it brings, and the pause after it."""
        raise_if_cancelled()
        self.attempts += 1
        try:
            await self._session()
        except Exception as e:  # whatever ended the connection, the link carries on
            if not self.stopping:
                self._lost(e)
                if isinstance(e, MemoryError) and self._up_since is None:
                    self.starved += 1
                    if self.on_starved is not None:
                        self.on_starved(self.who, self.starved)
        finally:
            await self._hang_up()
            self._cancel_owed()
        if self._up_since is not None:
            if ticks_diff(ticks_ms(), self._up_since) >= self.stable_after * 1000:
                self.backoff.reset()
            self._up_since = None
        if self.stopping:
            return
        self.last_delay = self.backoff.next()
        self.log.info("%sreconnecting in %d ms", self.who, int(self.last_delay * 1000))
        await self._pause(self.last_delay)

    async def stop(self):
        """End the connection the way the link says goodbye, and make run() return."""
        self.stopping = True
        self._stopped.set()
        await self._close()

    def _up(self):
        self.starved = 0
        self._up_since = ticks_ms()
        self.connected.set()
        if self.dropped:
            self.log.warning("%s%d MCP message(s) were dropped while the link was down",
                             self.who, self.dropped)
            self.dropped = 0

    def _cancel_owed(self):
        """Responses owed on a connection that ended can reach no one: the next one's
        client never asked for them. The calls are cancelled (as a client's cancellation
        would) and counted in one line, rather than each reply dropped as it comes."""
        owed = self.mcp.cancel_calls()
        if owed:
            self.log.warning("%ssession ended: cancelled %d tool call(s) it was owed a reply for",
                             self.who, owed)

    def _drop(self):
        """Count an MCP message (a notification, say a background task's log) that finds
        the link down: logged once when dropping starts, the total when it is up again."""
        self.dropped += 1
        if self.dropped == 1:
            self.log.warning("%slink down: MCP messages are dropped until the next session", self.who)

    async def _pause(self, seconds):
        """Sleep, cut short by stop()."""
        try:
            await asyncio.wait_for(self._stopped.wait(), seconds)
        except asyncio.TimeoutError:
            pass
