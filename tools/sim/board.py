"""One simulated board: the unchanged firmware in a child process, booted again after each
machine.reset() as a board boots again. The one launcher: `python -m tools.sim`, make sim
(tools.sim.demo), the tests (tests/support/firmwareharness.py) and every bench start
their boards with it (docs/simulator.md, "One simulated board in code").

    board = SimBoard(config_for(url=url, token=token), runtime="mpy", micropython=BIN)
    board.start()                        # config.json written, the form staged, booted
    device = await board.ready(backend)  # the backend's device once it is onboarded
    board.set_inputs({"levels": {"0": 0}})  # a button pressed, for the parts' simulation
    board.records(); board.stop(); board.close()   # what the drivers did; Ctrl-C; cleaned up

The runtime (RUNTIMES) says how the firmware runs: "cpython", "micropython", "mpy",
"mpy-frozen-hardware" or "frozen". The board's folder, `root`, is its "/" (config.json,
settings, the simulated flash); a staged form is copied into it as deploy copies it onto
a board. The entry is tools/sim/device.py, or `entry`. Standard library only.
"""

import asyncio
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from ..board import catalogue as catalogue_module
from ..childprocess import interrupt, own_process_group
from ..mpy import micropython_env
from ..paths import FIRMWARE, HWSIM, LIB, ROOT

RUNTIMES = ("cpython", "micropython", "mpy", "mpy-frozen-hardware", "frozen")
STAGED = ("mpy", "mpy-frozen-hardware")  # the runtimes that boot staged .mpy files
DEVICE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "device.py")
STAGED_HWSIM = "hwsim-mpy"  # in a staged folder: the simulated hardware's .mpy files (not a
# name Python could import: the folder would shadow the module hwsim)
INPUT_FILE = "hwsim-inputs.json"  # in the board's folder, read by tools/sim/device.py
RECORD_FILE = "hwsim.jsonl"
SETTINGS_FILE = "settings.json"
# A board that has not ended this long after its Ctrl-C is killed (and its boot goes
# unrecorded). The firmware's clean stop says goodbye on each link and service, up to 3 s
# each (umcpfw.app's _STOP_S): a grace of 3 s killed boards whose goodbye a busy machine
# slowed, in the middle of their stop.
STOP_GRACE_S = 10.0
# A second Ctrl-C after this long (longer than the firmware's goodbyes), as a user presses it
# again: the unix port without a GIL raises Ctrl-C from its signal handler wherever the C
# code is (MICROPY_ASYNC_KBD_INTR), and one that lands inside a garbage collection leaves
# the heap locked until the next one, so the firmware's next allocation raises MemoryError
# in its place and the Ctrl-C is lost (seen: "out of memory between connections" at 2 MB).
# A board raises it at a safe point.
STOP_AGAIN_S = 5.0
STOP_SETTLE_S = 0.1  # before the Ctrl-C (stop())
READY_TIMEOUT = 60.0
POLL_S = 0.05


class BoardFailed(Exception):
    """The board ended, or did not come online in time; the message says which."""


def config_for(board="host", url=None, token=None, **keys):
    """config.json as a maker writes it for a simulated board: the simulated network
    (simnet), the board, where to connect and `keys` (those given as None left out)."""
    config = {"wifi": {"ssid": "simnet", "password": ""}, "board": board}
    keys.update(url=url, token=token)
    config.update((key, value) for key, value in keys.items() if value is not None)
    return config


def reset_exit_code():
    """The exit status hwsim's machine.reset() ends the process with."""
    sys.path.insert(0, HWSIM)
    try:
        import machine  # the simulation, not a real board's module
    finally:
        sys.path.pop(0)
    return machine.RESET_EXIT_CODE


def check_runtime_options(parser, args):
    """The --micropython and --mpy options a command line shares (tools.sim, the demo)
    checked, the binary resolved to an absolute path (a relative path or a name on PATH: the
    firmware runs in the board's folder); parser.error() says what is wrong."""
    if args.mpy and not args.micropython:
        parser.error("--mpy needs --micropython (CPython does not load .mpy files)")
    if args.micropython:
        found = shutil.which(args.micropython)
        if found is None:
            parser.error("--micropython: %s is not an executable" % args.micropython)
        args.micropython = os.path.abspath(found)


def has_frozen_hardware(micropython):
    """Whether the unix port `micropython` has tools/sim/hwsim frozen in."""
    try:
        done = subprocess.run([micropython, "-c", "import machine\nmachine.sim_attach_i2c"],
                              env=micropython_env([]), capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def compile_hwsim(out_dir):
    """tools/sim/hwsim compiled into `out_dir` as make deploy compiles the firmware (beside
    .mpy firmware the simulated hardware is not compiled from source on the heap either: a
    board has it in C). Returns `out_dir`; raises deploy.DeployError."""
    from ..board import deploy

    os.makedirs(out_dir, exist_ok=True)
    for name in sorted(os.listdir(HWSIM)):
        if name.endswith(".py"):
            deploy.compile_mpy(os.path.join(HWSIM, name), os.path.join(out_dir, name[:-3] + ".mpy"), name[:-3])
    return out_dir


def stage(stage_dir, board, runtime="mpy"):
    """`board`'s files as make deploy stages them (.mpy under lib/, main.py at /) in
    `stage_dir`, and for "mpy" the simulated hardware compiled beside them; returns
    `stage_dir`. Raises deploy.DeployError."""
    from ..board import deploy

    config = config_for(board)
    deploy.stage(ROOT, board, stage_dir, config, deploy.mpy_cross_command(), lambda line: None)
    if runtime == "mpy":
        compile_hwsim(os.path.join(stage_dir, STAGED_HWSIM))
    return stage_dir


_staged = {}  # (board, runtime) -> a folder stage() filled, for this process's boards


def shared_stage(board, runtime):
    """A folder with `board` staged for `runtime`, made once per process (the sources do
    not change while it runs) and removed when it exits."""
    key = (board, runtime)
    if key not in _staged:
        folder = tempfile.mkdtemp(prefix="umcp-stage-")
        if not _staged:
            atexit.register(lambda: [shutil.rmtree(f, ignore_errors=True) for f in _staged.values()])
        try:
            stage(folder, board, runtime)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        _staged[key] = folder
    return _staged[key]


def write_inputs(root, inputs):
    """What the input pins, ADCs and sensors of the board in folder `root` read from now on
    (tools/sim/hwsim's siminputs: {"levels": {pin: level}, "adc": {pin: reading}, "dht":
    {pin: [t, h]}, "ds18b20": {pin: t}}; null: a sensor that stops answering), before it
    boots or while it runs: written whole, then renamed over the last, as the board reads it."""
    path = os.path.join(str(root), INPUT_FILE)
    with open(path + ".new", "w") as sink:
        json.dump(inputs, sink)
    os.replace(path + ".new", path)


def place_app(app, root):
    """A maker's module (a .py file, or a package's folder) into the board's folder as
    app.py or app/, as make deploy APP= does, replacing what was there; None: nothing."""
    if app is None:
        return
    for old in ("app.py", "app"):
        target = os.path.join(root, old)
        if os.path.isdir(target):
            shutil.rmtree(target)
        elif os.path.exists(target):
            os.remove(target)
    if os.path.isdir(app):
        shutil.copytree(app, os.path.join(root, "app"), ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copyfile(app, os.path.join(root, "app.py"))


class SimBoard:
    """A simulated board in a child process (the module's docstring says how)."""

    def __init__(self, config, runtime="cpython", micropython=None, heapsize=None, root=None,
                 stage=None, entry=None, app=None, log=None, say=None, catalogue=True):
        """`config`: config.json's content; `heapsize`: MicroPython's -X heapsize (bytes, or
        text such as "512k"); `log`: a file for the firmware's output (default: this
        process's stderr); `say(line)` hears what the launcher does (a boot, a reset)."""
        if runtime not in RUNTIMES:
            raise ValueError("runtime %r: one of %s" % (runtime, ", ".join(RUNTIMES)))
        if runtime != "cpython" and not micropython:
            raise ValueError("runtime %r needs a MicroPython unix port" % runtime)
        self.config = config
        self.catalogue = catalogue
        self.runtime = runtime
        self.micropython = micropython
        self.heapsize = heapsize
        self.stage_dir = stage
        self.entry = entry
        self.app = app
        self.log = log
        self.say = say or (lambda line: None)
        self._temporary = root is None
        self.root = root if root is not None else tempfile.mkdtemp(prefix="umcp-board-")
        self.process = None  # the firmware's current boot
        self.boots = 0
        self.returncode = None  # once it ended: 0 when stopped, else the firmware's status
        self._deployed = False
        self._stopping = False
        self._killed = False  # stop() had to kill it: not a clean stop
        self._ended = threading.Event()
        self._ended.set()  # not started yet
        self._lock = threading.Lock()
        self._reset_code = reset_exit_code()

    # -- starting and stopping

    def start(self):
        """Write config.json, copy the staged form in at the first start, boot; returns self.
        Raises deploy.DeployError if the form cannot be staged."""
        os.makedirs(self.root, exist_ok=True)
        if self.runtime in STAGED and not self._deployed:
            stage_dir = self.stage_dir or shared_stage(self.config.get("board", "host"), self.runtime)
            shutil.copytree(stage_dir, self.root, dirs_exist_ok=True)
            self.say("running the .mpy files make deploy would copy, staged in %s" % stage_dir)
        elif self.runtime == "frozen" and not self._deployed:
            # Beside a build with everything frozen, make deploy copies main.py alone.
            shutil.copyfile(os.path.join(FIRMWARE, "main.py"), os.path.join(self.root, "main.py"))
        self._deployed = True
        self.configure(self.config)
        place_app(self.app, self.root)
        self.app = None  # placed: a reboot keeps what the board has
        self.say("state dir %s" % self.root)
        with self._lock:
            self._stopping = self._killed = False
            self.returncode = None
            self._ended.clear()
            self._boot()
        threading.Thread(target=self._watch, name="simboard", daemon=True).start()
        return self

    def configure(self, config):
        """config.json (what a user would write before deploying) and, as make deploy writes
        it, its tool catalogue (tools.board.catalogue); read at the next boot. `catalogue`
        (the constructor's): True, for this config; False, none; a config, the catalogue an
        earlier deploy wrote for that one. A config the firmware cannot start with gets no
        catalogue: the firmware says what is wrong."""
        self.config = config
        with open(os.path.join(self.root, "config.json"), "w") as sink:
            json.dump(config, sink, indent=1)
        path = os.path.join(self.root, catalogue_module.CATALOGUE_FILE)
        try:
            if not self.catalogue:
                raise catalogue_module.CatalogueError("none asked for")
            catalogue_module.write(config if self.catalogue is True else self.catalogue, path)
        except catalogue_module.CatalogueError as e:
            self.say("no tool catalogue: %s" % e)
            if os.path.exists(path):
                os.remove(path)

    def command(self):
        """The command line and environment that boot the firmware once."""
        entry = [self.entry or DEVICE] if isinstance(self.entry or DEVICE, str) else list(self.entry)
        if self.runtime == "cpython":
            # -S: no site-packages, so the firmware sees only the standard library, like a
            # board sees only its own files; -u: log lines reach the log as they happen.
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([FIRMWARE, LIB, HWSIM]), PYTHONDONTWRITEBYTECODE="1")
            return [sys.executable, "-S", "-u"] + entry, env
        command = [self.micropython] + (["-X", "heapsize=%s" % self.heapsize] if self.heapsize else []) + entry
        if self.runtime == "micropython":
            return command, micropython_env([FIRMWARE, LIB, HWSIM])
        if self.runtime == "mpy":
            return command, micropython_env(["lib", STAGED_HWSIM])
        if self.runtime == "mpy-frozen-hardware":
            # The staged firmware first, then the binary's frozen modules (the simulated
            # hardware; a build with the firmware frozen too must not shadow the .mpy files).
            return command, dict(os.environ, MICROPYPATH=os.pathsep.join(["lib", ".frozen"]))
        return command, micropython_env([])  # frozen: everything in the binary

    def _boot(self):
        command, env = self.command()
        self.boots += 1
        self.say("booting firmware: %s" % " ".join(command))
        # A process group of its own: a Ctrl-C in the terminal reaches only the launcher,
        # which stops the board itself (stop()).
        self.process = subprocess.Popen(command, cwd=self.root, env=env, stdin=subprocess.DEVNULL,
                                        stdout=self.log or sys.stderr, stderr=subprocess.STDOUT,
                                        **own_process_group())

    def _watch(self):
        """Boot again after each reset, until the board is stopped or ends otherwise."""
        while True:
            code = self.process.wait()
            with self._lock:
                if self._stopping or code != self._reset_code:
                    if not self._stopping:
                        self.say("firmware exited with status %s" % code)
                    # 0: stopped on request; a kill's status (-9 on POSIX) is never 0
                    self.returncode = 0 if self._stopping and not self._killed else (code or 1)
                    self._ended.set()
                    return
                self.say("machine.reset(): restarting the firmware")
                self._boot()

    @property
    def running(self):
        return not self._ended.is_set()

    @property
    def stopping(self):
        """Whether a stop was asked (it may still be running: stop() waits for it)."""
        return self._stopping

    def wait(self, timeout=None):
        """Its exit status once it ended (see returncode), None if still running after
        `timeout` seconds."""
        self._ended.wait(timeout)
        return self.returncode

    def stop(self, wait=True):
        """Ctrl-C, as a user stops a board (the firmware's KeyboardInterrupt: the simulated
        flash and the boot's record are saved); killed if it has not ended within
        STOP_GRACE_S after a second Ctrl-C, pressed if it is still running STOP_AGAIN_S
        after the first. Returns its exit status: 0 when it stopped on request, the kill's
        status when it did not (-9 on POSIX: a caller asserting 0 learns that the firmware
        ignored its Ctrl-C), else what it ended with before. `wait=False` only asks (from a
        signal handler)."""
        if wait and self.running and not self._stopping:
            # A moment for a board that has just answered to reach its idle wait: the unix
            # port raises Ctrl-C wherever the interpreter is, and one that lands inside the
            # event loop's own bookkeeping ends the firmware without its clean stop (no
            # record of the boot). A board's Ctrl-C waits for a safe point.
            time.sleep(STOP_SETTLE_S)
        with self._lock:
            if self.running and not self._stopping:
                self._stopping = True
                try:
                    interrupt(self.process)
                except OSError:
                    pass  # ended meanwhile: _watch says how
        if wait and not self._ended.wait(STOP_AGAIN_S):
            self.say("still running %s s after Ctrl-C: Ctrl-C again" % STOP_AGAIN_S)
            try:
                interrupt(self.process)
            except OSError:
                pass
        if wait and not self._ended.wait(STOP_GRACE_S):
            self.say("still running %s s after Ctrl-C: killed (this boot is not recorded)" % STOP_GRACE_S)
            with self._lock:
                self._killed = True
            self.process.kill()
            self._ended.wait()
        return self.returncode

    def close(self):
        """Stop it, and remove its folder if it is a temporary one."""
        self.stop()
        if self._temporary:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self if self.process else self.start()

    def __exit__(self, *exc):
        self.close()

    # -- talking to it

    async def ready(self, backend, accept=None, timeout=READY_TIMEOUT):
        """The first device `backend` (tools.backend.Backend) has onboarded (of those
        accept(device) takes); BoardFailed if the board ends first or none is in time."""
        waiting = asyncio.ensure_future(backend.wait_ready(timeout, accept))
        try:
            while not waiting.done():
                if not self.running:
                    raise BoardFailed("the simulated board exited with status %s" % self.returncode)
                await asyncio.wait([waiting], timeout=POLL_S)
            if waiting.exception() is not None:
                raise BoardFailed("the device did not finish onboarding within %d s" % timeout)
            return waiting.result()
        finally:
            waiting.cancel()

    def set_inputs(self, inputs):
        """What its input pins, ADCs and sensors read from now on (write_inputs)."""
        write_inputs(self.root, inputs)

    def records(self):
        """What the drivers did, one entry per finished boot (tools/sim/device.py's line);
        [] before any boot has finished (or when the only one was killed)."""
        try:
            with open(os.path.join(self.root, RECORD_FILE)) as source:
                return [json.loads(line) for line in source]
        except FileNotFoundError:
            return []

    def settings(self):
        """The board's saved settings (settings.json)."""
        with open(os.path.join(self.root, SETTINGS_FILE)) as source:
            return json.load(source)
