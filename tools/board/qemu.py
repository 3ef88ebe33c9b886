"""The QEMU board: a bare-metal MicroPython 1.29 on QEMU's mps2-an385 (Cortex-M3), booting
as the esp32 port does, its REPL on a pty that mpremote, make deploy and the bridge drive
as they drive an ESP32 on /dev/ttyUSB0 (what it has and lacks, no network and no
machine.Pin among the latter: its README.md). The tests (tests/support/qemu.py) and make
bench (tools/bench/serial.py) run it.

It is built outside the repository from third-party source and never copied in: locate()
finds it in $UMCP_QEMU_DIR, else ../shared/micropython/qemu beside the clone's folder, else
/work/shared/micropython/qemu (firmware.elf and run.sh), and raises QemuMissing saying
what to install when it, or qemu-system-arm, is not there.

QemuBoard(folder, name): start() -> its pty, stop(); each board has its own pid file and
log in `folder`, so several run at once. mpremote(...) runs the real mpremote on it;
console() opens its pty as a terminal does (make repl)."""

import os
import shutil
import subprocess
import sys
import time

import serial

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")


class QemuMissing(Exception):
    """No QEMU board here: the message says what to install."""


STANDINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qemustandins")
# What an ESP32 has and the QEMU board lacks: stand-ins put in its /lib under these names.
STANDIN_MODULES = ("network", "esp32", "socket", "ssl")


def standins():
    """{path on the board: the stand-in's file} for network, esp32, socket and ssl (a Wi-Fi
    that is never found, sockets that fail): what make deploy checks a board for."""
    return dict(("lib/%s.py" % name, os.path.join(STANDINS, name + ".py")) for name in STANDIN_MODULES)


def locate():
    """The folder of firmware.elf and run.sh; QemuMissing saying what to install when it
    or qemu-system-arm is missing."""
    candidates = [os.environ.get("UMCP_QEMU_DIR"),
                  os.path.join(os.path.dirname(ROOT), "shared", "micropython", "qemu"),
                  "/work/shared/micropython/qemu"]
    found = next((c for c in candidates if c and os.path.isfile(os.path.join(c, "firmware.elf"))
                  and os.path.isfile(os.path.join(c, "run.sh"))), None)
    if found is None:
        raise QemuMissing("the QEMU board (firmware.elf and run.sh, built from MicroPython's source as "
                    "its README says) is not in UMCP_QEMU_DIR, ../shared/micropython/qemu or "
                    "/work/shared/micropython/qemu: put it there or set UMCP_QEMU_DIR")
    if shutil.which("qemu-system-arm") is None:
        raise QemuMissing("qemu-system-arm is missing: install it (Debian/Ubuntu: apt-get install "
                    "qemu-system-arm; .ci/run does)")
    return found


class QemuBoard:
    """One QEMU board, its pid file and QEMU's log in `folder`. `nice`: the niceness QEMU
    and mpremote run at (a board prepared in the background leaves the CPU to the rest)."""

    def __init__(self, folder, name="board", nice=0):
        self.folder = str(folder)
        self.name = name
        self.niced = ["nice", "-n", str(nice)] if nice and shutil.which("nice") else []
        self.pty = None
        self.env = dict(os.environ, QEMU_PIDFILE=os.path.join(self.folder, name + ".pid"),
                        QEMU_LOG=os.path.join(self.folder, name + ".qemu.log"))

    def start(self):
        """Power on (a blank board: a fresh filesystem, only boot.py): its pty."""
        run_sh = os.path.join(locate(), "run.sh")
        self.pty = subprocess.run(self.niced + [run_sh], env=self.env, capture_output=True, text=True,
                                  check=True, timeout=30).stdout.strip()
        return self.pty

    def stop(self):
        """Power off (run.sh stops only the QEMU its pid file names)."""
        if self.pty is not None:
            subprocess.run([os.path.join(locate(), "run.sh"), "stop"], env=self.env,
                           capture_output=True, timeout=30)

    @property
    def running(self):
        pidfile = self.env["QEMU_PIDFILE"]
        if not os.path.exists(pidfile):
            return False
        with open(pidfile) as f:
            return os.path.exists("/proc/%s" % f.read().strip())

    def mpremote(self, *args, timeout=120, check=True):
        """The real mpremote on this board: `mpremote connect PTY ARGS...` -> its output."""
        done = subprocess.run(self.niced + [MPREMOTE, "connect", self.pty, *args], capture_output=True, text=True,
                              timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError("mpremote %s: status %d\n%s%s" % (" ".join(args), done.returncode,
                                                                   done.stdout, done.stderr))
        return done.stdout

    def put(self, files, folders=()):
        """`files` ({path on the board: local path}) copied in one mpremote call, `folders`
        on the board made first."""
        args = []
        for folder in folders:
            args += ["+", "fs", "mkdir", ":" + folder]
        for target, source in files.items():
            args += ["+", "fs", "cp", source, ":" + target]
        self.mpremote(*args[1:])

    def console(self):
        """The board's REPL as a terminal has it (make repl): a Console on its pty."""
        return Console(self.pty)


class Console:
    """The board's pty opened as a terminal: write() keys, read_until() what it prints."""

    def __init__(self, pty):
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
