"""python3 -m tools.sim: run the unchanged firmware on the simulated host board.

The firmware runs in a child process (CPython, or a MicroPython unix-port binary with
--micropython) started through tools/sim/device.py, whose working directory is the state
directory: config.json, the device's settings and the simulated flash live there and
survive restarts. With --mpy (and --micropython) the firmware runs from the .mpy files
`make deploy` copies to a board, staged for the host board by tools.board.deploy.stage into
a temporary folder. The simulated machine.reset() ends the child with hwsim's reset exit code
and the simulator starts the firmware again, as a board would boot again. Standard library
only.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from ..mpy import micropython_env
from ..paths import FIRMWARE, HWSIM, LIB, ROOT

LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "device.py")
# sys.path of the device (the launcher drops its own folder from the front).
DEVICE_PATH = [FIRMWARE, LIB, HWSIM]
STOP_GRACE_S = 3
POLL_S = 0.2


def reset_exit_code():
    """The exit status hwsim's machine.reset() ends the process with."""
    sys.path.insert(0, HWSIM)
    try:
        import machine  # the simulation, not a real board's module
    finally:
        sys.path.pop(0)
    return machine.RESET_EXIT_CODE


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m tools.sim", description=__doc__.split("\n")[0])
    p.add_argument("--url", help="xiaozhi WebSocket URL (ws:// or wss://)")
    p.add_argument("--token", help="access token sent as Authorization: Bearer")
    p.add_argument("--ota-url", help="the OTA server to ask where to connect (then --url and "
                   "--token are not needed: config.json holds only Wi-Fi and this URL)")
    p.add_argument("--mcp-endpoint", action="append", metavar="URL",
                   help="an MCP endpoint of a xiaozhi agent to serve the tools at, ws:// or wss:// with its "
                   "?token=...; repeat it for several agents; with or without --url")
    p.add_argument("--device-id", help="Device-Id to send instead of the simulated MAC")
    p.add_argument("--state-dir", help="where config.json and settings live (default: a temporary "
                   "dir, removed on exit)")
    p.add_argument("--max-payload", type=int, help="tools/list frame limit in bytes")
    p.add_argument("--micropython", metavar="BIN", help="run under this MicroPython unix port")
    p.add_argument("--heapsize", help="MicroPython heap size, e.g. 512k (with --micropython)")
    p.add_argument("--mpy", action="store_true",
                   help="run the .mpy files make deploy copies to a board (with --micropython)")
    p.add_argument("--frozen-hardware", action="store_true",
                   help="with --mpy: take the simulated hardware frozen in the --micropython binary "
                   "(a unix port built with tools/bench/unix_hwsim_manifest.py) instead of compiling "
                   "it beside the firmware: the heap then holds what a board's does")
    p.add_argument("--board", default="host", help="board module (default: host)")
    p.add_argument("--ca", help="CA certificate file for wss:// (PEM)")
    p.add_argument("--mcp-http", type=int, metavar="PORT",
                   help="also serve MCP over HTTP at http://127.0.0.1:PORT/mcp (config.json's "
                   "mcp_http, bound to loopback here)")
    p.add_argument("--mcp-http-token", metavar="TOKEN",
                   help="the Bearer token the HTTP endpoint wants (default: a random one, printed)")
    p.add_argument("--extra-config", default="{}", metavar="JSON",
                   help="JSON object merged into config.json (e.g. reconnect timings; \"parts\" "
                   "with --board generic)")
    p.add_argument("--app", metavar="PATH", help="a maker's module (a .py file, or a package's "
                   "folder): copied into the state dir as app.py (app/), as make deploy APP= does")
    args = p.parse_args(argv)
    if args.heapsize and not args.micropython:
        p.error("--heapsize needs --micropython")
    if args.mpy and not args.micropython:
        p.error("--mpy needs --micropython (CPython does not load .mpy files)")
    if args.frozen_hardware and not args.mpy:
        p.error("--frozen-hardware needs --mpy")
    if args.micropython:
        # The firmware runs with the state dir as its working directory: resolve the
        # binary here (a relative path or a name on PATH).
        found = shutil.which(args.micropython)
        if found is None:
            p.error("--micropython: %s is not an executable" % args.micropython)
        args.micropython = os.path.abspath(found)
        if args.frozen_hardware and not has_frozen_hardware(args.micropython):
            p.error("--frozen-hardware: %s has no simulated hardware frozen in (build a unix port with "
                    "tools/bench/unix_hwsim_manifest.py: docs/benchmarks.md)" % args.micropython)
    if args.app and not (os.path.isfile(args.app) and args.app.endswith(".py")
                         or os.path.isfile(os.path.join(args.app, "__init__.py"))):
        p.error("--app: %s is neither a .py file nor a package's folder" % args.app)
    try:
        args.extra_config = json.loads(args.extra_config)
    except ValueError as e:
        p.error("--extra-config: %s" % e)
    if not isinstance(args.extra_config, dict):
        p.error("--extra-config must be a JSON object")
    if not (args.ota_url or (args.url and args.token) or args.mcp_endpoint or args.mcp_http
            or "mcp_http" in args.extra_config):
        p.error("give --url and --token, or --ota-url, or --mcp-endpoint, or --mcp-http")
    if args.mcp_http_token and not args.mcp_http:
        p.error("--mcp-http-token needs --mcp-http")
    if args.mcp_http and not args.mcp_http_token:
        import secrets

        args.mcp_http_token = secrets.token_hex(8)
    return args


def has_frozen_hardware(micropython):
    """Whether the unix port `micropython` has tools/sim/hwsim frozen in."""
    try:
        done = subprocess.run([micropython, "-c", "import machine\nmachine.sim_attach_i2c"],
                              env=micropython_env([]), capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def device_config(args):
    """What a user would put in config.json before deploying, for the host board."""
    config = {"wifi": {"ssid": "simnet", "password": ""}, "board": args.board}
    if args.ota_url:
        config["ota_url"] = args.ota_url
    if args.url:
        config["url"] = args.url
    if args.token:
        config["token"] = args.token
    if args.mcp_endpoint:
        endpoints = args.mcp_endpoint
        config["mcp_endpoint"] = endpoints[0] if len(endpoints) == 1 else endpoints
    if args.device_id:
        config["device_id"] = args.device_id
    if args.max_payload:
        config["max_payload"] = args.max_payload
    if args.ca:
        with open(args.ca) as f:
            config["ca"] = f.read()
    if args.mcp_http:
        config["mcp_http"] = {"port": args.mcp_http, "token": args.mcp_http_token, "bind": "127.0.0.1"}
    config.update(args.extra_config)
    return config


STAGED_HWSIM = "hwsim-mpy"  # in a folder of staged .mpy files: the simulated hardware's (not
# a name Python could import: the folder would shadow the module hwsim)


def place_app(app, state_dir):
    """The maker's module into the state dir (the board's /) as app.py or app/, replacing
    what was there; nothing when `app` is None."""
    if app is None:
        return
    for old in ("app.py", "app"):
        target = os.path.join(state_dir, old)
        if os.path.isdir(target):
            shutil.rmtree(target)
        elif os.path.exists(target):
            os.remove(target)
    if os.path.isdir(app):
        shutil.copytree(app, os.path.join(state_dir, "app"),
                        ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copyfile(app, os.path.join(state_dir, "app.py"))


def compile_hwsim(out_dir):
    """tools/hwsim compiled into `out_dir` as make deploy compiles the firmware: beside
    the .mpy firmware the simulated hardware is not compiled from source on the heap
    either (a board has it in C). Returns `out_dir`; raises deploy.DeployError."""
    from ..board import deploy

    os.makedirs(out_dir, exist_ok=True)
    for name in sorted(os.listdir(HWSIM)):
        if name.endswith(".py"):
            deploy.compile_mpy(os.path.join(HWSIM, name), os.path.join(out_dir, name[:-3] + ".mpy"), name[:-3])
    return out_dir


def stage_mpy(args, stage_dir):
    """The board's files as make deploy stages them (.mpy under lib/, main.py at /) in
    `stage_dir`, the simulated hardware compiled beside them (hwsim/); returns the
    device's sys.path over them. Exits with a message on failure."""
    from ..board import deploy

    try:
        config = device_config(args)  # its "board" (--extra-config may name one) is staged
        deploy.stage(ROOT, config["board"], stage_dir, config, deploy.mpy_cross_command(),
                     lambda line: None)
        if getattr(args, "frozen_hardware", False):
            return [stage_dir, os.path.join(stage_dir, "lib")]  # hwsim from the binary's .frozen
        hwsim = compile_hwsim(os.path.join(stage_dir, STAGED_HWSIM))
    except deploy.DeployError as e:
        sys.exit("tools.sim: cannot stage the .mpy files: %s" % e)
    return [stage_dir, os.path.join(stage_dir, "lib"), hwsim]


def firmware_command(args, device_path=DEVICE_PATH):
    """Command line and environment that boot the firmware with the device's sys.path."""
    if args.micropython:
        cmd = [args.micropython]
        if args.heapsize:
            cmd += ["-X", "heapsize=" + args.heapsize]
        if getattr(args, "frozen_hardware", False):
            # The staged firmware first, then the binary's frozen modules (the simulated
            # hardware; a build with the firmware frozen too must not shadow the .mpy files).
            return cmd + [LAUNCHER], dict(os.environ, MICROPYPATH=os.pathsep.join(list(device_path) + [".frozen"]))
        return cmd + [LAUNCHER], micropython_env(device_path)
    # -S: no site-packages, so the firmware sees only the standard library, like a board
    # sees only its own files; -u: log lines reach stderr as they happen.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(DEVICE_PATH), PYTHONDONTWRITEBYTECODE="1")
    return [sys.executable, "-S", "-u", LAUNCHER], env


def own_process_group():
    """Popen's arguments that start a child in a process group of its own: a Ctrl-C in the
    terminal reaches only this process, which stops the child itself (interrupt)."""
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def interrupt(process):
    """Ask a child started with own_process_group() to stop as Ctrl-C would: SIGINT, or on
    Windows Ctrl-Break (tools/sim/device.py and this launcher take it as SIGINT)."""
    process.send_signal(signal.CTRL_BREAK_EVENT if os.name == "nt" else signal.SIGINT)


def log(msg):
    sys.stderr.write("[sim] %s\n" % msg)
    sys.stderr.flush()


class Simulator:
    def __init__(self, args):
        self.args = args
        self.child = None
        self.stopping = False

    def stop(self, signum, frame):
        if self.stopping:
            return  # one interrupt is enough: a second would cut the child's clean-up short
        self.stopping = True
        if self.child and self.child.poll() is None:
            # KeyboardInterrupt in the firmware: the launcher saves the simulated flash.
            interrupt(self.child)

    def run(self):
        # SIGHUP too: a closed terminal must stop the board as Ctrl-C does (it runs in a
        # session of its own, which the hang-up does not reach: it would run on, orphaned).
        # SIGBREAK: Windows' Ctrl-Break, how tools.sim.demo stops this process there.
        for signum in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None),
                       getattr(signal, "SIGBREAK", None)):
            if signum is not None:
                signal.signal(signum, self.stop)
        if not self.args.mpy:
            return self.run_in(DEVICE_PATH)
        with tempfile.TemporaryDirectory(prefix="umcp-sim-mpy-") as stage_dir:
            device_path = stage_mpy(self.args, stage_dir)
            log("running the .mpy files make deploy would copy, staged in %s" % stage_dir)
            return self.run_in(device_path)

    def run_in(self, device_path):
        if self.args.state_dir:
            return self.boot(self.args.state_dir, device_path)
        with tempfile.TemporaryDirectory(prefix="umcp-sim-") as state_dir:
            return self.boot(state_dir, device_path)

    def boot(self, state_dir, device_path=DEVICE_PATH):
        """Boot the firmware in `state_dir` until stopped; again after each machine.reset()."""
        args = self.args
        os.makedirs(state_dir, exist_ok=True)
        with open(os.path.join(state_dir, "config.json"), "w") as f:
            json.dump(device_config(args), f, indent=1)
        place_app(args.app, state_dir)
        cmd, env = firmware_command(args, device_path)
        reset_code = reset_exit_code()
        log("state dir %s" % state_dir)
        if args.mcp_http:
            log("MCP endpoint http://127.0.0.1:%d/mcp, header Authorization: Bearer %s"
                % (args.mcp_http, args.mcp_http_token))
        while not self.stopping:
            log("booting firmware: %s" % " ".join(cmd))
            # Own session: a Ctrl-C reaches only the simulator, which stops the child.
            self.child = subprocess.Popen(cmd, cwd=state_dir, env=env, stdin=subprocess.DEVNULL,
                                          stdout=sys.stderr, **own_process_group())
            rc = self._wait()
            if self.stopping:
                break
            if rc != reset_code:
                log("firmware exited with status %s" % rc)
                return rc or 1
            log("machine.reset(): restarting the firmware")
        return 0

    def _wait(self):
        """The child's exit status; a child that ignores SIGINT is killed after a grace."""
        waited_stopping = 0.0
        while True:
            try:
                return self.child.wait(POLL_S)
            except subprocess.TimeoutExpired:
                if self.stopping:
                    waited_stopping += POLL_S
                    if waited_stopping >= STOP_GRACE_S:
                        self.child.kill()


def main(argv=None):
    return Simulator(parse_args(argv)).run()


if __name__ == "__main__":
    sys.exit(main())
