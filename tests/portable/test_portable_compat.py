# umcp.compat's call_then_forget and await_then_forget: the module is loaded for the call
# and, on MicroPython, off the heap again once the call ends, whether it returned or
# raised (CPython keeps its modules: memory is no concern there and tests patch them).
# And await_then_drop: a task that ran a coroutine through it keeps nothing of that
# coroutine once it ends. Runs under pytest and inside MicroPython.

import asyncio
import gc
import sys

from umcp.compat import await_then_drop, await_then_forget, call_then_forget

MICROPYTHON = sys.implementation.name == "micropython"
SYNC = "devsvc.settingsload"  # boot-only modules, loaded by nothing else in these cases
ASYNC = "unet.wshandshake"


def _loaded(name):
    package, _, leaf = name.rpartition(".")
    return name in sys.modules or hasattr(sys.modules.get(package), leaf)


def _forget_now(name):
    sys.modules.pop(name, None)
    package, _, leaf = name.rpartition(".")
    if hasattr(sys.modules.get(package), leaf):
        delattr(sys.modules[package], leaf)


def test_a_call_returns_the_function_s_result_and_drops_its_module():
    _forget_now(SYNC)
    made = call_then_forget(SYNC, "uuid4")
    assert len(made) == 36 and made[14] == "4"
    assert _loaded(SYNC) != MICROPYTHON


def test_a_call_that_raises_drops_its_module_too():
    _forget_now(SYNC)
    try:
        call_then_forget(SYNC, "uuid4", "an argument it does not take")
    except TypeError:
        pass
    else:
        raise AssertionError("the call's TypeError was lost")
    assert _loaded(SYNC) != MICROPYTHON


def test_a_missing_function_is_an_attribute_error():
    try:
        call_then_forget(SYNC, "no_such_function")
    except AttributeError:
        pass
    else:
        raise AssertionError("no AttributeError")


async def test_an_awaited_call_keeps_its_module_until_its_end():
    _forget_now(ASYNC)
    try:
        # Refused before any connection: the module was loaded for it and is dropped after.
        await await_then_forget(ASYNC, "open_stream", "http://example.invalid/", None, None, 1)
    except ValueError as e:
        assert "not a WebSocket URL" in str(e)
    else:
        raise AssertionError("an http:// URL was taken for a WebSocket")
    assert _loaded(ASYNC) != MICROPYTHON


_HELD = 16384  # bytes the coroutine's frame holds: keeping them shows in the heap


def _heap_in_use():
    """Bytes in use after a collection (MicroPython; not the WebAssembly build, whose
    collector keeps what the JavaScript side may still see), else None."""
    if not MICROPYTHON or sys.platform == "webassembly":
        return None
    gc.collect()
    return gc.mem_alloc()


async def _holding(held, ending):
    await asyncio.sleep(0)
    if ending == "raise":
        raise ValueError("its own error")
    if ending == "cancel":
        await asyncio.sleep(60)
    return len(held)


def _start(ending):
    """The task, its coroutine made here: in the test's own frame, the bytearray would
    stay in a slot of its stack (MicroPython does not clear those)."""
    return asyncio.create_task(await_then_drop(_holding(bytearray(_HELD), ending)))


async def _step():
    await asyncio.sleep(0)


async def test_an_ended_task_keeps_nothing_of_the_coroutine_it_ran():
    # An ended task may stay linked from the tasks that live on, and on MicroPython an
    # ended coroutine keeps its frame: the task is kept here as such a link keeps it.
    expected = {"return": _HELD, "raise": "its own error", "cancel": "cancelled"}
    for ending in ("return", "raise", "cancel"):
        before = _heap_in_use()
        task = _start(ending)
        await asyncio.sleep(0)
        if ending == "cancel":
            task.cancel()
        try:
            outcome = await task
        except ValueError as e:
            outcome = str(e)
        except asyncio.CancelledError:
            outcome = "cancelled"
        assert outcome == expected[ending], (ending, outcome)
        await asyncio.create_task(_step())  # the loop's own frames move past this task
        if before is not None:
            kept = _heap_in_use() - before
            assert kept < _HELD // 4, "%s: %d bytes kept with the ended task" % (ending, kept)
        task = None
