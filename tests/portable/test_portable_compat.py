# umcp.compat's call_then_forget and await_then_forget: the module is loaded for the call
# and, on MicroPython, off the heap again once the call ends, whether it returned or
# raised (CPython keeps its modules: memory is no concern there and tests patch them).
# Runs under pytest and inside MicroPython.

import sys

from umcp.compat import await_then_forget, call_then_forget

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
