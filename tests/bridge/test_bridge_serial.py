"""`umcp bridge --serial PORT`, as pip installs it, with a real MicroPython on the other end
of the line: a pty board (tests/support/serialrig.py) with the firmware deployed by the
installed `umcp deploy --romfs --app ...` (the maker's module tests/support/makerapp.py
beside it), the real raw REPL on its pty, and the official MCP SDK client on the bridge's
stdio in both modes, the bridge started from a folder that is not the clone. The bridge
stops main.py, starts the firmware's serial session, serves it as it serves a board over
WebSocket, takes it again after a reset, and leaves it running main.py when it exits.
Every line the bridge writes on stdout is checked against the SDK's types
(tests/support/wiretap.py); its log (stderr) is read for what it says about each port.

Bad input: a busy port, one where nothing answers, a board without umcp, a firmware of
another release, and the cable pulled (the board stopped) mid-call, all behind one bridge
that keeps serving its other boards (a port that is not there at the start is refused in
one line: tests/tooling/test_wheel.py)."""

import json
import os
import socket
import sys

import anyio
import mcp_types as types
import pytest
import serial
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.support.mcphttp import check_messages
from tests.support.serialrig import CONFIG, RUNNING, console
from tests.support.toolnames import check_tool_names
from tests.support import ROOT
from tools.sim.board import SimBoard, config_for
from tools.bridge.slots import SERIAL_WAIT_S
from tools.sim.ptyboard import PtyBoard, default_micropython

pytestmark = [pytest.mark.timeout(180), pytest.mark.anyio]
ALIAS = "dev-123456"  # the simulated radio's MAC, 24:0a:c4:12:34:56
WIRE_TAP = os.path.join(ROOT, "tests", "support", "wiretap.py")
READ_TIMEOUT = 30
TOKEN = "serial-token"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SerialBridge:
    """The installed `umcp bridge` over stdio behind wiretap, started in a folder that is
    not the clone, its stderr in `log`; `params` for the SDK."""

    def __init__(self, tmp_path, installed, ports, *extra):
        self.wire = tmp_path / "wire.jsonl"
        self.log = tmp_path / "bridge.log"
        self.port = free_port()
        serial_args = [arg for port in ports for arg in ("--serial", str(port))]
        self.params = StdioServerParameters(
            command="sh", cwd=str(installed.cwd), env=dict(installed.env, BRIDGE_LOG=str(self.log)), args=[
                "-c", 'exec "$@" 2>>"$BRIDGE_LOG"', "sh", sys.executable, WIRE_TAP, str(self.wire),
                installed.umcp, "bridge", "--port", str(self.port), "--token", TOKEN, "--host", "127.0.0.1",
                *serial_args, *extra])

    def said(self):
        return self.log.read_text() if self.log.exists() else ""

    async def until_said(self, text, timeout=READ_TIMEOUT):
        try:
            with anyio.fail_after(timeout):
                while text not in self.said():
                    await anyio.sleep(0.1)
        except TimeoutError:
            raise AssertionError("the bridge never said %r in %d s; it said:\n%s"
                                 % (text, timeout, self.said()[-3000:])) from None

    def checked(self):
        """Every message the bridge wrote on stdout, checked against the SDK's types."""
        with open(self.wire) as log:
            return check_messages([json.loads(line) for line in log])


async def online(client, *aliases):
    """bridge__list_devices once every one of `aliases` is online: {alias: entry}."""
    with anyio.fail_after(READ_TIMEOUT):
        while True:
            result = await client.call_tool("bridge__list_devices", {})
            devices = {d["alias"]: d for d in result.structured_content["devices"]}
            if all(devices.get(alias, {}).get("online") for alias in aliases):
                return devices
            await anyio.sleep(0.1)


async def cancelled_on_the_board(client, bridge):
    """A call the client gives up on is cancelled on the board: the maker's wait says on
    the console that it began (the bridge logs it), the client cancels, and the board's
    own record says the wait was cancelled."""
    before = bridge.said().count("maker: waiting 60 s")
    with anyio.fail_after(READ_TIMEOUT):
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, ALIAS + "__lab_wait", {"seconds": 60})
            while bridge.said().count("maker: waiting 60 s") == before:
                await anyio.sleep(0.05)
            group.cancel_scope.cancel()
    with anyio.fail_after(10):
        while True:
            result = await client.call_tool(ALIAS + "__lab_cancelled", {})
            if result.content[0].text == "true":
                return
            await anyio.sleep(0.1)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_uses_a_board_on_its_serial_line(serial_rig, installed_wheel, tmp_path, mode):
    board = serial_rig.board("romfs").board
    bridge = SerialBridge(tmp_path, installed_wheel, [board.pty], "--user-tools")
    async with Client(bridge.params, read_timeout_seconds=READ_TIMEOUT, mode=mode) as client:
        devices = await online(client, ALIAS)
        assert devices[ALIAS]["transport"] == "serial" and devices[ALIAS]["device_id"] == "24:0a:c4:12:34:56"
        assert devices[ALIAS]["server_info"] == {"name": "generic", "version": umcp_version()}

        listing = await client.list_tools()
        assert listing.next_cursor is None
        mine = [tool for tool in listing.tools if tool.name.startswith(ALIAS + "__")]
        size = sum(len(json.dumps(tool.model_dump(by_alias=True, exclude_none=True))) for tool in mine)
        assert size > 2 * CONFIG["max_payload"]  # the board sent several pages, and every one arrived
        short = {tool.name[len(ALIAS) + 2:] for tool in mine}
        assert {"get_device_status", "get_system_info", "reboot", "lab_wait", "lab_cancelled",
                "lab_chatter", "lab_echo"} <= short  # the firmware's, the owner's (--user-tools), the maker's
        check_tool_names(tool.name for tool in listing.tools)

        status = await client.call_tool(ALIAS + "__get_device_status", {})
        assert json.loads(status.content[0].text)["board"] == "generic"
        info = json.loads((await client.call_tool(ALIAS + "__get_system_info", {})).content[0].text)
        assert info["runtime"].startswith("MicroPython %s" % micropython_version()) and info["board"] == "generic"

        # A message of many windows, more than a board's stdin buffer holds:
        # taken a window at a time, nothing lost.
        text = "".join(chr(0x41 + n % 26) for n in range(6000)) + " é ✓"
        echo = await client.call_tool(ALIAS + "__lab_echo", {"text": text})
        assert echo.content[0].text == "%d %s" % (len(text), text)

        bad = await client.call_tool(ALIAS + "__lab_wait", {"seconds": 0})  # argument error
        assert bad.is_error and "seconds" in bad.content[0].text
        with pytest.raises(MCPError) as unknown:
            await client.call_tool(ALIAS + "__no_such_tool", {})
        assert unknown.value.code == -32602

        await cancelled_on_the_board(client, bridge)

        # A maker's print()s share the line: logged (escapes shown, not acted on), the
        # session carries on.
        chatter = await client.call_tool(ALIAS + "__lab_chatter", {})
        assert chatter.content[0].text == "said"
        assert (await client.call_tool(ALIAS + "__lab_cancelled", {})).content[0].text == "true"
    said = bridge.said()
    assert "maker: a debugging line" in said and "maker: \\x1b[31mcoloured" in said and "\x1b" not in said
    assert "a record that is not JSON, dropped: {not json" in said
    assert bridge.checked() > 10
    # The bridge soft-reset the board as it left: main.py runs the firmware again.
    with console(board) as terminal:
        terminal.read_until(RUNNING, 20)


async def test_a_board_that_resets_under_the_bridge_is_taken_again(serial_rig, installed_wheel, tmp_path):
    board = serial_rig.board("romfs").board
    bridge = SerialBridge(tmp_path, installed_wheel, [board.pty], "--user-tools")
    async with Client(bridge.params, read_timeout_seconds=READ_TIMEOUT, mode="legacy") as client:
        await online(client, ALIAS)
        assert (await client.call_tool(ALIAS + "__reboot", {})).content[0].text == "true"
        await bridge.until_said("said goodbye")  # it left, and its reset is on the way
        await bridge.until_said("is serving", timeout=READ_TIMEOUT)
        with anyio.fail_after(READ_TIMEOUT):  # after the reset, main.py stopped and the session back
            while bridge.said().count("is serving") < 2:
                await anyio.sleep(0.1)
        await online(client, ALIAS)
        status = await client.call_tool(ALIAS + "__get_device_status", {})
        assert json.loads(status.content[0].text)["board"] == "generic"
    said = bridge.said()
    assert said.count("said goodbye") == 1 and said.count("is serving") == 2
    assert RUNNING.decode() in said  # main.py ran after the reset, then was stopped


def umcp_version():
    import umcp

    return umcp.__version__


def micropython_version():
    """The unix port's release, as the board reports it ("1.29.0")."""
    import subprocess

    return subprocess.run([default_micropython(), "-c", "import sys; print('%d.%d.%d' % sys.implementation.version[:3])"],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def bad_ports(tmp_path):
    """Four ports that cannot serve: one where nothing answers (a pty nobody reads), a busy one (held by another program), a board without umcp (MicroPython as it
    comes), a firmware of another release (its umcp/__init__.py only): {what: port}."""
    bare, older = PtyBoard(tmp_path / "bare", "bare"), PtyBoard(tmp_path / "older", "older")
    fds, holder = [], None
    try:
        bare.start()
        older.start()
        version = tmp_path / "__init__.py"
        version.write_text('__version__ = "0.2.9"  # an older release of umcp\n')
        older.mpremote("fs", "mkdir", ":lib", "+", "fs", "mkdir", ":lib/umcp", "+",
                       "fs", "cp", str(version), ":lib/umcp/__init__.py")
        silent_master, silent = os.openpty()
        busy_master, busy = os.openpty()
        fds = [silent_master, silent, busy_master, busy]
        holder = serial.Serial(os.ttyname(busy), 115200, exclusive=True)
        yield {"silent": os.ttyname(silent), "busy": os.ttyname(busy),
               "bare": bare.pty, "older": older.pty}
    finally:
        if holder is not None:
            holder.close()
        for fd in fds:
            os.close(fd)
        bare.stop()
        older.stop()


async def test_bad_ports_get_one_line_each_and_the_bridge_serves_on(serial_rig, installed_wheel, tmp_path, bad_ports):
    """Each bad port said once in the log; a good board whose cable is pulled mid-call (its
    client gets an MCP error at once); all behind one bridge that keeps serving a board
    over WebSocket throughout."""
    spare = serial_rig.board("spare").board
    bridge = SerialBridge(tmp_path, installed_wheel, list(bad_ports.values()) + [spare.pty])
    lines = {"silent": "%s: no MicroPython REPL answered" % bad_ports["silent"],
             "busy": "%s is busy: another program has it open" % bad_ports["busy"],
             "bare": "%s: MicroPython %s without umcp: deploy the firmware" % (bad_ports["bare"], micropython_version()),
             "older": "%s: the board runs umcp 0.2.9, this bridge %s: deploy this release"
                      % (bad_ports["older"], umcp_version())}
    url = "ws://127.0.0.1:%d/xiaozhi/v1/" % bridge.port
    with open(tmp_path / "sim.log", "w") as sim_log, \
            SimBoard(config_for(url=url, token=TOKEN, device_id="5e:00:00:00:00:01", backoff_min=0.1,
                                backoff_max=0.3), root=str(tmp_path / "sim"), log=sim_log):
        async with Client(bridge.params, read_timeout_seconds=READ_TIMEOUT, mode="legacy") as client:
            await online(client, ALIAS, "dev-000001")

            # The cable pulled mid-call: the client is told at once, not after 60 s.
            failures = []

            async def pulled():
                try:
                    await client.call_tool(ALIAS + "__lab_wait", {"seconds": 60})
                except MCPError as e:
                    failures.append(e)

            with anyio.fail_after(20):
                async with anyio.create_task_group() as group:
                    group.start_soon(pulled)
                    await bridge.until_said("maker: waiting 60 s")
                    spare.stop()
            assert "disconnected before answering" in failures[0].message

            # The bridge serves on: its own tools, and the board over WebSocket.
            devices = await online(client, "dev-000001")
            assert not devices[ALIAS]["online"]
            volume = await client.call_tool("dev-000001__audio_speaker_set_volume", {"volume": 31})
            assert volume.content[0].text == "true"
            for line in lines.values():
                await bridge.until_said(line)
            # The client can read where each port stands (why its board is not online).
            listed = (await client.call_tool("bridge__list_devices", {})).structured_content["serial"]
            states = {entry["port"]: entry["state"] for entry in listed}
            assert states[bad_ports["bare"]].startswith("gave up") and "without umcp" in states[bad_ports["bare"]]
            assert states[bad_ports["busy"]].startswith("gave up") and "is busy" in states[bad_ports["busy"]]
            assert states[spare.pty] == "waiting for the port"
            await anyio.sleep(3)  # the port that went away is looked for again meanwhile, quietly
    said = bridge.said()
    for line in list(lines.values()) + ["%s went away" % spare.pty]:
        assert said.count(line) == 1, (line, said)
    assert bridge.checked() > 5


def serial_only(tmp_path, installed, port):
    """The installed `umcp bridge --serial PORT` alone, as a desktop client's config starts
    it (loopback only, no token): (its SDK parameters, its log)."""
    log = tmp_path / "bridge.log"
    params = StdioServerParameters(command="sh", cwd=str(installed.cwd), env=dict(installed.env, BRIDGE_LOG=str(log)),
                                   args=["-c", 'exec "$@" 2>>"$BRIDGE_LOG"', "sh", installed.umcp, "bridge",
                                         "--serial", port])
    return params, log


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_first_listing_holds_the_board(serial_rig, installed_wheel, tmp_path, mode):
    """A client that lists once, right after it connects, gets the board's tools: the first
    listing waits for the boards named with --serial (SERIAL_WAIT_S, said in the log)."""
    board = serial_rig.board("romfs").board
    params, log = serial_only(tmp_path, installed_wheel, board.pty)
    async with Client(params, read_timeout_seconds=READ_TIMEOUT, mode=mode) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {ALIAS + "__get_device_status", ALIAS + "__lab_echo", "bridge__list_devices"} <= names, (
            names, log.read_text())
        status = await client.call_tool(ALIAS + "__get_device_status", {})
        assert json.loads(status.content[0].text)["board"] == "generic"
    said = log.read_text()
    assert "waiting up to %g s for the board on %s" % (SERIAL_WAIT_S, board.pty) in said
    assert "is serving" in said and "not serving after" not in said


async def test_a_board_that_starts_after_the_wait_brings_list_changed(serial_rig, installed_wheel, tmp_path):
    """A board whose firmware starts later than the wait (a maker's module that takes its
    time): the first listing has the bridge's tools alone and the log says why; the
    board's come with list_changed."""
    slow = tmp_path / "slow_app.py"
    slow.write_text("import time\n\ndef register(server, board):\n    time.sleep(%d)\n" % (SERIAL_WAIT_S + 3))
    board = serial_rig.flashed(tmp_path, "slow", app=str(slow))
    changed = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    board.start()
    try:
        params, log = serial_only(tmp_path, installed_wheel, board.pty)
        async with Client(params, read_timeout_seconds=READ_TIMEOUT, mode="legacy", message_handler=on_message) as client:
            first = {tool.name for tool in (await client.list_tools()).tools}
            assert "bridge__list_devices" in first and not any(name.startswith(ALIAS) for name in first), first
            assert "the board on %s is not serving after %g s" % (board.pty, SERIAL_WAIT_S) in log.read_text()
            with anyio.fail_after(READ_TIMEOUT):
                while True:
                    await changed.wait()
                    changed = anyio.Event()
                    names = {tool.name for tool in (await client.list_tools()).tools}
                    if ALIAS + "__get_device_status" in names:
                        break
    finally:
        board.stop()
