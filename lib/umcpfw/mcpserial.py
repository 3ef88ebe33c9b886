"""The firmware served over the board's serial line instead of a network: what
`python -m tools.bridge --serial PORT` starts through the raw REPL once Ctrl-C stopped
main.py (`from umcpfw.mcpserial import run` then `run()`). The application is built as
at boot (settings, board and parts, tools and resources, the maker's module) with
nothing that connects: no Wi-Fi, no server, no OTA check, no MCP endpoint links, no
HTTP endpoint; its tools are served over mcplink.serial until Ctrl-C (the bridge's
way out, after which it soft-resets the board so that main.py runs again). A
config.json the firmware cannot start with is printed as main.py prints it.
Loaded only then: the firmware itself never imports this module or mcplink.serial."""

import asyncio
import sys

from umcp.compat import call_then_forget, remove_log_sink
from umcpfw.app import VERSION, Application, ConfigError

CONFIG_FILE = "config.json"
# config.json's ways to reach a server or to be reached: not built for this session
# (their code stays off the heap).
_CONNECTING = ("ota_url", "url", "token", "mcp_endpoint", "mcp_http")
_MICROPYTHON = sys.implementation.name == "micropython"


def run(config_file=CONFIG_FILE):
    """Serve the firmware's tools on stdin and stdout until the line ends or Ctrl-C (raised
    again). False when config.json is unusable: its one line is printed."""
    try:
        config = call_then_forget("umcpfw.boot", "read_config", config_file)
        for key in _CONNECTING:
            config.pop(key, None)
        app = Application(config, serial=True)
    except ConfigError as e:
        print("umcp cannot start:", e)
        return False
    if not _MICROPYTHON:
        asyncio.run(serve(app))
        return True
    asyncio.new_event_loop()  # what an earlier run left queued goes
    try:
        asyncio.get_event_loop().run_until_complete(serve(app))
    finally:
        remove_log_sink(app.log_ring.add)
        asyncio.new_event_loop()
    return True


async def serve(app, reader=None, writer=None):
    """The Application `app`'s tools over mcplink.serial, on `reader` and `writer` (default:
    stdin and stdout), with the board's upkeep and the status screen, until the line ends."""
    from mcplink.serial import SerialLink

    if reader is None:
        reader, writer = await _stdio()
    app.link = link = SerialLink(app.server, reader, writer,
                                 {"version": VERSION, "device_id": app.device_id,
                                  "board": app.board.name})
    tasks = []
    if app.status_view is not None:
        tasks.append(asyncio.create_task(app.status_view.run()))
    upkeep = app.board.upkeep(app.server)
    if upkeep is not None:
        tasks.append(asyncio.create_task(upkeep))
    try:
        await link.run()
    finally:
        for task in tasks:
            task.cancel()
        tasks = None
        await app.stop()


async def _stdio():
    """(reader, writer) on this interpreter's stdin and stdout, as bytes."""
    if not hasattr(asyncio, "get_running_loop"):  # MicroPython: a stream over stdin itself
        return asyncio.StreamReader(sys.stdin.buffer), sys.stdout.buffer
    reader = asyncio.StreamReader()  # CPython: stdin through a pipe transport
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                       sys.stdin.buffer)
    return _PipeReader(reader), sys.stdout.buffer


class _PipeReader:
    """CPython: asyncio's StreamReader with the readinto() of MicroPython's."""

    def __init__(self, reader):
        self.reader = reader

    async def readinto(self, view):
        data = await self.reader.read(len(view))
        view[:len(data)] = data
        return len(data)
