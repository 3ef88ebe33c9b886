"""A board on a pty for `bridge --serial` tests that need no MicroPython: the unchanged
firmware's serial session (umcpfw.mcpserial.run(), under CPython on the simulated hardware)
behind the few REPL steps the bridge takes (tools/hub/serialboard.py): Ctrl-C, Ctrl-A (the
raw REPL's banner and prompt), Ctrl-D at an empty raw prompt (a soft reset), code ended by
Ctrl-D run and answered as MicroPython's raw REPL answers it ("OK", its output, EOT, its
errors, EOT, ">"), Ctrl-B (the friendly REPL). The code `from umcpfw.mcpserial import run`
then `run()` starts the firmware in a child process, its stdin and stdout the line, until
Ctrl-C ends it as a board's KeyboardInterrupt does. Other code is run here with lib/ on
sys.path (the bridge's probe asks for umcp's version).

What it is not: MicroPython (the probe says CPython's version), a real raw REPL (no raw
paste, no flow control), or a board's main.py (nothing runs between sessions). The real
MicroPython on a serial line is the lead's tools/sim/ptyboard.py.

    with SerialFake(tmp_path, config) as board:   # config.json for the board's folder
        board.pty                                 # the port to give --serial
    SerialFake(..., start_delay=12)               # the firmware starts 12 s after run()

Run as a script (what SerialFake starts): python serialfake.py FOLDER START_DELAY; it prints
the pty's name on its first line."""

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
import time
import traceback
import tty

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LIB = os.path.join(ROOT, "lib")
FIRMWARE = os.path.join(ROOT, "firmware")
HWSIM = os.path.join(ROOT, "tools", "sim", "hwsim")
RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n>"
START = b"from umcpfw.mcpserial import run\nrun()\n"
EOT, CTRL_A, CTRL_B, CTRL_C = b"\x04", b"\x01", b"\x02", b"\x03"


class SerialFake:
    """The board (this file run as a script) in a folder of its own under `base`."""

    def __init__(self, base, config, start_delay=0.0):
        self.folder = os.path.join(str(base), "serial-board")
        os.makedirs(self.folder, exist_ok=True)
        with open(os.path.join(self.folder, "config.json"), "w") as sink:
            json.dump(config, sink)
        self.start_delay = start_delay
        self.process = None
        self.pty = None

    def __enter__(self):
        self.process = subprocess.Popen([sys.executable, __file__, self.folder, str(self.start_delay)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=open(os.path.join(self.folder, "board.log"), "w"), text=True)
        self.pty = self.process.stdout.readline().strip()
        assert self.pty.startswith("/dev/"), "the serial board did not start: " + self.log()
        return self

    def log(self):
        with open(os.path.join(self.folder, "board.log")) as source:
            return source.read()

    def __exit__(self, *exc):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Board:
    """The board's side of the pty: the REPL's states and the firmware's session."""

    def __init__(self, master, folder, start_delay):
        self.master = master
        self.folder = folder
        self.start_delay = start_delay
        self.raw = False
        self.code = bytearray()
        self.program = None  # the firmware's process while its session runs
        self.copier = None

    def write(self, data):
        os.write(self.master, data)

    def feed(self, data):
        for byte in data:
            self.byte(bytes((byte,)))

    def byte(self, b):
        if self.program is not None:
            if b == CTRL_C:
                self.stop_program()
                self.write(EOT + b"Traceback (most recent call last):\r\nKeyboardInterrupt: \r\n" + EOT + b">")
            else:
                try:
                    self.program.stdin.write(b)
                    self.program.stdin.flush()
                except (BrokenPipeError, ValueError):
                    pass
            return
        if b == CTRL_A:
            self.raw, self.code = True, bytearray()
            self.write(b"\r\n" + RAW_BANNER)
        elif b == CTRL_B:
            self.raw, self.code = False, bytearray()
            self.write(b"\r\nfake board (CPython)\r\n>>> ")
        elif b == CTRL_C:
            self.code = bytearray()
            self.write(b"\r\n" + (b">" if self.raw else b">>> "))
        elif b == EOT:
            if not self.raw or not self.code:  # a soft reset
                self.write(b"MPY: soft reboot\r\n" + (RAW_BANNER if self.raw else b">>> "))
                self.code = bytearray()
            else:
                code, self.code = bytes(self.code), bytearray()
                self.run(code)
        elif self.raw:
            self.code += b

    def run(self, code):
        self.write(b"OK")
        if code.replace(b"\r", b"") == START:
            self.start_program()
            return
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(code.decode(), "<stdin>", "exec"), {"__name__": "__main__"})
            except Exception:
                err.write(traceback.format_exc())
        self.write(out.getvalue().replace("\n", "\r\n").encode() + EOT + err.getvalue().encode() + EOT + b">")

    def start_program(self):
        if self.start_delay:
            time.sleep(self.start_delay)  # a firmware slow to start: nothing read meanwhile
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(["", FIRMWARE, LIB, HWSIM]))
        self.program = subprocess.Popen([sys.executable, "-c", START.decode()], cwd=self.folder, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr)
        self.copier = threading.Thread(target=self.copy_output, args=(self.program,), daemon=True)
        self.copier.start()

    def copy_output(self, program):
        while True:
            data = program.stdout.read1(4096)
            if not data:
                break
            self.write(data)
        if program.wait() is not None and self.program is program:  # it ended by itself
            self.program = None
            self.write(EOT + EOT + b">")

    def stop_program(self):
        program, self.program = self.program, None
        program.kill()
        program.wait()
        self.copier.join(5)


def main(folder, start_delay):
    master, slave = os.openpty()
    tty.setraw(slave)
    print(os.ttyname(slave), flush=True)
    board = Board(master, folder, start_delay)
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # no one holds the port now: wait for the next to open it
            time.sleep(0.05)
            continue
        board.feed(data)


if __name__ == "__main__":
    sys.path.append(LIB)  # the probe's `from umcp import __version__`
    main(sys.argv[1], float(sys.argv[2]))
