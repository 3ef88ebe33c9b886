# What every link that reconnects shares: the pause before the next attempt (exponential,
# with jitter, so that devices cut off together do not all come back in the same second)
# and the guard a reconnect loop needs on CPython 3.11. Runs on CPython and MicroPython.
import asyncio
import random


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
