"""lib/unet/reconnect.py: the reconnect pause every link shares (the xiaozhi links and the
MCP endpoint link)."""

import asyncio

from unet.reconnect import Backoff, raise_if_cancelled


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
