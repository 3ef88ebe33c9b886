"""pytest on a portable file as a newcomer types it (`pytest tests/portable/test_portable_unet.py`):
the cases import with the device's search path (tools.mpy.search_path: this folder, lib/,
the simulated hardware), and an `async def` case runs with asyncio.run on a fresh event
loop within runner.TEST_TIMEOUT_S, as tests/test_portable_on_cpython.py and the
MicroPython runner run it. A whole `pytest` run leaves this folder to that file
(tests/conftest.py's collect_ignore); inside MicroPython, runner.py runs the cases.
"""

import asyncio
import inspect
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # the repository, for tools.mpy
from tools.mpy import PORTABLE_TESTS, search_path  # noqa: E402

for _path in search_path(PORTABLE_TESTS):
    if _path not in sys.path:
        sys.path.append(_path)

from runner import TEST_TIMEOUT_S  # noqa: E402  (tests/portable/runner.py)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """An async case: awaited on a fresh loop, bounded in time (pytest runs none itself)."""
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        asyncio.run(asyncio.wait_for(pyfuncitem.obj(), TEST_TIMEOUT_S))
        return True
    return None
