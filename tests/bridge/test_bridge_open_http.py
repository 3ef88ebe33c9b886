"""The bridge's HTTP endpoint for other machines (--http-host), as Home Assistant's MCP
integration reaches it: the SDK's Streamable HTTP client in a legacy session, no
Authorization header. With --http-auth none it lists and calls the devices' tools (and the
bridge says at its start that anyone who reaches the port can); with --http-token the same
client gets 401; a foreign Host (DNS rebinding) or Origin is refused either way; the
options that cannot go together stop the start with one line. The endpoint listens on
127.0.0.2 here: not loopback's usual address, so the bridge treats it as reachable by
others, without opening a port on the machine's network."""

import socket
import subprocess
import sys
import threading

import httpx2 as httpx
import pytest

from tests.bridge.test_bridge import free_port
from tests.firmware.test_firmware_mcp_http_open import home_assistant_session
from tests.support.fakedevice import FakeDevice
from tests.support.firmwareharness import run
from tests.support.toolnames import check_tool_names
from tests.support import ROOT
from tools.childprocess import stop_process

pytestmark = pytest.mark.timeout(120)
TOKEN = "bridge-token"
HTTP_TOKEN = "lan-secret"
ADDRESS = "127.0.0.2"


@pytest.fixture(params=["none", "token"])
def lan_bridge(request):
    """A bridge whose HTTP endpoint listens on ADDRESS, without a token or with one, and a
    scripted device on it."""
    port, http_port = free_port(), free_port()
    auth = ["--http-auth", "none"] if request.param == "none" else ["--http-token", HTTP_TOKEN]
    bridge = subprocess.Popen([sys.executable, "-m", "tools.bridge", "--port", str(port), "--token", TOKEN,
                               "--host", "127.0.0.1", "--http", str(http_port), "--http-host", ADDRESS,
                               "--alias", "fa:ce:00:00:00:03=lab", "--expect", "1", *auth],
                              cwd=ROOT, text=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    said = []
    for line in bridge.stderr:
        said.append(line)
        if "MCP clients connect to http://%s:%d/mcp" % (ADDRESS, http_port) in line:
            break
    threading.Thread(target=bridge.stderr.read, daemon=True).start()  # the rest, drained
    device = FakeDevice("ws://127.0.0.1:%d/xiaozhi/v1/" % port, TOKEN).start()
    try:
        yield {"url": "http://%s:%d/mcp" % (ADDRESS, http_port), "auth": request.param, "said": "".join(said),
               "own": "%s:%d" % (ADDRESS, http_port)}
    finally:
        device.stop()
        stop_process(bridge)


def post(url, headers=None):
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    sent.update(headers or {})
    return httpx.post(url, json=body, headers=sent, timeout=10)


def test_home_assistant_s_client_and_a_bridge_on_the_lan(lan_bridge):
    url = lan_bridge["url"]
    if lan_bridge["auth"] == "none":
        assert "anyone who reaches port" in lan_bridge["said"], lan_bridge["said"]
        _, listing = run(home_assistant_session(url))
        names = set(check_tool_names(tool.name for tool in listing.tools))
        assert {"bridge__list_devices", "lab__audio_speaker_set_volume"} <= names, names
        _, called = run(home_assistant_session(url, ("lab__audio_speaker_set_volume", {"volume": 12})))
        assert not called.is_error, called
        _, devices = run(home_assistant_session(url, ("bridge__list_devices", {})))
        assert devices.structured_content["devices"][0]["alias"] == "lab"
        auth = {}
    else:
        statuses = []
        with pytest.raises(Exception):
            run(home_assistant_session(url, statuses=statuses))
        assert statuses == [401]
        refused = post(url)
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        assert post(url, {"Authorization": "Bearer wrong"}).status_code == 401
        auth = {"Authorization": "Bearer " + HTTP_TOKEN}
    assert post(url, auth).status_code == 200
    # DNS rebinding: a foreign Host or Origin is refused, with a token or without
    assert post(url, dict(auth, Host="evil.example")).status_code == 421
    assert post(url, dict(auth, Origin="http://evil.example")).status_code == 403
    assert post(url, dict(auth, Origin="http://" + lan_bridge["own"])).status_code == 200
    assert post(url, dict(auth, Host="%s:%s" % (socket.gethostname(), url.split(":")[2].split("/")[0]))
                ).status_code == 200  # this machine's own name


@pytest.mark.parametrize("options, words", [
    (["--http-host", "0.0.0.0"], "--http-host 0.0.0.0: other machines reach the endpoint: give --http-token"),
    (["--http-auth", "none", "--http-token", "t"], "--http-auth none and --http-token: keep one of them"),
    (["--http-auth", "off"], "argument --http-auth: invalid choice: 'off'"),
])
def test_options_that_cannot_work_stop_the_start_in_one_line(options, words):
    done = subprocess.run([sys.executable, "-m", "tools.bridge", "--http", "1", *options], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and words in done.stderr.splitlines()[-1], done.stderr
