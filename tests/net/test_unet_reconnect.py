"""lib/unet/reconnect.py: the reconnect pause every link shares (the xiaozhi links and the
MCP endpoint link)."""

import asyncio

from unet.reconnect import Backoff, Reconnecting, raise_if_cancelled


def test_backoff_draws_within_the_doubling_bounds():
    backoff = Backoff(1, 8)
    bases = [1, 2, 4, 8, 8, 8]
    for base in bases:
        assert base / 2 <= backoff.next() <= base
    backoff.reset()
    assert backoff.next() <= 1


def test_slow_down_jumps_to_the_maximum_until_reset():
    backoff = Backoff(1, 8)
    backoff.next()
    backoff.slow_down()
    assert [4 <= backoff.next() <= 8 for _ in range(3)] == [True] * 3
    backoff.reset()
    assert backoff.next() <= 1


def test_raise_if_cancelled_sees_a_cancellation_in_progress():
    seen = []

    async def victim(started):
        started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            # Swallowed, as CPython 3.11's wait_for can lose it: the guard still sees it.
            pass
        try:
            raise_if_cancelled()
            seen.append("carried on")
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def main():
        started = asyncio.Event()
        task = asyncio.create_task(victim(started))
        await started.wait()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        raise_if_cancelled()  # nothing cancels this task: no exception

    asyncio.run(main())
    assert seen == ["cancelled"]



class _Log:
    def __init__(self):
        self.lines = []

    def warning(self, message, *args):
        self.lines.append(message % args)

    info = warning


class _Mcp:
    def cancel_calls(self):
        return 0

    def close(self):
        pass


class _ShortOfHeap(Reconnecting):
    """A link whose connections run out of heap, but for those `script` says come up
    ("up", then lost); it stops after the script."""

    who = "test: "

    def __init__(self, script):
        super().__init__(0.001, 0.001, 60)
        self.log = _Log()
        self.mcp = _Mcp()
        self.script = list(script)
        self.told = []  # what on_starved heard
        self.on_starved = lambda who, count: self.told.append((who, count))

    async def _session(self):
        step = self.script.pop(0)
        if not self.script:
            self.stopping = True
        if step == "up":
            self._up()
            raise OSError("the server went away")  # up, then lost: not a starved attempt
        raise MemoryError("memory allocation failed, allocating 306 bytes")

    async def _hang_up(self):
        pass

    async def _close(self):
        pass

    def _lost(self, error):
        self.log.warning("%slink lost: %r", self.who, error)


def test_each_attempt_in_a_row_that_runs_out_of_heap_is_told_until_the_link_comes_up():
    link = _ShortOfHeap(["heap"] * 4 + ["up"] + ["heap"] * 2 + ["up"])
    asyncio.run(link.run())
    assert link.told == [("test: ", 1), ("test: ", 2), ("test: ", 3), ("test: ", 4),
                         ("test: ", 1), ("test: ", 2)]
    assert link.starved == 0  # it came up at the end
    # Each loss keeps its own line (the last came while stopping: not a loss).
    assert len([line for line in link.log.lines if "link lost" in line]) == 7
