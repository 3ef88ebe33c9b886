"""Shared pytest setup.

Device code imports as it does on the board (`lib/` on sys.path), host tools as
packages from the repository root, test helpers from tests.support. The `wire`
fixture is an McpWire (tests/support/mcp_wire.py) over a fresh McpServer.
"""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (ROOT, os.path.join(ROOT, "lib")):
    if _path not in sys.path:
        sys.path.insert(0, _path)
# The simulated machine, esp32, network, camera and neopixel modules: last, as under tools.sim.
if os.path.join(ROOT, "tools", "sim", "hwsim") not in sys.path:
    sys.path.append(os.path.join(ROOT, "tools", "sim", "hwsim"))
# tests/portable/portable_support.py: helpers the portable cases and the host tests share.
if os.path.join(ROOT, "tests", "portable") not in sys.path:
    sys.path.append(os.path.join(ROOT, "tests", "portable"))

from tests.support.mcp_wire import McpWire  # noqa: E402 (needs lib/ on sys.path)


@pytest.fixture
def anyio_backend():
    # The device runs on asyncio; so do the async tests.
    return "asyncio"


@pytest.fixture
def wire():
    """An McpWire over a fresh McpServer."""
    from umcp import McpServer

    wire = McpWire(McpServer(name="test-device", version="1.2.3"))
    yield wire
    assert wire.failures == []

# tests/portable/ holds the cases that also run inside MicroPython:
# tests/test_portable_on_cpython.py collects them with the MicroPython runner's own
# discovery (async ones included), so pytest does not collect them a second time.
collect_ignore = ["portable"]


@pytest.fixture(scope="session")
def certs(tmp_path_factory):
    """Certificates made for the tests (firmware_harness.make_certs): a folder of them."""
    from tests.support.firmware_harness import make_certs

    return make_certs(tmp_path_factory.mktemp("certs"))


# Real MQTT brokers (tests/support/brokers.py): `broker` is amqtt in-process, and mosquitto with
# make test-mosquitto.
from tests.support.brokers import WITH_MOSQUITTO, broker  # noqa: E402,F401 (broker: a fixture)


def pytest_configure(config):
    config.addinivalue_line("markers", "mosquitto: needs Debian's mosquitto (make test-mosquitto)")


def pytest_collection_modifyitems(config, items):
    """The mosquitto cases belong to make test-mosquitto (UMCP_MOSQUITTO=1): deselected
    elsewhere, not skipped; there, a missing mosquitto fails them."""
    if WITH_MOSQUITTO:
        return
    kept = [item for item in items if item.get_closest_marker("mosquitto") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept
