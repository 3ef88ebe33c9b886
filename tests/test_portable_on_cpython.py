"""The portable cases (tests/portable/test_portable_*.py) under CPython.

The same cases run inside MicroPython through tests/portable/runner.py (make
test-device); this file collects them with the runner's own discovery, one
pytest case per test function (`test_device_case[test_portable_x.py::test_y]`),
so a case that fails on CPython shows up here by name. Async cases run with
asyncio.run, each on a fresh event loop; every message a case's Wire gets from its server
is checked against the official SDK's types (portable_support.CHECKER), as McpWire checks
the host tests'. The cases import under their own names,
as inside MicroPython: every test module name under tests/ is unique.
"""

import asyncio
import inspect
import sys

import pytest

from tools.mpy import PORTABLE_TESTS, search_path

for _path in search_path(PORTABLE_TESTS):
    if _path not in sys.path:
        sys.path.append(_path)

import portable_support  # noqa: E402
import runner  # noqa: E402  (tests/portable/runner.py, found through the path above)

from tests.support.mcpwire import SdkChecker  # noqa: E402

# Each Wire of the cases checks what its server sends against the SDK's types, as McpWire.
portable_support.CHECKER = SdkChecker


def _load(name):
    """tests/portable/<name>.py, imported once, by its own name."""
    return __import__(name)


def _cases():
    for name in runner.discover(PORTABLE_TESTS):
        try:
            tests = runner.tests_in(_load(name))
        except Exception:  # the case below fails with the import error, as on the device
            yield pytest.param(name, None, id=name + ".py (import)")
            continue
        for test_name, _ in tests:
            yield pytest.param(name, test_name, id="%s.py::%s" % (name, test_name))


@pytest.mark.timeout(runner.TEST_TIMEOUT_S + 10)
@pytest.mark.parametrize("module_name, test_name", list(_cases()))
def test_device_case(module_name, test_name):
    function = getattr(_load(module_name), test_name)
    del portable_support.FAILURES[:]
    result = function()
    if inspect.iscoroutine(result):
        asyncio.run(asyncio.wait_for(result, runner.TEST_TIMEOUT_S))
    assert portable_support.FAILURES == []  # every message valid for the SDK


def test_device_cases_exist():
    assert runner.discover(PORTABLE_TESTS)
