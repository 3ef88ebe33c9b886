"""Shared pytest setup.

Device code imports as it does on the board (`lib/` on sys.path), host tools as
packages from the repository root, test helpers from tests.support. The `wire`
fixture is an McpWire (tests/support/mcpwire.py) over a fresh McpServer.
"""

import os
import shutil
import sys
import tempfile

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

from tests.support.mcpwire import McpWire  # noqa: E402 (needs lib/ on sys.path)


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
    """Certificates made for the tests (firmwareharness.make_certs): a folder of them."""
    from tests.support.firmwareharness import make_certs

    return make_certs(tmp_path_factory.mktemp("certs"))


_rigs = []  # the serial-line boards' rig, once started
_background = {}  # fixture name: tests.support.background.Background, once started


def _install_wheel():
    from tests.support.wheelinstall import install

    return install(tempfile.mkdtemp(prefix="umcp-wheel-"))


def _platform_matrix():
    from tests.support.platforms import matrix

    return matrix()


# What takes long to prepare and only waits on pip, a build or the network: the wheel
# installed in a venv of its own (about half a minute), pip's resolution for every platform
# (about a minute, mostly PyPI's answers).
BACKGROUND = {"installed_wheel": _install_wheel, "platform_matrix": _platform_matrix}


# Under pytest-xdist (make test runs two workers) every worker collects every test; one
# worker runs all the tests of PREPARED_FILES, the files whose tests wait for a
# preparation (the serial boards' rig deploys four boards: one is enough), and prepares them when
# its first such test asks; the others run file by file (module fixtures set up once).
PREPARED = "prepared"
PREPARED_FILES = ("tests/tooling/test_serial_deploy.py", "tests/bridge/test_bridge_serial.py",
                  "tests/tooling/test_wheel.py", "tests/tooling/test_platforms.py")
_used = set()  # the preparations the collected tests use


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's scheduling by scope: PREPARED_FILES one scope, every other file its own."""
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return PREPARED if path in PREPARED_FILES else path

    return Scheduling(config, log)


def _in_xdist_worker():
    return "PYTEST_XDIST_WORKER" in os.environ


def _prepare():
    """Start the preparations the collected tests use, once."""
    from tests.support.background import Background

    if "serial_rig" in _used:
        _used.add("installed_wheel")  # the rig deploys with the installed command
    for name, work in BACKGROUND.items():
        if name in _used and name not in _background:
            _background[name] = Background(work, name).start()
    if "serial_rig" in _used and not _rigs:
        from tests.support.serialrig import SerialRig

        _rigs.append(SerialRig(tempfile.mkdtemp(prefix="umcp-serial-"),
                               _background["installed_wheel"].result).start())


def pytest_collection_finish(session):
    """The serial-line boards (tests/support/serialrig.py) take half a minute to prepare, and so do the
    BACKGROUND preparations: when a selected test uses one, it starts now, and is prepared
    while the tests before it run (under xdist: when the worker that runs them starts the
    first)."""
    for item in session.items:
        _used.update(getattr(item, "fixturenames", ()))
    if not _in_xdist_worker():
        _prepare()


def pytest_sessionfinish(session, exitstatus):
    for rig in _rigs:
        rig.stop()
        if exitstatus == 0:
            shutil.rmtree(rig.folder, ignore_errors=True)
        else:  # its boards' flash and deploys, for whoever looks into a failure
            sys.stderr.write("\nthe serial boards' folder: %s\n" % rig.folder)


@pytest.fixture(scope="session")
def serial_rig():
    """The serial-line boards (SerialRig), started as the session's tests were collected."""
    _prepare()
    return _rigs[0]


@pytest.fixture(scope="session")
def installed_wheel():
    """The wheel installed in a venv of its own (tests/support/wheelinstall.py), prepared in
    the background from collection on."""
    _prepare()
    return _background["installed_wheel"].result()


@pytest.fixture(scope="session")
def platform_matrix():
    """pip's resolution of the run-time pins for every platform and Python
    (tests/support/platforms.matrix()), prepared in the background from collection on."""
    _prepare()
    return _background["platform_matrix"].result()


# Real MQTT brokers (tests/support/brokers.py): `broker` is amqtt in-process, and mosquitto with
# make test-mosquitto.
from tests.support.brokers import WITH_MOSQUITTO, broker  # noqa: E402,F401 (broker: a fixture)


def pytest_configure(config):
    config.addinivalue_line("markers", "mosquitto: needs Debian's mosquitto (make test-mosquitto)")


def pytest_collection_modifyitems(config, items):
    """The mosquitto cases belong to make test-mosquitto (UMCP_MOSQUITTO=1): deselected
    elsewhere, not skipped; there, a missing mosquitto fails them. Under xdist, a test that
    waits for a preparation must be in PREPARED_FILES."""
    if _in_xdist_worker():
        preparations = {"serial_rig"} | set(BACKGROUND)
        strays = [item.nodeid for item in items if preparations & set(getattr(item, "fixturenames", ()))
                  and item.nodeid.split("::")[0] not in PREPARED_FILES]
        if strays:
            raise pytest.UsageError("tests/conftest.py: add to PREPARED_FILES the files of %s (they wait for "
                                    "the serial rig or a BACKGROUND preparation)" % ", ".join(strays))
    if WITH_MOSQUITTO:
        return
    kept = [item for item in items if item.get_closest_marker("mosquitto") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept
