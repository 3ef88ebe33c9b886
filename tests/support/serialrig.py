"""The serial-line boards of the tests: tools.sim.ptyboard's PtyBoard (the MicroPython
unix port behind a pty, with a raw REPL, soft and hard resets, boot.py and main.py, ROMFS
and the simulated hardware) that mpremote, deploy and `bridge --serial` drive as they
drive an ESP32 on /dev/ttyUSB0.

Checkout(folder, config): a copy of what `make deploy` needs, with config.json at its root,
as a maker's clone has it. Maker(folder, config, installed): a folder that is not a clone,
with config.json, where the installed `umcp` runs (pip's copy). SerialRig: the boards the
tests share (the `serial_rig` fixture), prepared at once.
"""

import json
import os
import shutil
import subprocess
import threading
import time

from tests.support import ROOT
from tools.sim.ptyboard import PtyBoard


class Console:
    """A board's pty opened as a terminal: write() keys, read_until() what it prints."""

    def __init__(self, pty):
        import serial

        self.port = serial.Serial(pty, 115200, timeout=0.1, exclusive=True)
        self.seen = b""

    def write(self, data):
        self.port.write(data)

    def read_until(self, text, timeout=15):
        """What the board printed up to and including `text` (bytes), within `timeout`."""
        deadline = time.monotonic() + timeout
        while text not in self.seen:
            if time.monotonic() > deadline:
                raise AssertionError("the board did not print %r within %s s; it printed:\n%s"
                                     % (text, timeout, self.seen.decode("utf-8", "replace")))
            self.seen += self.port.read(self.port.in_waiting or 1)
        at = self.seen.index(text) + len(text)
        data, self.seen = self.seen[:at], self.seen[at:]
        return data

    def read_for(self, seconds):
        """Everything the board prints within `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.seen += self.port.read(self.port.in_waiting or 1)
        data, self.seen = self.seen, b""
        return data

    def close(self):
        self.port.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def console(board):
    """The board's REPL as a terminal has it (make repl): a Console on its pty."""
    return Console(board.pty)


class Checkout:
    """What `make deploy` needs of the repository, copied into `folder` (the venv linked,
    not copied), with `config` as its config.json: a maker's clone. deploy(...) runs the
    real `make deploy` there."""

    def __init__(self, folder, config):
        self.root = str(folder)
        os.makedirs(self.root, exist_ok=True)
        ignore = shutil.ignore_patterns("__pycache__")
        for name in ("lib", "firmware", "tools"):
            shutil.copytree(os.path.join(ROOT, name), os.path.join(self.root, name), ignore=ignore)
        for name in ("Makefile", "requirements.txt"):
            shutil.copy2(os.path.join(ROOT, name), os.path.join(self.root, name))
        os.symlink(os.path.join(ROOT, ".venv"), os.path.join(self.root, ".venv"))
        self.write_config(config)

    def write_config(self, config):
        with open(os.path.join(self.root, "config.json"), "w") as f:
            json.dump(config, f)

    def deploy(self, port, *variables, nice=10, timeout=300):
        """`make deploy PORT=port VARIABLES...` in the checkout, at niceness `nice` (prepared
        in the background: the CPU goes to the tests first): (status, its output)."""
        # -o: the linked venv is the test run's own, set up already (never installed again here).
        done = subprocess.run(["nice", "-n", str(nice), "make", "--no-print-directory", "-o", ".venv/.installed",
                               "deploy", "PORT=" + port, *variables],
                              cwd=self.root, capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout + done.stderr


class Maker:
    """A maker's folder that is not a clone, with `config` as its config.json, where the
    installed `umcp` (tests/support/wheelinstall.py's) runs."""

    def __init__(self, folder, config, installed):
        self.root = str(folder)
        self.installed = installed
        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, "config.json"), "w") as f:
            json.dump(config, f)

    def umcp(self, *args, nice=10, timeout=300):
        """`umcp ARGS...` in the folder, at niceness `nice`: (status, its output)."""
        done = subprocess.run(["nice", "-n", str(nice), self.installed.umcp, *args], cwd=self.root,
                              env=self.installed.env, capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout + done.stderr


# The config.json of the deployed boards: a Wi-Fi the simulated radio joins and a server
# that is not there (a closed port on loopback), as a board whose server is down; the
# Wi-Fi setup never opens; list pages of at most 1500 bytes, so that a client's tools/list
# takes several.
CONFIG = {"board": "generic", "wifi": {"ssid": "bench-net", "password": "not-a-real-one"},
          "url": "ws://127.0.0.1:9/xiaozhi/v1/", "token": "serial-token",
          "wifi_setup_after": None, "max_payload": 1500}
# What the firmware prints once main.py started it on such a board: its link cannot connect.
RUNNING = b"xiaozhi link lost"
MAKER_APP = os.path.join(ROOT, "tests", "support", "makerapp.py")


class Prepared:
    """A board and what its preparation recorded (`record`: name -> value)."""

    def __init__(self, board):
        self.board = board
        self.record = {}
        self.error = None
        self.thread = None


class SerialRig:
    """The serial-line boards the tests share, each prepared on a thread of its own as soon
    as the first test asks for the rig (they run at once; a test waits only for its own):

      blank   a board as it comes, on an image without the camera module: the installed
              `umcp deploy --board esp32s3_cam` refused on it ("deploy"), what its
              filesystem holds then ("files"); then mpremote's mip installs the MCP core
              from lib/umcp/package.json served on loopback ("mip"), and the core answers a
              tools/call on the board ("core")
      plain   `make deploy BOARD=generic` from a clone ("checkout", "deploy", "seconds")
      romfs   the installed `umcp deploy --board generic --romfs --app makerapp.py` from a
              maker's folder ("deploy", "seconds"): the bridge's board
      spare   the same firmware as romfs (its ROMFS image, main.py, config.json, the
              maker's module), put there with mpremote: a board a test may pull the cable of

    board(name) waits for it (raising what its preparation raised) -> Prepared.
    `installed`: a callable that returns the installed wheel (waiting for it)."""

    def __init__(self, folder, installed):
        self.folder = str(folder)
        self.installed = installed
        # Prepared in the background, niced: the tests that run meanwhile come first.
        self.boards = {name: Prepared(PtyBoard(os.path.join(self.folder, name), name, nice=10,
                                               without=("camera",) if name == "blank" else ()))
                       for name in ("blank", "plain", "romfs", "spare")}
        self.makers = {}
        self._http = None

    def start(self):
        for name, prepare, after in (("blank", self._blank, None), ("plain", self._plain, None),
                                     ("romfs", self._romfs, None), ("spare", self._spare, "romfs")):
            prepared = self.boards[name]
            prepared.thread = threading.Thread(target=self._prepare, args=(prepared, prepare, after),
                                               name="serial board " + name, daemon=True)
            prepared.thread.start()
        return self

    def board(self, name, timeout=600):
        prepared = self.boards[name]
        prepared.thread.join(timeout)
        if prepared.thread.is_alive():
            raise AssertionError("the %s serial board was not ready within %d s" % (name, timeout))
        if prepared.error is not None:
            raise AssertionError("preparing the %s serial board failed: %r" % (name, prepared.error))
        return prepared

    def stop(self):
        for prepared in self.boards.values():
            if prepared.thread is not None:
                prepared.thread.join(300)
            prepared.board.stop()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()

    def _prepare(self, prepared, prepare, after):
        try:
            if after is not None:
                self.board(after)
            started = time.monotonic()
            prepared.board.start()
            prepare(prepared)
            prepared.record["ready_after"] = time.monotonic() - started
        except BaseException as e:  # kept for the test that asks for this board
            prepared.error = e

    def maker(self, name, **config):
        maker = self.makers[name] = Maker(os.path.join(self.folder, name + "-maker"), dict(CONFIG, **config),
                                          self.installed())
        return maker

    def _blank(self, prepared):
        board = prepared.board
        prepared.record["deploy"] = self.maker("blank", board="esp32s3_cam").umcp("deploy", "--port", board.pty, "--board", "esp32s3_cam")
        prepared.record["files"] = board.mpremote("fs", "ls", ":")
        url = self._served() + "/lib/umcp/package.json"
        prepared.record["mip"] = board.mpremote("mip", "install", url, timeout=300)
        prepared.record["core"] = board.mpremote("exec", CORE_CALL)

    def _plain(self, prepared):
        board = prepared.board
        checkout = prepared.record["checkout"] = Checkout(os.path.join(self.folder, "plain-checkout"), CONFIG)
        started = time.monotonic()
        prepared.record["deploy"] = checkout.deploy(board.pty, "BOARD=generic")
        self._booted(prepared, started)

    def _romfs(self, prepared):
        board = prepared.board
        started = time.monotonic()
        prepared.record["deploy"] = self.maker("romfs").umcp(
            "deploy", "--port", board.pty, "--board", "generic", "--romfs", "--app", MAKER_APP)
        self._booted(prepared, started)

    def _booted(self, prepared, started):
        """"seconds" the deploy took, and what the board printed after deploy's reset, up to
        the firmware's first try of its server ("boot")."""
        prepared.record["seconds"] = time.monotonic() - started
        if prepared.record["deploy"][0] == 0:
            with console(prepared.board) as terminal:
                prepared.record["boot"] = terminal.read_until(RUNNING, 30)

    def _spare(self, prepared):
        board = prepared.board
        stage = self._romfs_stage()
        board.mpremote("romfs", "deploy", stage + ".romfs", "+", "fs", "cp",
                       *[os.path.join(stage, name) for name in ("main.py", "config.json", "app.py")], ":",
                       "+", "reset")
        time.sleep(0.5)  # mpremote's reset returns before the board has reset

    def flashed(self, folder, name, app=None):
        """A new PtyBoard (not started) whose flash holds the plain board's firmware as its
        deploy staged it, and `app` (a file) as the maker's module."""
        self.board("plain")
        flash = os.path.join(str(folder), name)
        shutil.copytree(os.path.join(self.folder, "plain-checkout", "build", "deploy", "generic"), flash)
        if app is not None:
            shutil.copyfile(app, os.path.join(flash, "app.py"))
        return PtyBoard(flash, name)

    def _romfs_stage(self):
        """The romfs board's staged firmware, built again here as deploy builds it."""
        from tools.board import deploy

        stage = os.path.join(self.folder, "spare-stage", "generic")
        args = deploy.parse_args(["--port", "unused", "--board", "generic", "--romfs", "--app", MAKER_APP,
                                  "--config", os.path.join(self.makers["romfs"].root, "config.json"),
                                  "--build-dir", stage])
        config = deploy.check_inputs(args)
        deploy.build(args, config)
        deploy.romfs_image(args, stage)
        return stage

    def _served(self):
        """The repository over HTTP on loopback (what mip installs from): its base URL."""
        import functools
        import http.server

        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        self._http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=ROOT))
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return "http://127.0.0.1:%d" % self._http.server_address[1]


# The MCP core alone, after mip installed it (on the board, and in the unix port:
# tests/tooling/test_mip.py): a server with one tool answers a tools/call, its JSON text
# left in `sent`; CORE_CALL prints umcp's version and file, then that text.
CORE_SERVE = '''import asyncio
from umcp import INTEGER, McpServer, Property, PropertyList
from umcp.compat import join_pieces
server = McpServer("mine", "1")
server.add_tool("double", "Twice a number.", PropertyList([Property("n", INTEGER)]), lambda a: a["n"] * 2)
sent = []
server.set_sender(lambda pieces: sent.append(join_pieces(pieces)))
async def main():
    await server.handle('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"double","arguments":{"n":21}}}')
    while not sent:
        await asyncio.sleep(0)
asyncio.run(main())
'''
CORE_CALL = CORE_SERVE + '''import umcp
print("umcp", umcp.__version__, umcp.__file__)
print(sent[0])
'''
