"""The session a board lives through, as a backend drives it, and the heap it reads from
inside: the whole-firmware heap tables of make bench (tools/bench/firmware.py) and the
tests' heap guard (tests/firmware/test_heap_budget.py) drive the same one.

run() boots a simulated board (tools.sim.board.SimBoard) of the host board with a heap
size against the local backend on loopback and drives full_session(): hello, initialize,
every tools/list page (8000-byte limit), every common tool and the board's (a photo among
them; an upgrade from a URL that answers 404, so the download code runs but nothing
reboots), argument errors, then RECONNECTS reconnections each followed by a call, a
reboot that keeps the settings, and a restart with 1500-byte pages. The heap is read from
inside: self.get_system_info runs gc.collect(), then reports gc.mem_alloc() as heap_used.
"""

import asyncio
import json
import os
import secrets
import socket

from ..backend import Backend
from ..hub.endpoint import at_endpoint
from ..hub.xiaozhi import DeviceError, DeviceGone
from .board import BoardFailed, SimBoard, config_for
from .calls import CALLS

BOARD = "host"
RUN_TIMEOUT = 8.0  # one request, or one run of a probe script
SESSION_TIMEOUT = 40.0  # the whole session (a few seconds: three boots); a starved link retries forever
RECONNECTS = 3  # after a close, an abort and a server restart
SMALL_PAGES = 1500  # the page limit of the last boot (an MQTT modem's size)
UPGRADE_OUTCOME = "HTTP 404"  # the log message that ends the upgrade of MORE_CALLS
# The volume, brightness and theme the calls below set, which every boot must restore.
SETTINGS_SET = (30, 40, "dark")
# Calls with wrong arguments: each is answered -32602 and changes nothing. (tool, arguments)
ARGUMENT_ERRORS = [
    ("self.audio_speaker.set_volume", {"volume": 150}),
    ("self.audio_speaker.set_volume", {"volume": "loud"}),
    ("self.audio_speaker.set_volume", {}),
    ("self.screen.set_theme", {"theme": "dark", "colour": "red"}),
    ("self.no_such_tool", {}),
]
# Reconnections come quickly; nothing else differs from a board's defaults.
LINK_CONFIG = {"backoff_min": 0.05, "backoff_max": 0.2}
# The full session's calls after make sim's CALLS: every other common tool and the host
# board's own (self.reboot apart: it ends the process). (tool, arguments)
MORE_CALLS = [
    ("self.screen.set_brightness", {"brightness": 40}),
    ("self.screen.set_theme", {"theme": "dark"}),
    ("self.camera.get_photo", {}),
    ("self.screen.get_info", {}),
    ("self.assets.set_download_url", {"url": "http://assets.example/pack.bin"}),
    ("self.led_strip.set_color", {"red": 1, "green": 2, "blue": 3}),
    ("self.led_strip.get_state", {}),
    ("self.host.get_temperature", {}),
    ("self.upgrade_firmware", {"url": "http://127.0.0.1:%(http_port)d/ota/missing.bin",
                               "sha256": "0" * 64}),
]
# The sources as they are; the .mpy files make deploy copies; the same in a ROMFS image
# (make deploy ROMFS=1), run from the image in place; the .mpy files and the ROMFS image with
# the board's own MCP endpoint enabled (config.json's mcp_http), used by a client during the
# session (HTTP_EXCHANGES).
HTTP_TOKEN = "bench-http-token"



class SessionFailed(BoardFailed):
    """The firmware did not connect or did not answer; the message has its output."""


async def run(micropython, runtime, heapsize, stage=None, entry=None, files=None, long_calls=0,
              endpoint=False, http=False):
    """Boot the host board's firmware (SimBoard's `runtime`, `stage` and `entry`; `files`:
    {name: text} written into the board's folder first) with `heapsize` bytes of heap and
    drive full_session; returns (its figures, the firmware's output lines): the heap in use
    (bytes, as get_system_info reports it) after onboarding ("connected") and after the
    session ("after_calls"), and with `long_calls` after that many more plain calls
    ("after_long"); with `endpoint`, the board at the backend's MCP endpoint too, offered
    its default tools; with endpoint="info", every tool, so that get_system_info answers
    through it ("endpoint_call": the heap in use during a call through the endpoint); with
    `http`, config.json's mcp_http enabled and a client using it in the session
    (http="listening": enabled, no client). Raises SessionFailed."""
    token = secrets.token_hex(8)
    said = []
    backend = Backend(token, host="127.0.0.1", out=said.append, request_timeout=RUN_TIMEOUT)
    await backend.start()
    options = dict(LINK_CONFIG)
    http_port = None
    if http:
        http_port = _free_port()
        options["mcp_http"] = {"port": http_port, "token": HTTP_TOKEN, "bind": "127.0.0.1"}
    if endpoint:
        options["mcp_endpoint"] = backend.endpoint_url
    if endpoint == "info":
        options["mcp_endpoint_tools"] = ["self."]
    board = SimBoard(session_config(backend, **options), runtime, micropython, heapsize, stage=stage,
                     entry=entry)
    try:
        # What the board printed is read back as text whatever bytes it holds: a bench run
        # of the firmware table died once on an invalid UTF-8 byte in it.
        with open(os.path.join(board.root, "device.log"), "w+", errors="replace") as device_log:
            board.log = device_log
            for name, text in (files or {}).items():
                with open(os.path.join(board.root, name), "w") as sink:
                    sink.write(text)
            try:
                figures, backend = await asyncio.wait_for(
                    full_session(backend, board, said.append, long_calls, endpoint,
                                 None if http == "listening" else http_port),
                    SESSION_TIMEOUT + long_calls / 100)
            except (BoardFailed, DeviceError, DeviceGone, asyncio.TimeoutError) as error:
                board.stop()
                device_log.seek(0)
                raise SessionFailed("%s\n%s\n%s" % (error or "timed out after %g s" % SESSION_TIMEOUT,
                                                     "\n".join(said), device_log.read())) from None
            board.stop()
            device_log.seek(0)
            return figures, device_log.read().splitlines()
    finally:
        board.close()
        await backend.close()


def session_config(backend, **options):
    """config.json for the host board against `backend` (and `options`, e.g. max_payload),
    as a user writes it."""
    config = config_for(BOARD, "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port, backend.front.server.token,
                        wifi={"ssid": "", "password": ""})
    config.update(options)
    return config


class Onboarded:
    """Each device the backend finishes onboarding, in turn (a listener on its events)."""

    def __init__(self):
        self.queue = asyncio.Queue()
        self.providers = asyncio.Queue()  # the same board at the MCP endpoint
        self.logs = []  # the data of every notifications/message

    def watch(self, backend):
        backend.listeners.append(self._event)
        return backend

    def _event(self, event, device, data):
        if event == "ready":
            (self.providers if at_endpoint(device) else self.queue).put_nowait(device)
        elif event == "failed":
            self.queue.put_nowait(SessionFailed("onboarding failed: %s" % data))
        elif event == "notification" and data.get("method") == "notifications/message":
            self.logs.append(str((data.get("params") or {}).get("data")))

    async def logged(self, board, fragment):
        """Wait for a log message holding `fragment` (an upgrade's outcome)."""
        waited = 0.0
        while not [line for line in self.logs if fragment in line]:
            if not board.running or waited > RUN_TIMEOUT:
                raise SessionFailed("no log message %r came; they were %s" % (fragment, self.logs))
            await asyncio.sleep(0.02)
            waited += 0.02

    async def next(self, board, queue=None):
        """The next device to be ready over the xiaozhi link (`queue`: of `providers`, at the
        MCP endpoint); SessionFailed if the firmware exits first."""
        queue = queue or self.queue
        waited = 0.0
        while queue.empty():
            if not board.running:
                raise SessionFailed("the firmware exited with status %s" % board.returncode)
            if waited > SESSION_TIMEOUT:
                raise SessionFailed("the device did not finish onboarding within %d s" % SESSION_TIMEOUT)
            await asyncio.sleep(0.02)
            waited += 0.02
        device = queue.get_nowait()
        if isinstance(device, Exception):
            raise device
        return device


async def full_session(backend, board, out, long_calls=0, endpoint=False, http_port=None):
    """The session a board lives through, as a backend drives it: hello, initialize, every
    tools/list page at 8000 bytes (both lists), every common and board tool, argument
    errors, a photo; reconnections after a close, an abort and a server restart; a reboot
    (self.reboot) and the settings it kept; a restart with 1500-byte pages (every page
    again), the settings kept again. With `endpoint` the board is at the backend's MCP
    endpoint too, and a call goes through it (run_firmware); with `http_port`, a client of
    the board's HTTP endpoint makes its exchanges (http_exchanges). Returns (figures, the
    backend now serving)."""
    onboarded = Onboarded()
    onboarded.watch(backend)
    board.start()  # config.json: board.config
    device = await onboarded.next(board)
    provider = await onboarded.next(board, onboarded.providers) if endpoint else None
    connected = await _heap_used(backend, device)
    endpoint_call = await _heap_used(backend, provider) if endpoint == "info" else None
    if provider is not None:  # before the calls below, which set the volume the boots keep
        await _call(backend, provider, "self.audio_speaker.set_volume", {"volume": 45})
    await _all_pages(device)
    calls = [(name, arguments) for _, name, arguments in CALLS] + [
        (name, json.loads(json.dumps(arguments).replace("%(http_port)d", str(backend.http_port))))
        for name, arguments in MORE_CALLS]
    for name, arguments in calls:
        await _call(backend, device, name, arguments)
    # The upgrade answered at once; its download (of a missing image) ends in the background.
    await onboarded.logged(board, UPGRADE_OUTCOME)
    if http_port:  # after the upgrade's outcome: a log outside a call goes to the running call's client
        import httpx2

        try:
            http_in_use = await http_exchanges(http_port)
        except httpx2.HTTPError as e:  # the board closed the connection (its heap ran out)
            raise SessionFailed("HTTP: %r" % e)
    for name, arguments in ARGUMENT_ERRORS:
        await _refused(device, name, arguments)
    # Reconnections: the backend closes; the TCP connection is cut without a close frame;
    # the backend restarts on the same ports.
    await device.connection.close(1001, "bench: reconnect")
    device = await onboarded.next(board)
    device.connection.transport.abort()
    device = await onboarded.next(board)
    backend = onboarded.watch(await _restart(backend))
    device = await onboarded.next(board)
    await _call(backend, device, "self.get_device_status", {})
    # A reboot: the reply leaves first, then machine.reset(), and the board boots again.
    boots = board.boots
    await _call(backend, device, "self.reboot", {})
    await _rebooted(board, boots)
    device = await onboarded.next(board)
    await _check_settings(backend, device)
    # Powered off and on with another page limit: every page at 1500 bytes.
    board.stop()
    board.config = dict(board.config, max_payload=SMALL_PAGES)
    board.start()
    device = await onboarded.next(board)
    await _all_pages(device)
    await _check_settings(backend, device)
    figures = {"tools": len(device.tools), "connected": connected,
               "after_calls": await _heap_used(backend, device), "calls": len(calls),
               "argument_errors": len(ARGUMENT_ERRORS), "reconnects": RECONNECTS, "boots": board.boots}
    if endpoint_call is not None:
        figures["endpoint_call"] = endpoint_call
    if http_port:
        figures["http_in_use"] = http_in_use
    if long_calls:  # a board left running: the heap must not creep
        for n in range(long_calls):
            if n % 2:
                await _call(backend, device, "self.get_device_status", {})
            else:
                await _call(backend, device, "self.audio_speaker.set_volume", {"volume": n % 101})
        figures["after_long"] = await _heap_used(backend, device)
        figures["long_calls"] = long_calls
    return figures, backend


async def _rebooted(board, boots):
    """Wait for the board to boot again after machine.reset() (SimBoard boots it again)."""
    waited = 0.0
    while board.boots == boots:
        if not board.running:
            raise SessionFailed("the firmware exited with status %s, not the reset's" % board.returncode)
        if waited > RUN_TIMEOUT:
            raise SessionFailed("no reset within %g s of self.reboot" % RUN_TIMEOUT)
        await asyncio.sleep(0.02)
        waited += 0.02


async def _restart(backend):
    """The backend stops (its connections end) and starts again on the same ports."""
    port, http_port, token = backend.port, backend.http_port, backend.front.server.token
    out = backend.out
    await backend.close()
    backend = Backend(token, host="127.0.0.1", port=port, http_port=http_port, out=out,
                      request_timeout=RUN_TIMEOUT)
    await backend.start()
    return backend


async def _all_pages(device):
    """Both tools/list walks, every page (the backend's onboarding did the plain one)."""
    tools = await device.list_tools(with_user_tools=True)
    if len(tools) <= len(device.tools):
        raise SessionFailed("withUserTools listed %d tools, the plain list %d" % (len(tools), len(device.tools)))


async def _refused(device, name, arguments):
    """A call whose arguments are wrong: the device answers -32602 (2024-11-05)."""
    try:
        result = await device.call_tool(name, arguments)
    except DeviceError as error:
        if error.code != -32602:
            raise SessionFailed("%s %s: error %s, not -32602" % (name, arguments, error.code))
        return
    raise SessionFailed("%s %s was not refused: %s" % (name, arguments, result))


async def _check_settings(backend, device):
    """What the session set is what the board restored at boot."""
    result = await backend.call(device, "self.get_device_status")
    if result is None or result.get("isError"):
        raise SessionFailed("self.get_device_status failed")
    status = json.loads(result["content"][0]["text"])
    kept = (status["audio_speaker"]["volume"], status["screen"]["brightness"], status["screen"]["theme"])
    if kept != SETTINGS_SET:
        raise SessionFailed("settings after a restart: %s, not %s" % (kept, SETTINGS_SET))


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def http_exchanges(port):
    """What a client of the board's own endpoint does in the session: a 2026-07-28 discover,
    list and call; a legacy session (initialize, its GET stream opened and left, list, call,
    DELETE); raises SessionFailed when an answer is not what it should be. Returns the heap in
    use as self.get_system_info reports it through the endpoint, called last on the
    legacy session while its GET stream is open (the endpoint's code loaded, two
    connections, a request being answered)."""
    import httpx2

    url = "http://127.0.0.1:%d/mcp" % port
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {"Authorization": "Bearer " + HTTP_TOKEN, "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}

    def expect(response, what):
        if response.status_code not in (200, 202, 204) or b'"error"' in response.content:
            raise SessionFailed("HTTP %s: %d %s" % (what, response.status_code, response.text[:300]))

    async with httpx2.AsyncClient(timeout=RUN_TIMEOUT) as client:
        for method, params in (("server/discover", {}), ("tools/list", {}),
                               ("tools/call", {"name": "self_get_device_status"})):
            extra = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
            if method == "tools/call":
                extra["Mcp-Name"] = params["name"]
            body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": dict(params, _meta=meta)}
            expect(await client.post(url, json=body, headers=dict(headers, **extra)), method)
        init = await client.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "bench", "version": "1"}}})
        expect(init, "initialize")
        session = dict(headers, **{"Mcp-Session-Id": init.headers["mcp-session-id"],
                                   "MCP-Protocol-Version": "2025-11-25"})
        expect(await client.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"}),
               "initialized")
        async with client.stream("GET", url, headers=dict(session, Accept="text/event-stream")) as stream:
            if stream.status_code != 200:
                raise SessionFailed("HTTP GET stream: %d" % stream.status_code)
            # (a call that changes nothing: the session checks the settings it set later)
            for n, (method, params) in enumerate((("tools/list", {}), ("tools/call", {
                    "name": "self_get_device_status", "arguments": {}}))):
                expect(await client.post(url, headers=session, json={
                    "jsonrpc": "2.0", "id": n + 2, "method": method, "params": params}), method)
            info = await client.post(url, headers=session, json={
                "jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "self_get_system_info", "arguments": {}}})
            expect(info, "tools/call self_get_system_info")
        expect(await client.delete(url, headers=session), "DELETE")
    return json.loads(info.json()["result"]["content"][0]["text"])["heap_used"]


async def _call(backend, device, name, arguments):
    result = await backend.call(device, name, arguments)
    if result is None or result.get("isError"):
        raise SessionFailed("%s failed: %s" % (name, result))


async def _heap_used(backend, device):
    result = await backend.call(device, "self.get_system_info")
    if result is None or result.get("isError"):
        raise SessionFailed("self.get_system_info failed")
    return json.loads(result["content"][0]["text"])["heap_used"]

