"""What make bench's heap tables share: the MicroPython binaries, the firmware staged in each
form, a bench script run inside MicroPython, and the bisection of the smallest heap.

A form is a Stage: the folder it is staged in (None: the sources), the SimBoard runtime
that boots it and its entry script. stage_form() lays out the host board's forms: "py",
"mpy" (as make deploy stages them), "romfs" (the same in a ROMFS image read into the
heap: the unix port has no flash), "mpy_board" and "romfs_board" (beside the simulated
hardware frozen in: a build of unixhwsimmanifest.py) and "frozen" (unixfrozenmanifest.py).

smallest() bisects the smallest heap that completes a run, given the run as a coroutine
function of the heap size; `repeat` counts a size as passing only when it passed that many
times in a row (the figure varies with where the collector finds room). run_script() runs
one of tools/bench/scripts/ (compiled in make test like the firmware) in a folder of
staged files.
"""

import collections
import contextlib
import io
import os
import shutil
import subprocess

from ..mpy import micropython_env
from ..paths import ROOT
from ..sim.board import STAGED_HWSIM, stage

HEAPSIZE = 512 * 1024  # the run whose heap figures are reported: ample
HEAPSIZE_STEP = 4 * 1024  # the bisection stops this close to the smallest working heap
FINE_STEP = 512  # where 4 KB steps would hide what a target looks at
RUN_TIMEOUT = 8.0  # one run of a probe script
SCRIPTS = os.path.join(ROOT, "tools", "bench", "scripts")
# The unix-port builds the measuring forms need: the firmware and the simulated hardware
# frozen in, or the simulated hardware alone (a build with the firmware frozen too holds
# the firmware's names as qstrs in its image, and the staged .mpy files loaded beside it
# then leave them off the heap: about 20 KB of a 32-bit boot, which a board running .mpy
# files does not). The repository keeps these manifests, not a build script.
FROZEN_MANIFEST = os.path.join(ROOT, "tools", "bench", "unixfrozenmanifest.py")
HWSIM_MANIFEST = os.path.join(ROOT, "tools", "bench", "unixhwsimmanifest.py")
ROMFS_IMAGE = "umcp.romfs"  # beside main.py in a ROMFS form's folder; scripts/romfsboot.py reads it
ROMFS_BOOT = "romfsboot.py"
IMAGE_HEAP = "romfs image heap "  # what romfsboot.py prints: the image's bytes on the heap
ARGUMENT = "argument.txt"  # a script's argument, beside it (run_script)

Stage = collections.namedtuple("Stage", "folder runtime entry")
FORMS = {  # form: (SimBoard runtime, entry)
    "py": ("micropython", os.path.join(ROOT, "firmware", "main.py")),
    "mpy": ("mpy", "main.py"), "mpy_http": ("mpy", "main.py"),
    "romfs": ("mpy", ROMFS_BOOT), "romfs_http": ("mpy", ROMFS_BOOT),
    "mpy_board": ("mpy-frozen-hardware", "main.py"), "romfs_board": ("mpy-frozen-hardware", ROMFS_BOOT),
    "frozen": ("frozen", "main.py"),
}


class BenchFailed(Exception):
    """A bench run did not complete; the message has its output."""


def default_micropython():
    """UMCP_MICROPYTHON, else the venv's MicroPython (the 64-bit unix port from PyPI)."""
    return os.environ.get("UMCP_MICROPYTHON") or os.path.join(ROOT, ".venv", "bin", "micropython")


def default_frozen():
    """UMCP_MICROPYTHON_FROZEN: a unix port built with FROZEN_MANIFEST, or None."""
    return os.environ.get("UMCP_MICROPYTHON_FROZEN") or None


def default_hardware_frozen():
    """UMCP_MICROPYTHON_HWSIM: a unix port built with HWSIM_MANIFEST (the simulated hardware
    alone frozen: the measuring form), or None."""
    return os.environ.get("UMCP_MICROPYTHON_HWSIM") or None


def word_bits(micropython):
    """32 or 64: the word size of a MicroPython binary (an ESP32 is 32-bit)."""
    done = subprocess.run([micropython, "-c", "import sys\nprint(64 if sys.maxsize > 2**32 else 32)"],
                          env=micropython_env([]), capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if done.returncode != 0:
        raise BenchFailed(done.stdout + done.stderr)
    return int(done.stdout)


def stage_form(form, folder, board="host"):
    """`board` staged in `folder` as `form` (FORMS) is; returns its Stage (folder None for
    the sources). Raises deploy.DeployError."""
    runtime, entry = FORMS[form]
    if form == "py":
        return Stage(None, runtime, entry)
    if form == "frozen":  # main.py alone: make deploy copies it beside a frozen build
        os.makedirs(folder, exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, "firmware", "main.py"), os.path.join(folder, "main.py"))
        return Stage(folder, runtime, entry)
    stage(folder, board, runtime)
    if form.startswith("romfs"):
        romfs_image(folder)
    return Stage(folder, runtime, entry)


def romfs_image(folder):
    """Stage as make deploy ROMFS=1 does: the staged lib/ in a ROMFS image (as mpremote
    romfs build makes it), main.py beside, and the boot script that mounts the image."""
    from mpremote.romfs import make_romfs

    tree = os.path.join(folder, "romfs")
    os.makedirs(tree)
    shutil.move(os.path.join(folder, "lib"), os.path.join(tree, "lib"))
    with contextlib.redirect_stdout(io.StringIO()):  # it lists every file
        image = make_romfs(tree, mpy_cross=False)
    shutil.rmtree(tree)
    with open(os.path.join(folder, ROMFS_IMAGE), "wb") as sink:
        sink.write(image)
    add_script(folder, ROMFS_BOOT)


def add_script(folder, name):
    """tools/bench/scripts/`name` copied into `folder` (a board's files): run from there, its
    module path is a board's."""
    shutil.copyfile(os.path.join(SCRIPTS, name), os.path.join(folder, name))
    return name


def run_script(micropython, name, folder, argument=None, path=("lib", STAGED_HWSIM), kind=int):
    """tools/bench/scripts/`name` run in `micropython` in `folder` (staged files; `path`
    relative to it), its argument (a Python literal) in argument.txt there (a unix port
    refuses a command-line argument of 256 characters or more); returns the words it
    printed, each made `kind`. Raises BenchFailed."""
    add_script(folder, name)
    given = os.path.join(folder, ARGUMENT)
    with open(given, "w") as sink:
        sink.write(repr(argument))
    try:
        done = subprocess.run([micropython, name], cwd=folder, env=micropython_env(list(path)),
                              capture_output=True, text=True, timeout=RUN_TIMEOUT)
    finally:
        os.remove(os.path.join(folder, name))
        os.remove(given)
    if done.returncode != 0:
        raise BenchFailed(done.stdout + done.stderr)
    return [kind(word) for word in done.stdout.split()]


async def smallest(attempt, works=HEAPSIZE, fails=0, step=HEAPSIZE_STEP, repeat=1, failure=Exception):
    """The smallest heap size, a multiple of `step` between `fails` (too small, or 0) and
    `works` (one that ran), with which `await attempt(size)` completes `repeat` times in a
    row without raising `failure`; returns (that size, the runs made). Returns `works`
    itself when nothing below it was tried."""
    runs = 0
    while works - fails > step:
        middle = (fails + works) // 2 // step * step or step
        try:
            for _ in range(repeat):
                runs += 1
                await attempt(middle)
            works = middle
        except failure:
            fails = middle
    return works, runs
