"""`bridge --serial PORT`: the first tools/list holds the board. A client that lists once (as
many do, right after they connect) gets the board's tools: the first listing waits for the
boards named with --serial (tools/bridge/slots.py's SERIAL_WAIT_S, said in the log); a
board that comes after that wait is announced with list_changed. The board is the unchanged
firmware's serial session behind a pty (tests/support/serialfake.py), the client the
official SDK's over the bridge's stdio."""

import sys

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support import ROOT
from tests.support.serialfake import SerialFake
from tools.bridge.slots import SERIAL_WAIT_S

pytestmark = [pytest.mark.timeout(120), pytest.mark.anyio]
CONFIG = {"board": "generic", "chip": "esp32", "device_id": "5e:00:00:00:00:07",
          "parts": [{"type": "relay", "name": "lamp", "pin": 2}, {"type": "pwm", "name": "fan", "pin": 4}]}
ALIAS = "dev-000007"
READ_TIMEOUT = 60


def bridge(tmp_path, port):
    log = tmp_path / "bridge.log"
    params = StdioServerParameters(command="sh", cwd=ROOT, env={"BRIDGE_LOG": str(log)}, args=[
        "-c", 'exec "$@" 2>>"$BRIDGE_LOG"', "sh", sys.executable, "-m", "tools.bridge", "--serial", port])
    return params, log


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_first_listing_holds_the_board(tmp_path, mode):
    with SerialFake(tmp_path, CONFIG) as board:
        params, log = bridge(tmp_path, board.pty)
        async with Client(params, read_timeout_seconds=READ_TIMEOUT, mode=mode) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {ALIAS + "__lamp_turn_on", ALIAS + "__fan_set_level", "bridge__list_devices"} <= names, (
                names, log.read_text(), board.log())
            called = await client.call_tool(ALIAS + "__lamp_turn_on", {})
            assert not called.is_error and called.content[0].text == "true"
    said = log.read_text()
    assert "waiting up to %g s for the board on %s" % (SERIAL_WAIT_S, board.pty) in said
    assert "is serving" in said and "not serving after" not in said


async def test_a_board_that_comes_after_the_wait_brings_list_changed(tmp_path):
    """The firmware starts later than the wait: the first listing has the bridge's tools
    alone and says why in the log; the board's come with list_changed."""
    changed = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    with SerialFake(tmp_path, CONFIG, start_delay=SERIAL_WAIT_S + 2) as board:
        params, log = bridge(tmp_path, board.pty)
        async with Client(params, read_timeout_seconds=READ_TIMEOUT, mode="legacy",
                          message_handler=on_message) as client:
            first = {tool.name for tool in (await client.list_tools()).tools}
            assert "bridge__list_devices" in first and not any(name.startswith(ALIAS) for name in first), first
            assert "the board on %s is not serving after %g s" % (board.pty, SERIAL_WAIT_S) in log.read_text()
            with anyio.fail_after(READ_TIMEOUT):
                await changed.wait()
                while True:
                    names = {tool.name for tool in (await client.list_tools()).tools}
                    if ALIAS + "__lamp_turn_on" in names:
                        break
                    changed = anyio.Event()
                    await changed.wait()
