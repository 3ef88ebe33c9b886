"""`umcp sim --board NAME --config FILE` (tools/sim/demo.py), as the docs' "try it" steps run
it without a terminal: a maker's config.json on any board of lib/boards, the session
printed (tools/list, a call of each of its parts' tools) and exit status 0; --mcp-http PORT
(with --auth none, as Home Assistant connects) serves the board over HTTP on loopback,
listed and called by the SDK's client as Home Assistant's integration does; a board or
config.json that cannot be used gets one line and exit status 1. The installed command's
run is tests/tooling/test_wheel.py's."""

import json
import re
import socket
import subprocess
import sys
import time

import pytest

from tests.firmware.test_firmware_mcp_http_open import home_assistant_session
from tests.support import ROOT
from tests.support.firmwareharness import run as run_async
from tests.support.toolnames import check_tool_names
from tools.childprocess import stop_process

pytestmark = pytest.mark.timeout(150)
MAKER = {"board": "generic", "chip": "esp32", "wifi": {"ssid": "home", "password": "secret"},
         "url": "ws://192.168.1.20:8000/xiaozhi/v1/", "token": "theirs",
         "parts": [{"type": "relay", "name": "lamp", "pin": 2, "description": "desk lamp"},
                   {"type": "pwm", "name": "fan", "pin": 4},
                   {"type": "dht", "name": "room", "pin": 27}]}


def sim(*args, **options):
    return subprocess.run([sys.executable, "-m", "tools.cli", "sim", *args], cwd=options.pop("cwd", ROOT),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, **options)


def check_maker_session(out, device_board="generic"):
    """The session of MAKER's board, as umcp sim prints it."""
    assert re.search(r'<- initialize: \{"name":"%s"' % device_board, out), out
    device = re.search(r"^(\S+): connected", out, re.M).group(1)
    pages = re.findall(r"^%s: <- tools/list page: \d+ tools (.*?), (?:nextCursor '[^']*'|last page)$" % re.escape(device),
                       out, re.M)
    assert pages and re.search(r"^%s: <- tools/list page: .*, last page$" % re.escape(device), out, re.M), out
    names = [name for page in pages for name in page.split(", ")]
    assert names == ["self.get_device_status", "self.alarms.add", "self.alarms.list", "self.alarms.remove",
                     "self.lamp.get_state", "self.lamp.turn_on", "self.lamp.turn_off", "self.fan.set_level",
                     "self.room.read"], names
    for call, answer in [("self.lamp.turn_on {}", "true"), ("self.lamp.get_state {}", '{"power":false}'),
                         ('self.fan.set_level {"level":50}', "true")]:
        assert "-> tools/call %s\n%s: <- %s" % (call, device, answer) in out, out
    assert re.search(r'-> tools/call self\.room\.read \{\}\n\S+: <- \{"temperature_c":', out), out
    assert re.search(r"-> tools/call self\.get_device_status \{\}\n\S+: <- \{", out), out
    assert "demo: lamp (relay): turn_on" in out and out.rstrip().endswith("demo: done")


def test_a_makers_config_on_the_generic_board(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(MAKER))
    done = sim("--board", "generic", "--config", str(tmp_path / "config.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    check_maker_session(done.stdout)
    assert "192.168.1.20" not in done.stdout  # the simulator's own backend, not config.json's
    assert "demo: config.json's wifi, url, token: the simulator's own here" in done.stdout


@pytest.mark.parametrize("board", ["host", "esp32_s3_box3", "esp32s3_cam", "m5stack_cores3"])
def test_every_board_runs_a_session(board):
    done = sim("--board", board)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r'<- initialize: \{"name":"%s"' % board, done.stdout), done.stdout
    assert "-> tools/call self.get_device_status {}" in done.stdout and done.stdout.rstrip().endswith("demo: done")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_mcp_http_without_a_token_as_home_assistant_connects(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(dict(MAKER, mcp_http={"port": 80, "auth": "none"})))
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "tools.cli", "sim", "--board", "generic", "--config",
                                str(tmp_path / "config.json"), "--mcp-http", str(port), "--auth", "none", "--serve"],
                               cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    said = []
    try:
        deadline = time.monotonic() + 90
        for line in process.stdout:
            said.append(line)
            if "keep running" in line or "demo: done" in line or time.monotonic() > deadline:
                break
        out = "".join(said)
        assert "demo: the board also serves MCP at http://127.0.0.1:%d/mcp, no token" % port in out, out
        assert "keep running" in out, out
        url = "http://127.0.0.1:%d/mcp" % port
        _, listing = run_async(home_assistant_session(url))
        # Home Assistant lists once (no cursor followed): every tool on that one page.
        names = set(check_tool_names(tool.name for tool in listing.tools))
        assert {"self_get_device_status", "self_lamp_turn_on", "self_fan_set_level", "self_room_read"} <= names, names
        assert listing.next_cursor is None
        _, called = run_async(home_assistant_session(url, ("self_lamp_turn_on", {})))
        assert not called.is_error, called
    finally:
        stop_process(process)


def test_mcp_http_with_a_token_prints_it():
    done = sim("--board", "host", "--mcp-http", str(free_port()))
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"demo: the board also serves MCP at http://127\.0\.0\.1:\d+/mcp, header "
                     r"Authorization: Bearer [0-9a-f]{16}$", done.stdout, re.M), done.stdout


@pytest.mark.parametrize("case", ["no such board", "no file", "not JSON", "an array", "parts not a list",
                                  "an unknown part type"])
def test_a_board_or_config_that_cannot_be_used_gets_one_line(tmp_path, case):
    path = tmp_path / "config.json"
    contents = {"no file": None, "not JSON": "{", "an array": "[]", "parts not a list": '{"parts": {}}',
                "an unknown part type": '{"parts": [{"type": "laser", "name": "x", "pin": 2}]}'}.get(case, "{}")
    if contents is not None:
        path.write_text(contents)
    board = "nosuch" if case == "no such board" else "generic"
    done = sim("--board", board, "--config", str(path))
    expected = {"no such board": "sim: no board 'nosuch'; boards: esp32_s3_box3, esp32s3_cam, generic, host,",
                "no file": "sim: --config: cannot read %s: " % path,
                "not JSON": "sim: --config: %s is not JSON: " % path,
                "an array": "sim: --config: %s holds an array, not a JSON object" % path,
                "parts not a list": 'sim: --config: %s: "parts" must be a list of parts, not an object' % path,
                "an unknown part type": "sim: --config: %s: config.json parts[0]: unknown type 'laser'" % path}[case]
    assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), done.stderr
