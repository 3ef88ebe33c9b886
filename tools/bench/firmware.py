"""The heap the whole firmware uses on MicroPython: make bench's second table.

Stages the device files for the host board as `make deploy` does (tools.board.deploy.stage,
into a temporary folder), boots the staged firmware in the MicroPython unix port against
the local backend on loopback (hello, initialize, every tools/list page), makes make sim's
tool calls (tools.sim.demo.CALLS) and reads the heap from inside: self.get_system_info runs
gc.collect(), then reports gc.mem_alloc() as heap_used. Then it bisects the smallest
`-X heapsize` with which the firmware still connects and answers.
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
from tools.sim.demo import CALLS, DemoFailed, call_tools, stop_process, wait_ready

BOARD = "host"
HWSIM = os.path.join(deploy.ROOT, "tools", "sim", "hwsim")
HEAPSIZE = 512 * 1024  # the run whose heap figures are reported: ample
HEAPSIZE_STEP = 4 * 1024  # the bisection stops this close to the smallest working heap
RUN_TIMEOUT = 5.0  # one boot, onboarding and the calls (about 0.5 s); a starved link retries forever
SIMULATED_MODULES = ("hwsim", "machine", "esp32", "network", "camera", "neopixel")


class FirmwareFailed(Exception):
    """The firmware did not connect or did not answer; the message has its output."""


def stage_firmware(stage_dir):
    """The host board's files, compiled and laid out as `make deploy` copies them."""
    config = {"wifi": {"ssid": "", "password": ""}, "url": "", "token": "", "board": BOARD}
    return deploy.stage(deploy.ROOT, BOARD, stage_dir, config, deploy.mpy_cross_command(), lambda line: None)


def firmware_env(stage_dir):
    """The board's module path: its / and /lib, then the simulated hardware."""
    return micropython_env([stage_dir, os.path.join(stage_dir, "lib"), HWSIM])


async def run_firmware(micropython, stage_dir, heapsize):
    """Boot the staged firmware with `heapsize` bytes of heap, onboard it and make the
    CALLS; returns the heap in use (bytes) after onboarding and after the calls, as
    get_system_info reports it. Raises FirmwareFailed."""
    token = secrets.token_hex(8)
    said = []
    backend = Backend(token, host="127.0.0.1", out=said.append, request_timeout=RUN_TIMEOUT)
    await backend.start()
    with tempfile.TemporaryDirectory(prefix="umcp-bench-") as cwd, \
            open(os.path.join(cwd, "device.log"), "w+") as device_log:
        config = {"wifi": {"ssid": "", "password": ""}, "board": BOARD, "token": token,
                  "url": "ws://127.0.0.1:%d/xiaozhi/v1/" % backend.port}
        with open(os.path.join(cwd, "config.json"), "w") as sink:
            json.dump(config, sink)
        firmware = subprocess.Popen(
            [micropython, "-X", "heapsize=%d" % heapsize, os.path.join(stage_dir, "main.py")],
            cwd=cwd, env=firmware_env(stage_dir), stdin=subprocess.DEVNULL, stdout=device_log,
            stderr=subprocess.STDOUT)
        try:
            return await asyncio.wait_for(_session(backend, firmware, said.append), RUN_TIMEOUT)
        except (DemoFailed, asyncio.TimeoutError) as error:
            device_log.seek(0)
            raise FirmwareFailed("%s\n%s\n%s" % (error or "timed out after %g s" % RUN_TIMEOUT,
                                                 "\n".join(said), device_log.read())) from None
        finally:
            stop_process(firmware)
            await backend.close()


async def _session(backend, firmware, out):
    device = await wait_ready(backend, firmware)
    connected = await _heap_used(backend, device)
    if await call_tools(backend, device, out):
        raise DemoFailed("a tool call failed")
    return {"tools": len(device.tools), "connected": connected, "after_calls": await _heap_used(backend, device)}


async def _heap_used(backend, device):
    result = await backend.call(device, "self.get_system_info")
    if result is None or result.get("isError"):
        raise DemoFailed("self.get_system_info failed")
    return json.loads(result["content"][0]["text"])["heap_used"]


async def smallest_heapsize(micropython, stage_dir, works=HEAPSIZE):
    """Bisect between 0 and `works` (a heap size the firmware ran with) down to
    HEAPSIZE_STEP; returns (the smallest size that ran, runs made)."""
    fails, runs = 0, 0
    while works - fails > HEAPSIZE_STEP:
        middle = (fails + works) // 2 // HEAPSIZE_STEP * HEAPSIZE_STEP or HEAPSIZE_STEP
        runs += 1
        try:
            await run_firmware(micropython, stage_dir, middle)
            works = middle
        except FirmwareFailed:
            fails = middle
    return works, runs


def simulated_modules_heap(micropython):
    """Heap that importing tools/hwsim's modules holds: the board's machine, esp32, ...
    are C modules in flash, not heap; under the unix port they are Python."""
    script = ("import gc\ngc.collect()\nbase = gc.mem_alloc()\nimport %s\ngc.collect()\n"
              "print(gc.mem_alloc() - base)\n" % ", ".join(SIMULATED_MODULES))
    env = micropython_env([HWSIM])
    done = subprocess.run([micropython, "-c", script], env=env, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)
    if done.returncode != 0:
        raise FirmwareFailed(done.stdout + done.stderr)
    return int(done.stdout)


def measure(micropython):
    """Every figure of the table, as a dict; raises FirmwareFailed or deploy.DeployError."""
    stage_dir = tempfile.mkdtemp(prefix="umcp-bench-stage-")
    try:
        stage_firmware(stage_dir)
        figures = asyncio.run(run_firmware(micropython, stage_dir, HEAPSIZE))
        figures["smallest_heapsize"], figures["bisect_runs"] = asyncio.run(
            smallest_heapsize(micropython, stage_dir))
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)
    figures["heapsize"] = HEAPSIZE
    figures["simulated_modules"] = simulated_modules_heap(micropython)
    figures["calls"] = [name for _, name, _ in CALLS]
    return figures
