"""Where the bridge and the backend listen for devices, and whether they ask a token:
nothing listens beyond loopback without a token unless the user asks for it.

- `bridge --serial PORT` alone (what a desktop client's config starts) listens on
  127.0.0.1 only: a connection to this machine's network address is refused.
- A bridge or backend that serves the network without --token makes one up and prints it;
  a device or tool provider that comes without it, from the network address, gets 401,
  one with it gets in.
- --no-token serves the network without one, and says what that exposes.
- A --serial port the bridge cannot take (not there; mpremote's `auto` or `u0`) is one line
  and exit status 1, before anything listens.

The connections come from another host on the network: a network namespace of the test's
own on this machine (tests/support/otherhost.py), to this machine's address on that link;
no packet leaves the machine."""

import re
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.support import ROOT
from tests.support.otherhost import OtherHost
from tools.childprocess import stop_process
from tools.hub.front import LOOPBACK, reachable_host

pytestmark = pytest.mark.timeout(60)
SAID_S = 30


class Started:
    """A host program as a subprocess, its log (stderr, or stdout for the backend) read
    until `until` appears: `said` is the text so far, `match` the last regex match."""

    def __init__(self, module, *args, log="stderr"):
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *args], cwd=ROOT, text=True, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE if log == "stdout" else subprocess.DEVNULL,
            stderr=subprocess.PIPE if log == "stderr" else subprocess.STDOUT)
        self.stream = self.process.stdout if log == "stdout" else self.process.stderr
        self.said = ""

    def until(self, pattern):
        deadline = time.monotonic() + SAID_S
        while time.monotonic() < deadline:
            found = re.search(pattern, self.said)
            if found:
                return found
            line = self.stream.readline()
            assert line, "it ended before saying %r:\n%s" % (pattern, self.said)
            self.said += line
        raise AssertionError("not said within %d s: %r\n%s" % (SAID_S, pattern, self.said))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        threading.Thread(target=self.stream.read, daemon=True).start()
        self.process.stdin.close()
        stop_process(self.process)


@pytest.fixture(scope="module")
def lan():
    """Another host on the network (OtherHost), for the module's tests."""
    with OtherHost() as other:
        yield other


def test_a_bridge_for_serial_boards_alone_listens_on_loopback_only(lan):
    # A pyserial URL nothing answers at: the port is taken as given (no board will come).
    with Started("tools.bridge", "--serial", "socket://127.0.0.1:9") as bridge:
        devices = bridge.until(r"devices connect to ws://([\d.]+):(\d+)/xiaozhi/v1/ \((.*)\)")
        ota = bridge.until(r"OTA check at http://([\d.]+):(\d+)/")
        assert devices.group(1) == ota.group(1) == "127.0.0.1", bridge.said
        assert "no token needed" in bridge.said  # loopback: none needed
        port, http_port = int(devices.group(2)), int(ota.group(2))
        for listening in (port, http_port):  # there on loopback, not from the network
            socket.create_connection(("127.0.0.1", listening), timeout=5).close()
        assert lan.refused(port) and lan.refused(http_port)


@pytest.mark.parametrize("module", ["tools.bridge", "tools.backend"])
def test_serving_the_network_without_a_token_makes_one_up(lan, module):
    args = ["--port", "0"] if module == "tools.bridge" else ["--port", "0", "--http-port", "0", "--no-console"]
    with Started(module, *args, log="stderr" if module == "tools.bridge" else "stdout") as hub:
        devices = hub.until(r"devices connect to ws://([\d.]+):(\d+)/xiaozhi/v1/ \(token required\)")
        token = hub.until(r'devices must present the token (\S+) \(in their config.json: "token": "(\S+)"').group(1)
        # The address it prints is this machine's on its network (found without a packet sent).
        assert devices.group(1) == reachable_host("0.0.0.0") not in LOOPBACK and len(token) >= 16, hub.said
        port = int(devices.group(2))
        assert lan.handshake("/xiaozhi/v1/", port) == 401
        assert lan.handshake("/xiaozhi/v1/", port, "guess") == 401
        assert lan.handshake("/mcp_endpoint/mcp/", port) == 401
        assert lan.handshake("/xiaozhi/v1/", port, token) == 101
        assert lan.handshake("/mcp_endpoint/mcp/?token=" + token, port) == 101


def test_no_token_serves_the_network_and_says_what_it_exposes(lan):
    with Started("tools.bridge", "--port", "0", "--no-token") as bridge:
        devices = bridge.until(r"devices connect to ws://([\d.]+):(\d+)/xiaozhi/v1/ \(no token\)")
        warning = bridge.until(r"warning: --no-token: anyone who reaches port \d+ may attach a device.*")
        assert "reach your assistant" in warning.group(0) and "devices must present" not in bridge.said
        assert lan.handshake("/xiaozhi/v1/", int(devices.group(2))) == 101


@pytest.mark.parametrize("port", ["/dev/ttyNOPE", "auto", "u0"])
def test_a_serial_port_the_bridge_cannot_take_is_one_line_before_anything_listens(port):
    done = subprocess.run([sys.executable, "-m", "tools.bridge", "--serial", port], cwd=ROOT, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=30)
    lines = done.stderr.splitlines()
    assert done.returncode == 1 and len(lines) == 1 and done.stdout == "", done.stderr
    expected = "bridge: no serial port /dev/ttyNOPE" if port == "/dev/ttyNOPE" else "bridge: --serial %s: name the port" % port
    assert lines[0].startswith(expected), lines


def test_no_token_and_a_token_cannot_go_together():
    done = subprocess.run([sys.executable, "-m", "tools.bridge", "--no-token", "--token", "x"], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "--no-token and --token: keep one of them" in done.stderr
