"""The QEMU board in the tests (tools/board/qemu.py: a real bare-metal MicroPython on QEMU,
its REPL on a pty, found outside the repository). Without it, or without qemu-system-arm,
the tests that use it FAIL saying what to install (never skip).

QemuBoard(folder, name) as tools.board.qemu's, with put_standins(): the stand-ins for the
four modules an ESP32 has and the QEMU board lacks (tools.board.qemu.standins()).
Checkout(folder, config): a copy of what `make deploy` needs, with config.json at its root,
as a maker's clone has it. QemuRig: the boards the tests share (the `qemu_rig` fixture),
prepared at once.
"""

import os
import shutil
import subprocess
import threading
import time

import pytest

from tests.support import ROOT
from tools.board import qemu



def qemu_dir():
    """tools.board.qemu.locate(), or pytest.fail saying what to install."""
    try:
        return qemu.locate()
    except qemu.QemuMissing as e:
        pytest.fail(str(e))


class QemuBoard(qemu.QemuBoard):
    def start(self):
        qemu_dir()  # a clear failure, not run.sh's
        return super().start()

    def put_standins(self):
        """The stand-ins into /lib, in one mpremote call."""
        self.put(qemu.standins(), folders=["lib"])


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
        import json

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


# The config.json of the deployed boards: Wi-Fi it never finds (the stand-in network
# module) and a server it never reaches, as a board out of its network's reach; the Wi-Fi
# setup never opens (it would serve a page on sockets the board lacks); list pages of at
# most 1500 bytes, so that a client's tools/list takes several.
CONFIG = {"board": "generic", "wifi": {"ssid": "qemu-net", "password": "not-a-real-one"},
          "url": "ws://192.0.2.1:8000/xiaozhi/v1/", "token": "qemu-token",
          "wifi_setup_after": None, "max_payload": 1500}
MAKER_APP = os.path.join(ROOT, "tests", "support", "makerapp.py")


class Prepared:
    """A board and what its preparation recorded (`record`: name -> value)."""

    def __init__(self, board):
        self.board = board
        self.record = {}
        self.error = None
        self.thread = None


class QemuRig:
    """The QEMU boards the tests share, each prepared on a thread of its own as soon as the
    first test asks for the rig (they run at once; a test waits only for its own):

      blank   a board as it comes: `make deploy BOARD=generic` refused on it ("deploy"),
              what its filesystem holds then ("files"); then mpremote's mip installs the MCP
              core from lib/umcp/package.json served on loopback ("mip"), and the core
              answers a tools/call on the board ("core")
      plain   the stand-ins, then `make deploy BOARD=generic` ("deploy", "seconds")
      romfs   the stand-ins, then `make deploy BOARD=generic ROMFS=1 APP=makerapp.py`
              ("deploy", "seconds"): the bridge's board
      spare   the same firmware as romfs (its ROMFS image, main.py, config.json, the
              maker's module), put there with mpremote: a board a test may pull the cable of

    board(name) waits for it (raising what its preparation raised) -> Prepared."""

    def __init__(self, folder):
        self.folder = str(folder)
        # Prepared in the background, niced: the tests that run meanwhile come first.
        self.boards = {name: Prepared(QemuBoard(folder, name, nice=10))
                       for name in ("blank", "plain", "romfs", "spare")}
        self.checkouts = {}
        self.missing = None  # why there is no QEMU board here, what to install
        self._http = None

    def start(self):
        try:
            qemu_dir()
        except pytest.fail.Exception as e:  # each test that asks for a board fails, saying so
            self.missing = str(e)
            return self
        for name, prepare, after in (("blank", self._blank, None), ("plain", self._plain, None),
                                     ("romfs", self._romfs, None), ("spare", self._spare, "romfs")):
            prepared = self.boards[name]
            prepared.thread = threading.Thread(target=self._prepare, args=(prepared, prepare, after),
                                               name="qemu " + name, daemon=True)
            prepared.thread.start()
        return self

    def board(self, name, timeout=600):
        if self.missing:
            pytest.fail(self.missing)
        prepared = self.boards[name]
        prepared.thread.join(timeout)
        if prepared.thread.is_alive():
            raise AssertionError("the %s QEMU board was not ready within %d s" % (name, timeout))
        if prepared.error is not None:
            raise AssertionError("preparing the %s QEMU board failed: %r" % (name, prepared.error))
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

    def checkout(self, name):
        checkout = self.checkouts[name] = Checkout(os.path.join(self.folder, name + "-checkout"), CONFIG)
        return checkout

    def _blank(self, prepared):
        board = prepared.board
        checkout = self.checkout("blank")
        prepared.record["deploy"] = checkout.deploy(board.pty, "BOARD=generic")
        prepared.record["files"] = board.mpremote("fs", "ls", ":")
        url = self._served() + "/lib/umcp/package.json"
        prepared.record["mip"] = board.mpremote("mip", "install", url, timeout=300)
        prepared.record["core"] = board.mpremote("exec", CORE_CALL)

    def _plain(self, prepared):
        self._deploy(prepared, "plain", "BOARD=generic")

    def _romfs(self, prepared):
        self._deploy(prepared, "romfs", "BOARD=generic", "ROMFS=1", "APP=" + MAKER_APP)

    def _deploy(self, prepared, name, *variables):
        """The stand-ins, `make deploy VARIABLES` ("deploy": status and output, "seconds"),
        and what the board printed after deploy's reset, up to the firmware's first try
        of Wi-Fi ("boot")."""
        board = prepared.board
        board.put_standins()
        started = time.monotonic()
        prepared.record["deploy"] = status, output = self.checkout(name).deploy(board.pty, *variables)
        prepared.record["seconds"] = time.monotonic() - started
        if status == 0:
            with board.console() as console:
                prepared.record["boot"] = console.read_until(b"network stand-in: WLAN.connect('qemu-net')", 30)

    def _spare(self, prepared):
        board = prepared.board
        board.put_standins()
        stage = os.path.join(self.checkouts["romfs"].root, "build", "deploy", "generic")
        board.mpremote("romfs", "deploy", stage + ".romfs", "+", "fs", "cp",
                       *[os.path.join(stage, name) for name in ("main.py", "config.json", "app.py")], ":",
                       "+", "reset")
        time.sleep(0.5)  # mpremote's reset returns before the board has reset (README)

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
