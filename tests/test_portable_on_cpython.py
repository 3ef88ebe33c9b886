"""The device test cases (tests/device/test_*.py) under CPython.

The same cases run inside MicroPython through tests/device/runner.py (make
test-device); this file collects them with the runner's own discovery, one
pytest case per test function (`test_device_case[test_x.py::test_y]`), so a
case that fails on CPython shows up here by name. Async cases run with
asyncio.run, each on a fresh event loop.
"""

import asyncio
import importlib.util
import inspect
import os
import sys

import pytest

from tools.mpy import DEVICE_TESTS, search_path

for _path in search_path(DEVICE_TESTS):
    if _path not in sys.path:
        sys.path.append(_path)

import runner  # noqa: E402  (tests/device/runner.py, found through the path above)

_modules = {}


def _load(name):
    """Import tests/device/<name>.py once, under a name that cannot clash with tests/<name>.py."""
    if name not in _modules:
        spec = importlib.util.spec_from_file_location("device_" + name, os.path.join(DEVICE_TESTS, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[name] = module
    return _modules[name]


def _cases():
    for name in runner.discover(DEVICE_TESTS):
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
    result = function()
    if inspect.iscoroutine(result):
        asyncio.run(asyncio.wait_for(result, runner.TEST_TIMEOUT_S))


def test_device_cases_exist():
    assert runner.discover(DEVICE_TESTS)
